"""Deployment limits, read from the environment (see README, "Hosted deploy").

Defaults suit a local install. The hosted profile (Streamlit Community Cloud, Hugging Face Spaces)
sets ``POSVIZ_HOSTED=1``, which turns local-path loading off and tightens the caps.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    try:
        return int(raw) if raw is not None else default
    except ValueError:
        return default


@dataclass(frozen=True)
class Settings:
    """Limits that protect a shared server. Read once per call of :func:`settings`."""

    hosted: bool
    allow_local_paths: bool  # load tables from paths on the server's disk
    max_fetch_bytes: int  # cap on what one hub fetch may download (full .bin fallback included)
    max_upload_bytes: int  # cap on uploaded tables
    cache_entries: int  # max_entries of st.cache_data for tables/results
    cache_ttl_seconds: int  # ttl of cached tables/results


def settings() -> Settings:
    """Current settings from the environment (``POSVIZ_*`` variables)."""
    hosted = _env_bool("POSVIZ_HOSTED", False)
    return Settings(
        hosted=hosted,
        allow_local_paths=_env_bool("POSVIZ_ALLOW_LOCAL_PATHS", not hosted),
        max_fetch_bytes=_env_int("POSVIZ_MAX_FETCH_MB", 200 if hosted else 2000) * 1024 * 1024,
        max_upload_bytes=_env_int("POSVIZ_MAX_UPLOAD_MB", 50 if hosted else 200) * 1024 * 1024,
        cache_entries=_env_int("POSVIZ_CACHE_ENTRIES", 8 if hosted else 32),
        cache_ttl_seconds=_env_int("POSVIZ_CACHE_TTL", 3600),
    )
