"""Deployment limits, read from the environment (see README, "Hosted deploy").

Defaults suit a local install. The hosted profile (Streamlit Community Cloud, Hugging Face
Spaces) sets ``POSVIZ_HOSTED=1``, which turns local-path loading off and tightens the caps. On a
Hugging Face Space (``SPACE_ID`` is set) the hosted profile is on unless ``POSVIZ_HOSTED=0``, so a
forgotten variable fails safe.

=============================  ========  =======  =========================================
variable                       local     hosted   what it bounds
=============================  ========  =======  =========================================
``POSVIZ_HOSTED``              0         1        picks the column of defaults below
``POSVIZ_ALLOW_LOCAL_PATHS``   1         0        loading tables from paths on the server
``POSVIZ_MAX_FETCH_MB``        2000      200      bytes one hub fetch may download
``POSVIZ_MAX_UPLOAD_MB``       200       50       size of an uploaded table
``POSVIZ_CACHE_ENTRIES``       32        8        ``max_entries`` of each cache
``POSVIZ_CACHE_TTL``           3600      3600     seconds a cached table/result lives
``POSVIZ_CACHE_MB``            2048      512      bytes all caches may hold together
``POSVIZ_MAX_JOBS``            2         1        heavy jobs (lab runs, big probes) at once
``POSVIZ_MAX_PROBE_CELLS``     16777216  2097152  cells (positions × width) one probe fits
``POSVIZ_LAB_MAX_STEPS``       20000     3000     optimiser steps of one lab run
``POSVIZ_LAB_MAX_WIDTH``       256       128      model width of one lab run
``POSVIZ_LAB_MAX_LEN``         512       256      sequence length of one lab run
``POSVIZ_INSIDE_MAX_WINDOW``   256       128      longest window Inside real models computes
=============================  ========  =======  =========================================

A value that is not a positive integer (or a yes/no word for the switches) is ignored: the default
is used and the problem is listed in :attr:`Settings.problems`, for a page to show the operator.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class Settings:
    """Limits that protect a shared server. Read once per call of :func:`settings`."""

    hosted: bool
    allow_local_paths: bool  # load tables from paths on the server's disk
    max_fetch_bytes: int  # cap on what one hub fetch may download (full .bin fallback included)
    max_upload_bytes: int  # cap on uploaded tables
    cache_entries: int  # max_entries of st.cache_data for tables/results
    cache_ttl_seconds: int  # ttl of cached tables/results
    cache_bytes: int = 2048 * 1024 * 1024  # what all table/result caches may hold together
    max_jobs: int = 2  # heavy computations (lab training, large probes) running at once
    max_probe_cells: int = 8192 * 2048  # positions × width a probe may fit
    lab_max_steps: int = 20000  # optimiser steps of one lab run
    lab_max_width: int = 256  # model width of one lab run
    lab_max_len: int = 512  # sequence length of one lab run
    inside_max_window: int = 256  # longest text window the Inside-real-models page computes
    problems: tuple[str, ...] = ()  # environment values that were ignored, and why


def _env_bool(name: str, default: bool, problems: list[str]) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    problems.append(
        f"{name}={raw!r} is not one of 1/0, true/false, yes/no, on/off; using {default}."
    )
    return default


def _env_positive_int(name: str, default: int, problems: list[str]) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value >= 1:
        return value
    problems.append(f"{name}={raw!r} is not a positive integer; using the default {default}.")
    return default


def _on_hugging_face_space() -> bool:
    """Hugging Face Spaces set ``SPACE_ID`` ("owner/name") in every Space's environment."""
    return bool(os.environ.get("SPACE_ID"))


def settings() -> Settings:
    """Current settings from the environment (``POSVIZ_*`` variables); never raises."""
    problems: list[str] = []
    hosted = _env_bool("POSVIZ_HOSTED", _on_hugging_face_space(), problems)
    mb = 1024 * 1024
    return Settings(
        hosted=hosted,
        allow_local_paths=_env_bool("POSVIZ_ALLOW_LOCAL_PATHS", not hosted, problems),
        max_fetch_bytes=_env_positive_int("POSVIZ_MAX_FETCH_MB", 200 if hosted else 2000, problems)
        * mb,
        max_upload_bytes=_env_positive_int("POSVIZ_MAX_UPLOAD_MB", 50 if hosted else 200, problems)
        * mb,
        cache_entries=_env_positive_int("POSVIZ_CACHE_ENTRIES", 8 if hosted else 32, problems),
        cache_ttl_seconds=_env_positive_int("POSVIZ_CACHE_TTL", 3600, problems),
        cache_bytes=_env_positive_int("POSVIZ_CACHE_MB", 512 if hosted else 2048, problems) * mb,
        max_jobs=_env_positive_int("POSVIZ_MAX_JOBS", 1 if hosted else 2, problems),
        max_probe_cells=_env_positive_int(
            "POSVIZ_MAX_PROBE_CELLS", 2048 * 1024 if hosted else 8192 * 2048, problems
        ),
        lab_max_steps=_env_positive_int(
            "POSVIZ_LAB_MAX_STEPS", 3000 if hosted else 20000, problems
        ),
        lab_max_width=_env_positive_int("POSVIZ_LAB_MAX_WIDTH", 128 if hosted else 256, problems),
        lab_max_len=_env_positive_int("POSVIZ_LAB_MAX_LEN", 256 if hosted else 512, problems),
        inside_max_window=_env_positive_int(
            "POSVIZ_INSIDE_MAX_WINDOW", 128 if hosted else 256, problems
        ),
        problems=tuple(problems),
    )
