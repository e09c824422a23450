"""What the app's table picker offers, without its widgets: sources, defaults, limits, cache keys.

The picker (``posviz.ui.table_source.pick_table``) lets a page's reader choose where a position
table comes from. Its choices, how a page's default source selects one, the sinusoid source's
limits (the loader's own, so the hub box, the picker and the command line accept the same tables),
the upload cap, whether a server may read its own disk, and the key that identifies a loaded
table's matrix for caching live here, where they are tested without a browser.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
from collections.abc import Callable

import numpy as np

from posviz.settings import settings
from posviz.tables.bundled import (
    DINOV2_S14,
    MINILM_L3,
    MPNET_BIAS,
    WHISPER_DECODER,
    WHISPER_ENCODER,
)
from posviz.tables.sources import BUNDLED_PREFIX, source_kind
from posviz.tables.synthetic import (
    SYNTHETIC_MAX_POSITIONS,
    SYNTHETIC_MAX_WIDTH,
    SyntheticShape,
    parse_synthetic,
)
from posviz.tables.table import PositionTable

#: The picker's sources, in the order offered, with their labels.
MODES = {
    "bundled": "Bundled MiniLM-L6 (offline)",
    "minilm-l3": f"Bundled {MINILM_L3.name} (offline)",
    "whisper-decoder": "Bundled Whisper tiny.en decoder, learned (offline)",
    "whisper-encoder": "Bundled Whisper tiny.en encoder, sinusoid (offline)",
    "dinov2": "Bundled DINOv2 ViT-S/14 patch grid (offline)",
    "mpnet-bias": "Bundled MPNet relative bias, 32 buckets × 12 heads (offline)",
    "sinusoid": "Sinusoid (computed)",
    "hub": "Hugging Face hub model",
    "upload": "Upload .npy / .safetensors",
    "lab": "Lab run (a table trained here)",
    "path": "Local path on the server",
}
#: The modes that name one fixed source (no further widgets): mode -> source.
FIXED_SOURCES = {
    "bundled": "bundled",
    "minilm-l3": BUNDLED_PREFIX + MINILM_L3.name,
    "whisper-decoder": BUNDLED_PREFIX + WHISPER_DECODER.name,
    "whisper-encoder": BUNDLED_PREFIX + WHISPER_ENCODER.name,
    "dinov2": BUNDLED_PREFIX + DINOV2_S14.name,
    "mpnet-bias": BUNDLED_PREFIX + MPNET_BIAS.name,
}
#: Hub models with a learned table, one per registry family (all load by range read).
HUB_SUGGESTIONS: tuple[str, ...] = (
    "openai-community/gpt2",
    "google-bert/bert-base-uncased",
    "FacebookAI/roberta-base",
    "distilbert/distilbert-base-uncased",
    "google/electra-small-discriminator",
    "albert/albert-base-v2",
    "FacebookAI/xlm-roberta-base",
    "EleutherAI/gpt-neo-125m",
    "facebook/opt-125m",
    "facebook/bart-base",
    "google/vit-base-patch16-224",
)
#: The hub list's last entry: a model id typed in a box.
OTHER = "other…"
#: Which table of an encoder–decoder checkpoint ("" = the model's default).
PARTS = {"": "default", "encoder": "encoder", "decoder": "decoder"}
#: The sinusoid source's limits: the loader's own (``load_table("sinusoidal:NxD")``).
SINUSOID_MAX_POSITIONS = SYNTHETIC_MAX_POSITIONS
SINUSOID_MAX_WIDTH = SYNTHETIC_MAX_WIDTH - SYNTHETIC_MAX_WIDTH % 2
#: Tables up to this size are keyed by content too (uploads are far smaller).
DIGEST_LIMIT_BYTES = 16 * 2**20
#: The variable that lets a server reachable from other machines read local paths anyway.
ALLOW_PATHS_ENV = "POSVIZ_ALLOW_LOCAL_PATHS"
_EXPLICIT_YES = ("1", "true", "yes", "on")


def default_mode(default: str) -> str:
    """The picker's source for a page's ``default``: a mode itself, or the mode of a source."""
    if default in MODES:
        return default
    fixed = {source.lower(): mode for mode, source in FIXED_SOURCES.items()}
    if default.strip().lower() in fixed:
        return fixed[default.strip().lower()]
    return {"synthetic": "sinusoid", "lab": "lab"}.get(source_kind(default), "hub")


def hub_defaults(default: str) -> tuple[str, str]:
    """``(list choice, typed id)`` for the hub source: a suggestion is chosen in the list, any
    other hub id is typed in the box after :data:`OTHER`; anything else starts on GPT-2."""
    if default in HUB_SUGGESTIONS:
        return default, ""
    if default not in MODES and source_kind(default) not in ("synthetic", "lab", "bundled"):
        return OTHER, default
    return HUB_SUGGESTIONS[0], ""


def sinusoid_shape(default: str) -> tuple[int, int, str | None]:
    """``(n, d, note)`` for a ``"sinusoidal:NxD"`` default, clamped to the sinusoid source's limits.

    ``note`` says what was changed and why (``None`` when nothing was): an odd width becomes the
    next even one below; more than :data:`SINUSOID_MAX_POSITIONS` rows or
    :data:`SINUSOID_MAX_WIDTH` columns are cut to the limit. Anything else is MiniLM's 512×384.
    """
    n, d = 512, 384
    if source_kind(default) == "synthetic":
        try:
            shape = parse_synthetic(default)
            n, d = shape.n_positions, shape.width
        except ValueError:  # a malformed default keeps MiniLM's shape
            pass
    wanted = (n, d)
    n = min(max(n, 1), SINUSOID_MAX_POSITIONS)
    d = min(max(d - d % 2, 2), SINUSOID_MAX_WIDTH)
    if (n, d) == wanted:
        return n, d, None
    return (
        n,
        d,
        (
            f"A matching sinusoid would be {wanted[0]}×{wanted[1]}; this one is {n}×{d} (sinusoids "
            f"here have 1 … {SINUSOID_MAX_POSITIONS} positions and an even width 2 … "
            f"{SINUSOID_MAX_WIDTH})."
        ),
    )


def comparison_default(table: PositionTable | None) -> str:
    """The sinusoid to compare ``table`` with: same positions and width (the picker clamps an
    odd or too-large shape and says so); MiniLM's 512×384 when there is no table."""
    if table is None:
        return SyntheticShape(512, 384).source
    return SyntheticShape(table.n_positions, table.d_model).source


def check_upload_size(name: str, size: int, *, cap: int) -> None:
    """Raise ``ValueError`` (naming the file once) when an upload is over ``cap`` bytes."""
    if size > cap:
        raise ValueError(
            f"{name} is {size / 2**20:,.1f} MB; the limit here is {cap // 2**20} MB "
            "(POSVIZ_MAX_UPLOAD_MB). Save fewer rows or float16."
        )


def has_revisions(source: str) -> bool:
    """Whether ``source`` is a hub model id (the only kind of source with revisions).

    ``bundled``, ``sinusoidal:…``, ``lab:…`` and anything written like a path have none, so a
    revision given with them must not make a new cache entry.
    """
    return source_kind(source) == "hub"


def table_cache_key(table: PositionTable) -> str:
    """A string that identifies ``table``'s matrix, for caching what is computed from it.

    Source, revision, tensor, shape and dtype; plus a content digest for tables up to 16 MB (so
    two uploads with the same file name never share a picture; bigger tables are never uploads).
    """
    matrix = np.ascontiguousarray(table.matrix)
    parts = [
        table.source,
        table.revision or "",
        table.tensor_name,
        table.kind,
        "x".join(map(str, matrix.shape)),
        str(matrix.dtype),
    ]
    if matrix.nbytes <= DIGEST_LIMIT_BYTES:
        parts.append(hashlib.blake2b(matrix.data, digest_size=12).hexdigest())
    return "|".join(parts)


def describe_lines(table: PositionTable, *, show: Callable[..., str]) -> list[str]:
    """Caption lines for ``table``: its facts in one line, then each set-aside row and note.

    Labels, tensor names, model types, reasons and notes come from files and typed ids:
    ``show(text, max_len=…)`` writes them (the app escapes Markdown and cuts long ones).
    """
    facts = [f"**{show(table.label, max_len=120)}**", f"kind {show(table.kind, max_len=80)}"]
    if table.tensor_name:
        facts.append(f"tensor {show(table.tensor_name, max_len=120)}")
    if table.model_type:
        facts.append(f"model type {show(table.model_type, max_len=80)}")
    if table.bytes_read:
        facts.append(f"{table.bytes_read / 1024:,.0f} KiB read")
    if table.grid:
        facts.append(f"patch grid {table.grid[0]}×{table.grid[1]}")
    lines = [" · ".join(facts)]
    for aside in table.set_aside:
        rows = ", ".join(map(str, aside.rows))
        lines.append(f"Set aside stored row(s) {rows}: {show(aside.reason, max_len=300)}.")
    lines += [f"Note: {show(note, max_len=300)}." for note in table.notes]
    return lines


def is_loopback(address: str) -> bool:
    """Whether ``address`` is reachable from this machine only (127.0.0.0/8, ::1, localhost).

    An empty address means every interface, so it is not loopback.
    """
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:  # "" (all interfaces) or a host name: assume others can reach it
        return False


def local_paths_off_reason(address: str) -> str | None:
    """Why reading tables from the server's own disk is off (Markdown), or ``None`` when it is on.

    ``address`` is where the server listens ("" = every interface). A server reachable from
    other machines lets anyone probe which paths exist and read any ``.npy``/``.safetensors``
    file, so there paths are off unless :data:`ALLOW_PATHS_ENV` says yes; this also sets it to
    ``0`` for the process, so that every loader (which reads :func:`posviz.settings.settings`)
    refuses paths too, the hub-id box included.
    """
    explicit = os.environ.get(ALLOW_PATHS_ENV, "").strip().lower()
    if not is_loopback(address) and explicit not in _EXPLICIT_YES:
        os.environ[ALLOW_PATHS_ENV] = "0"  # process-wide: the address is process-wide too
        where = f"address {address}" if address else "every network interface"
        return (
            f"Local paths are off: this server listens on {where}, so others could read files "
            f"from its disk. The operator can start it on 127.0.0.1 (the default of "
            f"scripts/run\\-app\\.sh) or set {ALLOW_PATHS_ENV}\\=1 to allow them anyway."
        )
    if not settings().allow_local_paths:
        return (
            f"Local paths are off on this server ({ALLOW_PATHS_ENV} is off); upload the file "
            "instead."
        )
    return None
