"""Deprecated module kept so that existing imports keep working; import from the new homes.

``posviz.ui.tables`` used to hold three jobs. They now live in:

* :mod:`posviz.ui.loaders`: cached loaders (``cached_table``, ``cached_upload``, ``cached_pca``);
* :mod:`posviz.ui.table_source`: the source picker (``pick_table``, ``describe_table``);
* :mod:`posviz.ui.table_views`: the views of a table (``TABLE_VIEWS``, ``show_view``, …).
"""

from posviz.ui.loaders import cached_pca, cached_table, cached_upload
from posviz.ui.table_source import HUB_SUGGESTIONS, describe_table, pick_table
from posviz.ui.table_views import (
    FULL_WIDTH_VIEWS,
    OUTLIER_RATIO,
    TABLE_VIEWS,
    relative_threshold,
    show_view,
    table_cache_key,
    view_controls,
)

__all__ = [
    "FULL_WIDTH_VIEWS",
    "HUB_SUGGESTIONS",
    "OUTLIER_RATIO",
    "TABLE_VIEWS",
    "cached_pca",
    "cached_table",
    "cached_upload",
    "describe_table",
    "pick_table",
    "relative_threshold",
    "show_view",
    "table_cache_key",
    "view_controls",
]
