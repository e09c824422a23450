"""Views of one table linked by a shared position, in one Vega-Lite spec: pointing at a position in
any view, or pressing ▶ play, moves the highlight in all of them, in the browser.

Streamlit draws each ``st.altair_chart`` as its own Vega view; views that must share a signal
(the position under the pointer, the play timer) have to be one spec. :class:`LinkedChart` puts
the views side by side (``hconcat``, fixed sizes: a wide page) or one above the other
(``vconcat``: Streamlit stretches every stacked view to the page's width, so it fits a phone),
with the shared parameters on top:

* ``pos`` — the position highlighted everywhere; it rests at the page's one position control (a
  Streamlit slider kept in the URL, which redraws the chart at its value), so a copied link
  reopens what the views show. Pointing previews a position until the pointer leaves the chart;
* ``play`` — a ▶ checkbox, off when the chart is drawn (nothing moves until the reader asks, as
  ``prefers-reduced-motion`` wants); while it is on a Vega ``timer`` advances ``pos``; stopped,
  the views return to the page's position (play is a view-only animation: it never changes the
  link). A page may put a step button beside it (:func:`next_position`: one position on).

A view takes part by reading ``pos`` (a ``transform_filter("datum.position == pos")``, a rule at
``pos``) and by carrying a ``position`` field on its marks (pointing at one moves ``pos`` there).
A heatmap whose rows are positions (``rows_of``) moves ``pos`` to the row under the pointer. No
event goes to the server: neither a frame of the animation nor a hover reruns the page.

A view that keeps its aspect ratio (a round clock, a square matrix) reads its plot size from
Vega signals; inside a stack those have the names :func:`view_size` gives.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from typing import Any

import altair as alt

from posviz.charts.figure import WithParams

#: In-browser animation: one position every this many milliseconds while ▶ play is on.
PLAY_INTERVAL_MS = 160
#: The Vega-Lite parameter holding the current position (slider, play, pointer all set it).
POSITION_PARAM = "pos"
PLAY_PARAM = "play"
#: Whether the pointer is on the chart (a linked hero's preview lasts while it is).
POINTING = "pointing"
_POINTING_PARAM = {
    "name": POINTING,
    "value": False,
    "on": [
        {"events": "pointermove", "update": "true"},
        {"events": "pointerleave", "update": "false"},
    ],
}
#: Vertical gap between stacked views, in pixels (room for the next view's title).
SPACING = 36

_NAME = re.compile(r"[a-z][a-z0-9]*")


def cells_mark(view: str) -> str:
    """The name a heatmap gives its hover layer inside linked view ``view`` (Vega-Lite appends
    ``_marks`` to a named layer): the event source of :func:`position_params`' ``rows_of``."""
    return f"{view}_cells"


def position_params(
    *,
    current: int,
    last: int,
    step: int = 1,
    label: str = "position",
    hover: bool = True,
    rows_of: Sequence[str] = (),
    bound: bool = True,
) -> list[dict[str, Any]]:
    """Vega-Lite parameters for an in-browser position slider and a ▶ play switch.

    ``pos`` starts at ``current`` and is bound to a range input ``0 … last`` (in ``step``\\ s);
    while ``play`` is checked a Vega ``timer`` event advances it by ``step`` every
    :data:`PLAY_INTERVAL_MS` ms, wrapping to 0 after ``last``. With ``hover``, pointing at any
    mark that carries a ``position`` moves ``pos`` there. ``rows_of`` names linked heatmap views
    (:class:`LinkedChart`) whose rows are positions: moving the pointer over one (or tapping it
    on a touch screen) sets ``pos`` to the row under it, rounded down to a multiple of ``step``.
    Hovering does nothing while ▶ play runs. The inputs live inside the chart, so neither a drag
    nor a frame goes to the server.

    ``bound=False`` (a linked hero: the page's URL-kept slider is its one position control and
    ``current`` its value): no in-chart slider; ``pos`` returns to ``current`` when the pointer
    leaves the chart and when ▶ play stops, so at rest the views show the linked position.
    """
    if not 0 <= current <= last:
        raise ValueError(f"current={current} is outside 0 … {last}; choose a position in range.")
    if step < 1:
        raise ValueError(f"step={step} must be at least 1.")
    for view in rows_of:
        _check_name(view)
    pos, play = POSITION_PARAM, PLAY_PARAM
    advance = f"{play} ? ({pos} + {step} > {last} ? 0 : {pos} + {step})"
    handlers: list[dict[str, Any]] = [
        {"events": {"type": "timer", "throttle": PLAY_INTERVAL_MS}, "update": f"{advance} : {pos}"}
    ]
    if hover:
        handlers.append(
            {
                "events": "pointerover",
                "update": f"isValid(datum) && isNumber(datum.position) && !{play} "
                f"? datum.position : {pos}",
            }
        )
    if not bound:  # at rest (▶ play off, no pointer on the chart) the views show ``current``
        rest = f"{POINTING} ? {pos} : {int(current)}"
        handlers[0]["update"] = f"{advance} : {rest}"  # within one tick of play's end
        handlers.append({"events": "pointerleave", "update": f"{play} ? {pos} : {int(current)}"})
    for view in rows_of:  # the pointer's row: the view's own y scale, inverted (a tap too)
        row = f"floor(invert('{view}_y', y(group())) / {step}) * {step}"
        cells = f"@{cells_mark(view)}_marks"
        handlers.append(
            {
                "events": f"{cells}:pointermove, {cells}:pointerdown",
                "update": f"{play} ? {pos} : clamp({row}, 0, {last})",
            }
        )
    slider = {"input": "range", "min": 0, "max": int(last), "step": int(step), "name": f"{label} "}
    return [
        {"name": play, "value": False, "bind": {"input": "checkbox", "name": "▶ play "}},
        {"name": pos, "value": int(current), **({"bind": slider} if bound else {}), "on": handlers},
        *([] if bound else [_POINTING_PARAM]),
    ]


def next_position(current: int, last: int, step: int = 1) -> int:
    """The position one ▶ play tick after ``current``: ``step`` on, wrapping to 0 after ``last``
    (what a step button moves the page's position to, for a reader who wants no animation)."""
    return 0 if current + step > last else current + step


def _check_name(view: str) -> None:
    if not _NAME.fullmatch(view):
        raise ValueError(
            f"view name {view!r} is not a plain lower-case identifier; use letters and digits "
            "starting with a letter (it prefixes Vega scale and mark names)."
        )


def view_size(view: str, *, direction: str, width: int = 0, height: int = 0) -> tuple[str, str]:
    """The Vega expressions for the plot width and height of ``view`` in a :class:`LinkedChart`.

    Stacked (``"vertical"``) views share the stack's ``width`` signal and each has its own
    ``<view>_height`` (Vega-Lite's names; the chart keeps the heights distinct so that they stay
    separate signals). Side by side (``"horizontal"``) every view has the fixed ``width`` ×
    ``height`` it was given, written as numbers.
    """
    _check_name(view)
    if direction == "vertical":
        return "width", f"{view}_height"
    if direction == "horizontal":
        if width < 1 or height < 1:
            raise ValueError(f"width={width}, height={height}: give a side-by-side view its size.")
        return str(int(width)), str(int(height))
    raise ValueError(f"direction={direction!r} is unknown; use 'vertical' or 'horizontal'.")


#: Channels whose scale and legend every view keeps for itself.
_OWN_SCALES = ("color", "fill", "stroke", "opacity", "size", "shape", "strokeDash")
#: Keys only a top-level spec may carry; a stacked view loses them (the stack has its own).
_TOP_LEVEL_ONLY = ("$schema", "config", "autosize", "usermeta", "datasets", "params", "padding")


class LinkedChart:
    """Views in one Vega-Lite spec, one above the other or side by side, sharing ``pos``/``play``.

    ``views`` are ``(name, chart)`` pairs in reading order; a name is a plain identifier that
    prefixes the view's Vega scales (``table`` → ``table_y``). A chart is anything with
    ``to_dict()`` (Altair, :class:`~posviz.charts.heatmap.VegaLiteChart`, :class:`WithParams`,
    whose own ``pos``/``play`` are replaced by the shared ones). ``params`` come from
    :func:`position_params`. ``direction`` ``"vertical"`` stacks the views at one width (the
    page's, on screen) and fits them to it; ``"horizontal"`` keeps each view's own fixed size.
    ``renderer`` is asked of Vega through ``usermeta.embedOptions``. ``stepping`` is
    ``(last, step)`` of the shared position when :func:`linked_chart` built it (``None``:
    unknown), for a step button beside ▶ play (:func:`next_position`).
    """

    stepping: tuple[int, int] | None = None

    def __init__(
        self,
        views: Sequence[tuple[str, Any]],
        params: list[dict[str, Any]],
        *,
        direction: str = "vertical",
        renderer: str = "svg",
        description: str = "",
    ) -> None:
        names = [name for name, _chart in views]
        for name in names:
            _check_name(name)
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"view names {names} must be distinct and at least one.")
        if direction not in ("vertical", "horizontal"):
            raise ValueError(f"direction={direction!r} is unknown; use 'vertical' or 'horizontal'.")
        if renderer not in ("canvas", "svg"):
            raise ValueError(f"renderer={renderer!r} is unknown; use 'canvas' or 'svg'.")
        self.views, self.params, self.direction = list(views), params, direction
        self.renderer, self.description = renderer, description

    @property
    def names(self) -> list[str]:
        return [name for name, _chart in self.views]

    def to_dict(self, validate: bool = False, **kwargs: Any) -> dict:
        """The linked spec; each view's data goes through the active data transformer."""
        vertical = self.direction == "vertical"
        shared = {p["name"] for p in self.params}
        datasets: dict[str, Any] = {}
        params = copy.deepcopy(self.params)
        specs = [chart.to_dict(**kwargs) for _name, chart in self.views]
        heights = [spec.get("height") for spec in specs]
        if vertical and len(set(heights)) != len(heights):
            raise ValueError(
                f"stacked views need distinct heights, got {heights}: equal ones would share one "
                "Vega signal, not the <view>_height that round and square views read."
            )
        # stacked: one width for all, the "width" signal that autosize fit-x fits to the page
        width = max((s["width"] for s in specs if isinstance(s.get("width"), int)), default=800)
        views = []
        for name, spec in zip(self.names, specs, strict=True):
            datasets.update(spec.get("datasets") or {})
            params += [p for p in spec.get("params", []) if p.get("name") not in shared]
            view = {k: v for k, v in spec.items() if k not in _TOP_LEVEL_ONLY}
            views.append({**view, "name": name, **({"width": width} if vertical else {})})
        out: dict[str, Any] = {
            "$schema": alt.SCHEMA_URL,
            ("vconcat" if vertical else "hconcat"): views,
            "spacing": SPACING,
            # each view keeps its own colours and legends (Vega-Lite would merge two
            # quantitative colour scales, a heatmap's and a path's, into one)
            "resolve": {
                "scale": {channel: "independent" for channel in _OWN_SCALES},
                "legend": {channel: "independent" for channel in _OWN_SCALES},
            },
            "params": params,
            # set here, so Streamlit keeps it: fit-x stretches a stack to the page; side-by-side
            # views keep their sizes ("fit" would squeeze the first view only)
            "autosize": {"type": "fit-x" if vertical else "pad", "contains": "padding"},
            "usermeta": {"embedOptions": {"renderer": self.renderer}},
        }
        if vertical:  # a legend beside a stacked view narrows every view: below, unless placed
            out["config"] = {"legend": {"orient": "bottom"}}
        if self.description:
            out["description"] = self.description
        if datasets:
            out["datasets"] = datasets
        if validate:  # Vega-Lite's schema has no "on" for variable parameters (Vega passes it)
            checked = {**out, "params": [{k: v for k, v in p.items() if k != "on"} for p in params]}
            (alt.VConcatChart if vertical else alt.HConcatChart).validate(checked)
        return out

    def to_json(self, indent: int | None = 2, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(**kwargs), indent=indent)

    def _repr_mimebundle_(self, *_args: Any, **_kwargs: Any) -> dict:
        return {"application/vnd.vegalite.v5+json": self.to_dict()}


def linked_chart(
    views: Sequence[tuple[str, Any]],
    *,
    rows_of: Sequence[str] = (),
    direction: str = "vertical",
    renderer: str = "svg",
    description: str = "",
) -> LinkedChart:
    """:class:`LinkedChart` of ``views`` whose ``pos`` runs over the positions of the first view
    with its own ▶ play (a :class:`WithParams`, e.g. an animated clock or a PCA path with a
    current position): the same start, last position and step, so every view draws the
    positions that view draws; its in-chart slider is dropped (``bound=False``: the page's
    slider is the one control). ``rows_of`` as in :func:`position_params`.
    """
    for _name, chart in views:
        own = {p["name"]: p for p in chart.params} if isinstance(chart, WithParams) else {}
        if POSITION_PARAM in own:
            start, bind = own[POSITION_PARAM]["value"], own[POSITION_PARAM]["bind"]
            params = position_params(
                current=start, last=bind["max"], step=bind["step"], rows_of=rows_of, bound=False
            )
            linked = LinkedChart(
                views, params, direction=direction, renderer=renderer, description=description
            )
            linked.stepping = (int(bind["max"]), int(bind["step"]))
            return linked
    raise ValueError(
        "no view has a position slider to share; give one view its own ▶ play "
        "(unit_circle_chart(animate=True) or pca_trajectory_chart(current=…))."
    )
