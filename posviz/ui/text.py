"""Escaping user text for Markdown lives in :mod:`posviz.page_models.markdown` (a page model may
quote a typed value too); this name stays for the ui's and pages' imports."""

from posviz.page_models.markdown import hide_server_details, safe_md

__all__ = ["hide_server_details", "safe_md"]
