"""Deprecated location: the router fix lives in :mod:`posviz.ui.compat` with the other patches."""

from posviz.ui.compat import route_through_app

__all__ = ["route_through_app"]
