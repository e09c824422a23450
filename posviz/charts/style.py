"""Shared chart settings: sizing, one palette, colours that read in light and dark themes.

Every chart names its own colours (scale ranges, mark colours). Streamlit paints charts with its
theme's palette wherever a chart leaves a colour to the renderer, while the PNG/SVG exports
(:mod:`posviz.export`, rendered by vl-convert) use Vega's defaults; a chart that names every
colour looks the same on screen and in its export. ``tests/test_chart_hygiene.py`` renders every
chart of every page under a deliberately odd theme and checks that no mark changes colour.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt

from posviz.encodings.families import FAMILIES

# Width follows the container (Streamlit stretches charts); height is the plot area's own height.
# Streamlit's default ("fit" including padding) would squeeze titles, legends and axes into the
# given height and leave a sliver of plot.
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")

#: Categorical palette: every series of a chart takes one of these, so a chart never shows more
#: categorical series than it has colours. Blue, orange, red, teal, green, ochre, purple, pink,
#: brown, grey (Tableau 10's order and hues, Vega's default, made darker or deeper where they
#: were light): each reads at ≥ 3:1 (WCAG 2.1 SC 1.4.11) on Streamlit's white and on its dark
#: background, which leaves relative luminance 0.12–0.30, and the colours stay apart to a
#: deuteranope and a protanope as well (``tests/test_charts.py`` measures both; Tableau 10's
#: yellow read at 1.6:1 on white and its red and green as one colour to a deuteranope).
PALETTE: tuple[str, ...] = (
    "#4c78a8", "#c66713", "#b23d32", "#378184", "#317740",
    "#9e8b3a", "#735c88", "#d42fa7", "#a57d6b", "#726168",
)  # fmt: skip
#: The page backgrounds every chart colour must read on (WCAG 2.1 SC 1.4.11, ≥ 3:1): Streamlit's
#: light theme's white, its dark theme's ``gray100`` and the dark that Streamlit 1.67 paints.
BACKGROUNDS: dict[str, tuple[str, ...]] = {"light": ("#ffffff",), "dark": ("#0e1117", "#171614")}
#: A spread band's fill: a tint under its lines, never the only mark of the band (no opacity
#: that leaves the fill apart from the page reads at 3:1: 0.7 gives 2.2:1), so a band's edges
#: are drawn as thin lines in its series' full colour.
BAND_FILL_OPACITY = 0.18
#: Controls (random tables, shuffled labels) are grey on every page, never a palette colour
#: (lighter than the palette's grey, and ≥ 3:1 on both backgrounds like it).
CONTROL_COLOR = "#8c908d"
#: Reference marks (the unit circle, a diagonal y = x, a threshold) that carry no data.
GUIDE_COLOR = "#9aa0a8"
#: Many series of one ordered quantity (heads, layers) share a sequential scheme instead of a
#: categorical palette: a reader compares neighbours, not identities.
SEQUENTIAL_SCHEME = "viridis"

#: Controls are grey whatever else their label names ("random table like MiniLM").
CONTROL_WORDS = ("random", "control", "shuffled")
#: Entities that are not encoding families, with their colour: the bundled MiniLM table is the
#: learned family's blue in the heatmap, the probe chart and the cloud alike.
OTHER_ENTITY_COLORS: dict[str, str] = {"minilm": PALETTE[0]}


def entity_colors() -> dict[str, str]:
    """``name → colour`` of every entity that recurs across charts: each encoding family's
    (:attr:`FamilySpec.colour <posviz.encodings.families.FamilySpec>`, read from the registry
    now, found by its ``chart_name``) and :data:`OTHER_ENTITY_COLORS`; longer names first, so
    "p-rope" wins over "rope"."""
    named = {spec.chart_name: spec.colour for spec in FAMILIES.values() if spec.colour}
    named.update(OTHER_ENTITY_COLORS)
    return dict(sorted(named.items(), key=lambda item: -len(item[0])))


# Text that must read on the page's background whatever the theme: Vega's built-in ``background``
# signal holds the colour Streamlit's theme paints behind the chart (white when exported).
_ON_DARK, _ON_LIGHT = "#c4c8cf", "#545a63"
_DARK_BACKGROUND = "isValid(background) && luminance(background) < 0.4"
#: Subtitle/annotation colour as a Vega expression: light grey on a dark page, dark grey on a
#: light one (contrast ≥ 7:1 against Streamlit's white and ≥ 10:1 against its dark background).
ADAPTIVE_TEXT = {"expr": f"{_DARK_BACKGROUND} ? '{_ON_DARK}' : '{_ON_LIGHT}'"}
#: The two colours :data:`ADAPTIVE_TEXT` chooses between (for tests and static renders).
ADAPTIVE_TEXT_COLORS = (_ON_LIGHT, _ON_DARK)
#: The page's background as a Vega expression (white in an export): the halo under a label that
#: moves over marks (the linked position's), so it reads on dots and lines in both themes.
PAGE_BACKGROUND = {"expr": "isValid(background) ? background : '#ffffff'"}


def relative_luminance(color: str) -> float:
    """WCAG 2.1 relative luminance of ``#rrggbb``: 0.2126 R + 0.7152 G + 0.0722 B of the linear
    channels (sRGB, IEC 61966-2-1; WCAG writes the threshold 0.03928 for 0.04045, which changes
    no 8-bit value). https://www.w3.org/TR/WCAG21/#dfn-relative-luminance"""
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio (L_lighter + 0.05) / (L_darker + 0.05), 1 to 21.
    https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio"""
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def composite(color: str, opacity: float, background: str) -> str:
    """``color`` drawn at ``opacity`` over ``background``, as the screen shows it (Porter & Duff's
    source-over on an opaque ground, "Compositing Digital Images", SIGGRAPH 1984: α·C + (1−α)·B
    per 8-bit channel, as browsers blend in sRGB)."""
    if not 0 <= opacity <= 1:
        raise ValueError(f"opacity={opacity} must lie in [0, 1].")
    pairs = [(int(color[i : i + 2], 16), int(background[i : i + 2], 16)) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(opacity * c + (1 - opacity) * b):02x}" for c, b in pairs)


def on_dark(spec: dict) -> dict:
    """A copy of a finished Vega-Lite spec drawn for the dark theme (a static picture cannot
    follow the theme): Streamlit's dark background and its text greys (:data:`ADAPTIVE_TEXT`
    picks the same from the background); the marks keep their colours, which read on both."""
    dark, text = BACKGROUNDS["dark"][-1], _ON_DARK
    config = dict(spec.get("config", {}))
    axis = {"labelColor": text, "titleColor": text, "domainColor": text, "tickColor": text,
            "gridColor": "#3b3f45"}  # fmt: skip
    config["axis"] = {**config.get("axis", {}), **axis}
    config["legend"] = {**config.get("legend", {}), "labelColor": text, "titleColor": text}
    config["title"] = {**config.get("title", {}), "color": text, "subtitleColor": text}
    config["view"] = {**config.get("view", {}), "stroke": None}
    return {**spec, "background": dark, "config": config}


def entity_color(label: str, fallback_index: int = 0) -> str:
    """The colour of a named entity (``"MiniLM (bundled)"`` → MiniLM's blue), else a palette one.

    Controls (:data:`CONTROL_WORDS`) are grey first, so that "random table like MiniLM" stays
    grey; then the first name of :func:`entity_colors` found in ``label`` (case-insensitive).
    """
    lower = label.lower()
    if any(word in lower for word in CONTROL_WORDS):
        return CONTROL_COLOR
    for key, color in entity_colors().items():
        if key in lower:
            return color
    return PALETTE[fallback_index % len(PALETTE)]


def series_colors(labels: Sequence[str]) -> list[str]:
    """One distinct colour per label: named entities keep theirs, the rest take unused ones.

    Raises:
        ValueError: more labels than :data:`PALETTE` has colours (use :data:`SEQUENTIAL_SCHEME`
            for many ordered series).
    """
    labels = list(labels)
    if len(labels) > len(PALETTE):
        raise ValueError(
            f"{len(labels)} series but only {len(PALETTE)} palette colours; draw at most "
            f"{len(PALETTE)} or colour them with the sequential scheme '{SEQUENTIAL_SCHEME}'."
        )
    chosen: list[str | None] = []
    names = (*entity_colors(), *CONTROL_WORDS)
    for label in labels:
        color = entity_color(label, 0)
        named = any(k in label.lower() for k in names)
        chosen.append(color if named and color not in chosen else None)
    free = iter(c for c in PALETTE if c not in chosen)
    return [c if c is not None else next(free) for c in chosen]


def color_scale(labels: Sequence[str]) -> alt.Scale:
    """A categorical scale over ``labels``: :func:`series_colors`, explicit domain and range."""
    labels = list(labels)
    return alt.Scale(domain=labels, range=series_colors(labels))


#: what a legend has on a 390 px phone once the y axis took its place (px), and an 11 px label's
#: width per character and its symbol's (measured on the drawn legends, generous)
PHONE_LEGEND_ROOM, LABEL_CHAR_PX, LEGEND_SYMBOL_PX = 290, 6.6, 30


def legend_columns(labels: Sequence[str], *, most: int = 4) -> int:
    """How many columns of ``labels`` a legend can have and still fit a phone (at least one:
    a label too long for one column must be shortened by its chart)."""
    widest = max((len(label) for label in labels), default=0) * LABEL_CHAR_PX + LEGEND_SYMBOL_PX
    return max(1, min(len(labels), most, int(PHONE_LEGEND_ROOM // widest)))


def chart_title(text: str | Sequence[str], subtitle: str | Sequence[str] = ()) -> alt.Title:
    """A left-anchored title (a list: one line each) whose subtitle reads in both themes
    (:data:`ADAPTIVE_TEXT`)."""
    lines = [subtitle] if isinstance(subtitle, str) else list(subtitle)
    return alt.Title(
        text,
        subtitle=[s for s in lines if s],
        anchor="start",
        subtitleColor=alt.ExprRef(ADAPTIVE_TEXT["expr"]),
    )


def equal_aspect_domain(
    reach: float, *, axis: str, size: tuple[str, str] = ("width", "height")
) -> dict[str, dict[str, str]]:
    """``domainMin``/``domainMax`` expressions that keep one data unit equally long on both axes.

    Each axis spans at least ``[-reach, reach]``; the longer side of the plot gets the longer
    span (x times ``width / height`` when the plot is wider than tall, y times ``height / width``
    when taller), so whatever width the page gives the chart a circle stays round and a square
    square. ``axis`` is ``"x"`` or ``"y"``; ``size`` names the Vega signals holding the plot's
    width and height: Vega signals or numbers (a view in a linked chart has its own, see
    :func:`posviz.charts.linked.view_size`).
    """
    if axis not in ("x", "y"):
        raise ValueError(f"axis={axis!r} is unknown; use 'x' or 'y'.")
    width, height = size
    ratio = f"max(1, {width} / {height})" if axis == "x" else f"max(1, {height} / {width})"
    return {
        "domainMin": {"expr": f"-{reach!r} * {ratio}"},
        "domainMax": {"expr": f"{reach!r} * {ratio}"},
    }


#: Viridis stops (matplotlib's, every 1/8), interpolated by :func:`sequential_colors`.
_VIRIDIS = (
    "#440154", "#46327e", "#365c8d", "#277f8e", "#1fa187",
    "#4ac16d", "#a0da39", "#d0e11c", "#fde725",
)  # fmt: skip


def sequential_colors(count: int) -> list[str]:
    """``count`` colours along :data:`SEQUENTIAL_SCHEME` (viridis), dark to light, as hex.

    For many ordered series (16 ALiBi heads, steep to gentle): neighbours look alike, the ends
    differ, and no colour is reused.
    """
    if count < 1:
        raise ValueError(f"count={count}: ask for at least one colour.")
    stops = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in _VIRIDIS]
    out = []
    for k in range(count):
        t = k / max(count - 1, 1) * (len(stops) - 1)
        lo = min(int(t), len(stops) - 2)
        f = t - lo
        rgb = (round(a + (b - a) * f) for a, b in zip(stops[lo], stops[lo + 1], strict=True))
        out.append("#" + "".join(f"{v:02x}" for v in rgb))
    return out
