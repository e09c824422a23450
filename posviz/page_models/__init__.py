"""Page models: for each page, one builder that takes the page's data (a table, not its settings)
and returns everything the page shows — verdict, hero, figures, captions — computed once.

A page script reads its widgets, gets its data through :mod:`posviz.ui` (cached loaders), calls
its model (through :func:`posviz.ui.cache.cached_model`) and lays the result out; it imports from
nothing else (``tests/test_page_models.py`` checks). "Model" here means the page's model, never
a neural network (those are :mod:`posviz.models`); "view" means one section of a page with its
own controls (``posviz/ui/*_view.py`` and ``*_views.py``; their words and choices are
:mod:`posviz.page_models.table_views`). The lab pages' model is :mod:`posviz.page_models.lab`;
:mod:`posviz.page_models.markdown` escapes a typed or linked value for Markdown.

This layer sits above :mod:`posviz.analysis` (numbers), :mod:`posviz.charts` (drawing) and
:mod:`posviz.figures` (a chart with its export) and below :mod:`posviz.ui`.
"""
