"""Altair's data-transformer registry is one per process: a home-page thumbnail must not switch it
while another session's chart is drawn (the scale smoke's "wrong chart", issue 35).

``st.altair_chart`` enables its own transformer (Arrow datasets collected in a dict of that call)
under Streamlit's lock; ``posviz.export.chart_spec`` enables Altair's default one. The home cards
built their thumbnails' specs under export's *own* lock, so one session's chart could be drawn
between the thumbnail's switch and its read: the thumbnail's data landed in that session's chart
(same spec, one more dataset) and the thumbnail lost its data; or the session's chart was drawn
with the default transformer (its data inline: another spec). Measured with two threads (one
drawing a chart as Streamlit does, one building thumbnail specs): 388 of 400 drawings differed
from the same drawing alone; with one lock, 0 of 400.
"""

from __future__ import annotations

import hashlib
import json
import threading

import altair as alt
import numpy as np
import pandas as pd


def _chart(seed: int) -> alt.Chart:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"x": np.arange(40), "y": rng.standard_normal(40)})
    return alt.Chart(frame).mark_line().encode(x="x:Q", y="y:Q")


def _drawn(chart) -> tuple[str, list[str]]:
    """What ``st.altair_chart`` sends for ``chart``: the spec and a digest of each dataset."""
    from streamlit.elements import vega_charts
    from streamlit.proto.VegaLiteChart_pb2 import VegaLiteChart

    spec = vega_charts._convert_altair_to_vega_lite_spec(chart)
    proto = VegaLiteChart()
    vega_charts._marshall_chart_data(proto, spec)
    data = [hashlib.sha256(d.data.data).hexdigest()[:12] for d in proto.datasets]
    return json.dumps(spec, sort_keys=True), data


def test_a_session_drawing_while_a_home_thumbnail_is_built_gets_its_own_chart(monkeypatch):
    from types import SimpleNamespace

    from posviz import export
    from posviz.page_models import home
    from posviz.ui import home_cards
    from posviz.ui.compat import ALTAIR_LOCK

    card, other = _chart(1), _chart(2)
    alone = _drawn(other)
    inside, card_read = threading.Event(), threading.Event()
    drawn: list[tuple[str, list[str]]] = []
    sessions: list[threading.Thread] = []

    class SessionChart:
        """Another session's chart: stops inside Streamlit's drawing (its transformer switched
        on) until the thumbnail has read its chart."""

        def to_dict(self, **kwargs):
            inside.set()
            card_read.wait()
            return other.to_dict(**kwargs)

    class CardChart:
        """The card's hero chart: a session starts drawing between the thumbnail's switch of the
        registry and its read, wherever no lock keeps it out."""

        def to_dict(self, **kwargs):
            guarded = ALTAIR_LOCK.locked()  # decided before the session thread exists
            session = threading.Thread(target=lambda: drawn.append(_drawn(SessionChart())))
            sessions.append(session)
            session.start()
            if not guarded:
                inside.wait()  # the session has switched the registry to its own transformer
            return card.to_dict(**kwargs)

    specs: list[dict] = []
    monkeypatch.setattr(home, "picture", lambda *_, **__: SimpleNamespace(chart=CardChart()))
    monkeypatch.setattr(
        export, "thumbnail_png", lambda spec, **_: specs.append(spec) or b"png", raising=True
    )
    home_cards.card_thumbnail.clear()
    try:
        assert home_cards.card_thumbnail("pages/sinusoidal.py") == b"png"
    finally:
        card_read.set()
        for session in sessions:
            session.join()
        home_cards.card_thumbnail.clear()

    assert drawn == [alone], "the session's chart changed while the thumbnail was built"
    (spec,) = specs
    values = [v for v in spec.get("datasets", {}).values() if isinstance(v, list)]
    assert [len(v) for v in values] == [40], f"the thumbnail lost its data: {spec.get('data')}"


def test_every_altair_spec_posviz_builds_holds_streamlits_lock():
    """``export.chart_spec`` without a lock (the thumbnails, the figures) takes the one
    Streamlit holds while it draws, once the UI is loaded."""
    from posviz import export
    from posviz.ui.compat import ALTAIR_LOCK

    held = []

    class Probe:
        def to_dict(self, **kwargs):
            held.append(ALTAIR_LOCK.locked())
            return _chart(3).to_dict(**kwargs)

    export.chart_spec(Probe())
    assert held == [True]
