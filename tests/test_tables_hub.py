"""load_table against a loopback hub serving tiny checkpoints saved by transformers.

The real ``huggingface_hub`` client runs (``HF_ENDPOINT`` points at :mod:`hub_server`); every
registry family is checked against the model's own parameter (with its offset rows set aside) and
against the cost goal: bytes fetched ≤ 1.1 × tensor bytes + safetensors header + config (+ index).
"""

from __future__ import annotations

import itertools
import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hub_server import FakeHub, HubServer
from tables_support import ISSUE_FAMILIES

pytestmark = pytest.mark.slow

TOKEN = "hf_test_token"


@dataclass
class Checkpoint:
    """A saved tiny model and what its table must load as."""

    directory: Path
    stored: np.ndarray  # the parameter as the model holds it
    expected: np.ndarray  # rows aligned to token positions
    set_aside_rows: tuple[int, ...]
    key_suffix: str
    part: str | None = None


def _tiny_models():
    """(name, model, key suffix, leading rows set aside, part) for every registry family."""
    import transformers as tf

    small = {"num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 37}
    bert = {"vocab_size": 99, "hidden_size": 32, "max_position_embeddings": 40, **small}
    roberta = {**bert, "max_position_embeddings": 42, "pad_token_id": 1}
    bart = {"vocab_size": 99, "d_model": 32, "encoder_layers": 1, "decoder_layers": 1,
            "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 37,
            "decoder_ffn_dim": 37, "max_position_embeddings": 48}  # fmt: skip
    pos, wpe = "embeddings.position_embeddings.weight", "wpe.weight"
    # name, the transformers model class and its config (class name prefix), key suffix, rows
    # set aside, part
    table = [
        ("bert", "BertModel", "Bert", bert, pos, 0, None),
        ("distilbert", "DistilBertModel", "DistilBert", {"vocab_size": 99, "dim": 32,
         "n_layers": 1, "n_heads": 2, "hidden_dim": 37, "max_position_embeddings": 40}, pos, 0,
         None),
        ("electra", "ElectraModel", "Electra", {**bert, "embedding_size": 16}, pos, 0, None),
        ("albert", "AlbertModel", "Albert", {**bert, "embedding_size": 16}, pos, 0, None),
        ("roberta", "RobertaForMaskedLM", "Roberta", roberta, pos, 2, None),
        ("xlm-roberta", "XLMRobertaModel", "XLMRoberta", roberta, pos, 2, None),
        ("gpt2", "GPT2LMHeadModel", "GPT2", {"vocab_size": 99, "n_positions": 48, "n_embd": 32,
         "n_layer": 1, "n_head": 2}, wpe, 0, None),
        ("gpt_neo", "GPTNeoModel", "GPTNeo", {"vocab_size": 99, "max_position_embeddings": 48,
         "hidden_size": 32, "num_layers": 1, "num_heads": 2,
         "attention_types": [[["global"], 1]]}, wpe, 0, None),
        ("opt", "OPTForCausalLM", "OPT", {"vocab_size": 99, "hidden_size": 32,
         "num_hidden_layers": 1, "ffn_dim": 37, "num_attention_heads": 2,
         "max_position_embeddings": 44, "word_embed_proj_dim": 32},
         "decoder.embed_positions.weight", 2, None),
        ("bart", "BartModel", "Bart", bart, "encoder.embed_positions.weight", 2, None),
        ("bart-dec", "BartModel", "Bart", bart, "decoder.embed_positions.weight", 2, "decoder"),
        ("vit", "ViTModel", "ViT", {"image_size": 32, "patch_size": 8, "hidden_size": 32, **small},
         "embeddings.position_embeddings", 1, None),
    ]  # fmt: skip
    return [
        (name, getattr(tf, model)(getattr(tf, f"{config}Config")(**kwargs)), suffix, lead, part)
        for name, model, config, kwargs, suffix, lead, part in table
    ]


def _param(model, suffix: str) -> np.ndarray:
    from posviz.tables.registry import key_matches

    state = model.state_dict()
    keys = [k for k in state if key_matches(k, suffix)]
    assert keys, f"{type(model).__name__} has no {suffix}"
    return state[sorted(keys, key=len)[0]].detach().float().numpy().copy()


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Checkpoint]:
    import torch

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("ckpt")
    out: dict[str, Checkpoint] = {}
    for name, model, suffix, lead, part in _tiny_models():
        directory = root / name
        model.save_pretrained(directory)
        stored = _param(model, suffix)
        rows = stored[0] if stored.ndim == 3 else stored
        out[name] = Checkpoint(directory, stored, rows[lead:], tuple(range(lead)), suffix, part)
    # sharded: GPT-2 split into several files + model.safetensors.index.json
    gpt2 = _tiny_models()[6][1]
    gpt2.save_pretrained(root / "gpt2-sharded", max_shard_size="20KB")
    assert (root / "gpt2-sharded" / "model.safetensors.index.json").is_file()
    out["gpt2-sharded"] = Checkpoint(
        root / "gpt2-sharded",
        _param(gpt2, "wpe.weight"),
        _param(gpt2, "wpe.weight"),
        (),
        "wpe.weight",
    )
    # .bin only: the config plus a torch state dict (what safe_serialization=False used to write)
    bert = out["bert"]
    bin_dir = root / "bert-bin"
    bin_dir.mkdir()
    (bin_dir / "config.json").write_bytes((bert.directory / "config.json").read_bytes())
    from safetensors.torch import load_file

    torch.save(load_file(bert.directory / "model.safetensors"), bin_dir / "pytorch_model.bin")
    out["bert-bin"] = Checkpoint(bin_dir, bert.stored, bert.expected, (), bert.key_suffix)
    return out


def _config_only(directory: Path, config: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    return directory


def _safetensors_bytes(header: dict, data: bytes) -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


@pytest.fixture(scope="module")
def hub(checkpoints, tmp_path_factory):
    fake = FakeHub()
    for name, ckpt in checkpoints.items():
        fake.add_dir(f"tiny/{name}", ckpt.directory)
    fake.add_dir("tiny/private-bert", checkpoints["bert"].directory, private=True, token=TOKEN)
    fake.add_dir("tiny/gated-bert", checkpoints["bert"].directory, gated=True, token=TOKEN)
    extra = tmp_path_factory.mktemp("extra")
    for model_type in ("llama", "bloom", "t5", "marian"):
        fake.add_dir(
            f"tiny/{model_type}", _config_only(extra / model_type, {"model_type": model_type})
        )
    bert_config = json.loads((checkpoints["bert"].directory / "config.json").read_text())
    other = np.zeros((4, 4), np.float32).tobytes()
    bad_files = {
        "no-pos": _safetensors_bytes(
            {"encoder.weight": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}, other
        ),
        "huge-header": struct.pack("<Q", 2 * 1024**3) + b"{}" + other,
        "not-json": struct.pack("<Q", 6) + b"nope!!" + other,
        "wrong-shape": _safetensors_bytes(
            {
                "embeddings.position_embeddings.weight": {
                    "dtype": "F32",
                    "shape": [4, 4],
                    "data_offsets": [0, 64],
                }
            },
            other,
        ),
    }
    nan = np.full((40, 32), np.nan, np.float32).tobytes()
    bad_files["nan"] = _safetensors_bytes(
        {
            "embeddings.position_embeddings.weight": {
                "dtype": "F32",
                "shape": [40, 32],
                "data_offsets": [0, len(nan)],
            }
        },
        nan,
    )
    for name, blob in bad_files.items():
        directory = _config_only(extra / name, bert_config)
        (directory / "model.safetensors").write_bytes(blob)
        fake.add_dir(f"tiny/{name}", directory)
    with HubServer(fake) as server:
        yield server


@pytest.fixture
def hub_env(hub, monkeypatch, tmp_path):
    """A fresh HF_HOME per test, pointed at the loopback hub, no token, online."""
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in ("HF_HUB_CACHE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    hub.hub.reset()
    return hub


def _budget(ckpt: Checkpoint, fetched_files: dict[str, bytes], tensor_file: str) -> float:
    """1.1 × tensor bytes + safetensors header (8 + N) + config (+ shard index)."""
    blob = fetched_files[tensor_file]
    (n,) = struct.unpack("<Q", blob[:8])
    index = len(fetched_files.get("model.safetensors.index.json", b""))
    return 1.1 * ckpt.stored.nbytes + 8 + n + len(fetched_files["config.json"]) + index


@pytest.mark.parametrize("name", [*ISSUE_FAMILIES, "bart-dec", "gpt2-sharded"])
def test_hub_table_equals_model_parameter_within_byte_budget(hub_env, checkpoints, name):
    from posviz import load_table

    ckpt = checkpoints[name]
    table = load_table(f"tiny/{name}", part=ckpt.part)
    np.testing.assert_array_equal(table.matrix, ckpt.expected)
    assert table.matrix.dtype == np.float32
    assert table.tensor_name.endswith(ckpt.key_suffix)
    aside = tuple(r for s in table.set_aside for r in s.rows)
    assert aside == ckpt.set_aside_rows
    for s in table.set_aside:
        rows = ckpt.stored[0] if ckpt.stored.ndim == 3 else ckpt.stored
        np.testing.assert_array_equal(s.values, rows[list(s.rows)])
        assert s.reason
    repo = hub_env.hub.repos[f"tiny/{name}"]
    tensor_file = next(
        f for (rid, f) in hub_env.hub.served if rid == f"tiny/{name}" and f.endswith(".safetensors")
    )
    served = hub_env.hub.bytes_for(f"tiny/{name}")
    assert served <= _budget(ckpt, repo.files, tensor_file), (served, hub_env.hub.served)
    assert served < sum(len(b) for b in repo.files.values()) / 2  # far from the whole checkpoint
    assert table.bytes_read == served
    if name == "vit":
        assert table.grid == (4, 4) and table.kind == "vit-2d"


def test_sharded_reads_only_the_shard_holding_the_table(hub_env, checkpoints):
    from posviz import load_table

    load_table("tiny/gpt2-sharded")
    shards = {f for (_, f), n in hub_env.hub.served.items() if f.endswith(".safetensors") and n}
    assert len(shards) == 1
    index = json.loads(hub_env.hub.repos["tiny/gpt2-sharded"].files["model.safetensors.index.json"])
    assert len(set(index["weight_map"].values())) > 1


def test_bin_only_falls_back_to_whole_file_with_progress(hub_env, checkpoints):
    from posviz import load_table

    calls: list[tuple[int, int | None]] = []
    table = load_table("tiny/bert-bin", progress=lambda done, total: calls.append((done, total)))
    np.testing.assert_array_equal(table.matrix, checkpoints["bert-bin"].expected)
    size = len(hub_env.hub.repos["tiny/bert-bin"].files["pytorch_model.bin"])
    assert calls and calls[-1] == (size, size)
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(calls))


def test_bin_above_fetch_cap_is_refused_and_names_the_cap(hub_env, monkeypatch):
    import dataclasses

    import posviz.settings
    from posviz import load_table

    real = posviz.settings.settings
    monkeypatch.setattr(
        posviz.settings, "settings", lambda: dataclasses.replace(real(), max_fetch_bytes=1000)
    )
    with pytest.raises(ValueError, match="POSVIZ_MAX_FETCH_MB"):
        load_table("tiny/bert-bin")
    assert hub_env.hub.served[("tiny/bert-bin", "pytorch_model.bin")] == 0


def test_offline_rereads_the_cache_without_network(hub_env, checkpoints, monkeypatch):
    from posviz import load_table

    first = load_table("tiny/roberta")
    hub_env.hub.reset()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    again = load_table("tiny/roberta")
    np.testing.assert_array_equal(first.matrix, again.matrix)
    assert hub_env.hub.requests == []
    with pytest.raises(ValueError, match="HF_HUB_OFFLINE"):
        load_table("tiny/gpt2")


def test_helpers_for_other_views(hub_env, checkpoints):
    from posviz.tables import fetch_config, read_named_tensor

    assert fetch_config("tiny/gpt2")["model_type"] == "gpt2"
    wte = read_named_tensor("tiny/gpt2", "wte.weight")
    assert wte.shape == (99, 32)
    with pytest.raises(ValueError, match="no tensor ending in"):
        read_named_tensor("tiny/gpt2", "relative_attention_bias.weight")


def test_private_and_gated_repos_need_a_token(hub_env, checkpoints, monkeypatch):
    from posviz import load_table

    with pytest.raises(ValueError, match="HF_TOKEN"):
        load_table("tiny/private-bert")
    with pytest.raises(ValueError, match="gated"):
        load_table("tiny/gated-bert")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    table = load_table("tiny/private-bert")
    np.testing.assert_array_equal(table.matrix, checkpoints["bert"].expected)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("tiny/no-such-model", "not found on the hub"),
        ("tiny/llama", "RoPE.*'rope'"),
        ("tiny/bloom", "ALiBi.*'alibi'"),
        ("tiny/t5", "T5 relative buckets.*'t5_buckets'"),
        ("tiny/marian", "Sinusoidal.*'sinusoidal'"),
        ("tiny/no-pos", "no tensor ending in"),
        ("tiny/huge-header", "2,147,483,648 bytes"),
        ("tiny/not-json", "not JSON"),
        ("tiny/wrong-shape", r"config.json predicts \(40, 32\)"),
        ("tiny/nan", "NaN/inf"),
        ("not a valid id!", "not a source posviz reads; use bundled"),
        ("org/a--b", "not a source posviz reads"),
    ],
)
def test_bad_hub_sources_say_what_is_wrong(hub_env, source, message):
    from posviz import load_table

    with pytest.raises(ValueError, match=message):
        load_table(source)
    assert load_table("bundled").matrix.shape == (512, 384)


def test_revision_not_found(hub_env):
    from posviz import load_table

    with pytest.raises(ValueError, match="no revision 'v9'"):
        load_table("tiny/gpt2", revision="v9")
    commit = hub_env.hub.repos["tiny/gpt2"].commit
    assert load_table("tiny/gpt2", revision=commit).revision == commit


def test_unreachable_hub_fails_fast(monkeypatch, tmp_path):
    import socket
    import time

    from posviz import load_table

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # a retry would back off first
    with pytest.raises(ValueError, match="Could not reach the hub"):
        load_table("tiny/gpt2")
    assert waits == [], f"retried an unreachable hub after waiting {waits} s"


def test_a_mirror_that_ignores_range_is_refused_not_downloaded(checkpoints, monkeypatch, tmp_path):
    from hub_server import _Handler

    from posviz import load_table

    class NoRanges(_Handler):
        def _send_file(self, repo_id, repo, filename, data, byte_range, *, body):
            super()._send_file(repo_id, repo, filename, data, None, body=body)

    fake = FakeHub()
    fake.add_dir("tiny/gpt2", checkpoints["gpt2"].directory)
    server = HubServer(fake)
    server._httpd.RequestHandlerClass = type("Handler", (NoRanges,), {"hub": fake})
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with server, pytest.raises(ValueError, match="ignored an HTTP range request"):
        load_table("tiny/gpt2")
