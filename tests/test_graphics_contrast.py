"""Graphics read at ≥ 3:1 on both themes (WCAG 2.1 SC 1.4.11, non-text contrast), measured on the
charts' own specs: every mark's colour as the screen shows it (its colour at its opacity over the
page, :func:`posviz.charts.style.composite`) and every legend swatch, against Streamlit's light
and dark backgrounds (:data:`posviz.charts.style.BACKGROUNDS`). A translucent fill counts only
where its edges are drawn (the edges then carry the shape). Issue 37: /inside_models' legend
swatches read 1.2–1.3:1 (the band's fill), the lab's "not ranked" rows 1.7–3.0:1 (faded), the
home cards' pictures were white boxes on the dark page.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import pytest

from posviz.charts.style import (
    BACKGROUNDS,
    PALETTE,
    composite,
    contrast_ratio,
    on_dark,
    relative_luminance,
)

GROUNDS = [ground for grounds in BACKGROUNDS.values() for ground in grounds]


def test_the_colour_helpers_agree_with_their_definitions():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)  # WCAG 2.1: 1 to 21
    assert contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert relative_luminance("#ffffff") == pytest.approx(1.0)
    assert relative_luminance("#808080") == pytest.approx(0.2158605, abs=1e-6)  # sRGB 128
    assert composite("#000000", 0.5, "#ffffff") == "#808080"  # half black over white
    assert composite(PALETTE[0], 1.0, "#123456") == PALETTE[0]
    assert composite(PALETTE[0], 0.0, "#123456") == "#123456"
    with pytest.raises(ValueError, match="opacity"):
        composite("#000000", 1.5, "#ffffff")


def _range(encoding: dict | None) -> list[str]:
    if not encoding:
        return []
    scale = encoding.get("scale") or {}
    return [c for c in scale.get("range", []) if isinstance(c, str) and c.startswith("#")]


def _layers(spec: dict):
    for layer in spec.get("layer", [spec]):
        if "layer" in layer:
            yield from _layers(layer)
        else:
            yield layer


def graphics(spec: dict) -> list[tuple[str, str, float]]:
    """``(what, colour, opacity)`` of every mark and legend swatch a reader must see: a layer's
    colours (its colour, fill or stroke scale, or the mark's own colour) at the layer's lowest
    opacity; a filled mark with a translucent fill counts by its stroke when it has one."""
    out = []
    for layer in _layers(spec):
        mark = layer.get("mark", {})
        mark = {"type": mark} if isinstance(mark, str) else mark
        kind, enc = mark.get("type", ""), layer.get("encoding", {})
        opacity = float(mark.get("opacity", 1.0))
        scaled = [v for v in (enc.get("opacity") or {}).get("scale", {}).get("range", [])]
        opacity *= min(scaled, default=1.0)
        fills = _range(enc.get("color")) or _range(enc.get("fill")) or [mark.get("color")]
        strokes = _range(enc.get("stroke"))
        filled = kind in ("area", "bar", "rect") or mark.get("filled", False)
        fill_alpha = opacity * float(mark.get("fillOpacity", 1.0))
        if filled and fill_alpha < 1 and strokes and mark.get("strokeWidth", 0) > 0:
            out += [
                (f"{kind} edge", c, opacity * float(mark.get("strokeOpacity", 1))) for c in strokes
            ]
        else:
            out += [(kind, c, fill_alpha if filled else opacity) for c in fills if c]
        legend = (enc.get("color") or {}).get("legend")
        if legend is not None and _range(enc.get("color")):
            swatch = float(legend.get("symbolOpacity", fill_alpha if filled else opacity))
            out += [("legend swatch", c, swatch) for c in _range(enc["color"])]
    return out


def low_contrast(spec: dict, grounds=GROUNDS) -> list[str]:
    """Every graphic of ``spec`` under 3:1 on one of ``grounds``, with its ratio."""
    return [
        f"{what} {colour} at opacity {alpha:.2f}: {ratio:.2f}:1 on {ground}"
        for what, colour, alpha in graphics(spec)
        for ground in grounds
        if (ratio := contrast_ratio(composite(colour, alpha, ground), ground)) < 3
    ]


def test_the_spec_reader_sees_a_faded_mark_and_a_bare_translucent_band():
    """The check can fail: a translucent band without edges, a mark at 35 %, a swatch at 18 %."""
    frame = pd.DataFrame({"x": [0, 1], "lo": [0, 0], "hi": [1, 1], "s": ["a", "a"]})
    color = alt.Color("s:N").scale(domain=["a"], range=[PALETTE[0]])
    bare = alt.Chart(frame).mark_area(opacity=0.18).encode(x="x", y="lo", y2="hi", color=color)
    assert low_contrast(bare.to_dict(validate=False))
    faded = alt.Chart(frame).mark_point(opacity=0.35).encode(x="x", y="hi", color=color)
    assert low_contrast(faded.to_dict(validate=False))
    solid = alt.Chart(frame).mark_line().encode(x="x", y="hi", color=color)
    assert graphics(solid.to_dict(validate=False)) and not low_contrast(
        solid.to_dict(validate=False)
    )


def test_inside_real_models_bands_and_legend_read_on_both_themes():
    from posviz.charts.inside import band_lines_chart

    x = np.arange(4.0)
    frame = pd.concat(
        pd.DataFrame({"x": x, "series": name, "value": x, "lo": x - 1, "hi": x + 1})
        for name in ("MiniLM-L6", "SmolLM2", "shuffled positions")
    )
    chart = band_lines_chart(
        frame, x_title="Δ", y_title="score", title="t", controls=("shuffled positions",)
    )
    spec = chart.to_dict(validate=False)
    assert any(what == "legend swatch" for what, _, _ in graphics(spec))
    assert any(what == "area edge" for what, _, _ in graphics(spec))
    assert not low_contrast(spec)


def test_the_labs_bands_and_not_ranked_rows_read_on_both_themes():
    from posviz.charts.lab import lines_chart, ranking_chart

    colors = {"learned table": PALETTE[0], "no positions (control)": "#8c908d"}
    rows = pd.DataFrame(
        {"variant": list(colors), "row": ["learned table", "no positions\nnot ranked"],
         "mean": [0.9, 0.2], "low": [0.8, 0.1], "high": [0.95, 0.3], "in_range": [1.0, 0.9],
         "ranked": [True, False]}
    )  # fmt: skip
    ranking = ranking_chart(rows, colors=colors, title="t").to_dict(validate=False)
    assert not low_contrast(ranking)
    curves = pd.DataFrame(
        {"variant": np.repeat(list(colors), 3), "x": np.tile([0, 1, 2], 2), "y": 0.5,
         "low": 0.4, "high": 0.6}
    )  # fmt: skip
    band = lines_chart(
        curves, x="x", y="y", x_title="step", y_title="accuracy", colors=colors, title="t",
        band=True,
    ).to_dict(validate=False)  # fmt: skip
    assert any(what == "area edge" for what, _, _ in graphics(band))
    assert not low_contrast(band)


def test_a_cards_dark_picture_is_drawn_on_the_dark_page_with_readable_text():
    """The home cards' pictures are static PNGs: the dark one is drawn on Streamlit's dark
    background (not a white box) with text at ≥ 4.5:1 (SC 1.4.3) and marks at ≥ 3:1."""
    from posviz.charts.lab import lines_chart

    colors = {"learned table": PALETTE[0], "no positions (control)": "#8c908d"}
    curves = pd.DataFrame(
        {"variant": np.repeat(list(colors), 2), "x": [0, 1, 0, 1], "y": [0.2, 0.8, 0.5, 0.5]}
    )
    light = lines_chart(
        curves, x="x", y="y", x_title="step", y_title="acc", colors=colors, title="t"
    ).to_dict(validate=False)
    dark = on_dark(light)
    assert "background" not in light  # the light one is left as it was
    ground = dark["background"]
    assert ground in BACKGROUNDS["dark"]
    axis, legend = dark["config"]["axis"], dark["config"]["legend"]
    for colour in (axis["labelColor"], axis["titleColor"], legend["labelColor"]):
        assert contrast_ratio(colour, ground) >= 4.5, colour
    assert contrast_ratio(axis["domainColor"], ground) >= 3
    assert not low_contrast(dark, grounds=[ground])
