"""Who can reach this server, and what that turns off (issue #13.7).

Loading tables from paths on the server's disk is a convenience for one person on their own
machine. A server listening on a non-loopback address (``server.address`` empty means every
interface) lets anyone on the network probe which paths exist and read any ``.npy``/``.safetensors``
file, so there it is off unless the operator says otherwise with ``POSVIZ_ALLOW_LOCAL_PATHS=1``.
"""

from __future__ import annotations

import ipaddress
import os

import streamlit as st

from posviz.settings import settings

_ENV = "POSVIZ_ALLOW_LOCAL_PATHS"
_EXPLICIT_YES = ("1", "true", "yes", "on")


def server_address() -> str:
    """Streamlit's ``server.address`` ("" when unset: the server listens on every interface)."""
    return str(st.get_option("server.address") or "").strip()


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


def local_paths_off_reason() -> str | None:
    """Why loading from server paths is off here (Markdown), or ``None`` when it is on.

    On a server reachable from other machines, with ``POSVIZ_ALLOW_LOCAL_PATHS`` not set to yes,
    this also sets it to ``0`` for the process, so that every loader (which reads
    :func:`posviz.settings.settings`) refuses paths too, the hub-id box included.
    """
    explicit = os.environ.get(_ENV, "").strip().lower()
    address = server_address()
    if not is_loopback(address) and explicit not in _EXPLICIT_YES:
        os.environ[_ENV] = "0"  # process-wide: the address is process-wide too
        where = f"address {address}" if address else "every network interface"
        return (
            f"Local paths are off: this server listens on {where}, so others could read files "
            f"from its disk. The operator can start it on 127.0.0.1 (the default of "
            f"scripts/run\\-app\\.sh) or set {_ENV}\\=1 to allow them anyway."
        )
    if not settings().allow_local_paths:
        return f"Local paths are off on this server ({_ENV} is off); upload the file instead."
    return None
