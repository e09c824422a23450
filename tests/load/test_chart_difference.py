"""How the load harness names a wrong chart: which chart differs from the reference, where, and by
how much (a last-bit difference and another session's data read differently)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _arrow(frame: pd.DataFrame) -> bytes:
    """A frame as Streamlit sends a chart's dataset (an Arrow IPC stream)."""
    import pyarrow as pa

    table = pa.Table.from_pandas(frame)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _chart(spec: str, *frames: pd.DataFrame, names: tuple[str, ...] = ()):
    """A chart part whose spec names its datasets (``{0}``, ``{1}`` … in ``spec``)."""
    from st_client import ChartPart

    names = names or tuple(f"h{abs(hash(_arrow(f)))}" for f in frames)
    datasets = tuple((n, _arrow(f)) for n, f in zip(names, frames, strict=True))
    return ChartPart(spec.format(*names), "|".join(n for n in names), datasets)


def test_a_wrong_chart_is_named_by_its_place_and_first_difference() -> None:
    from loadtest import chart_difference
    from st_client import ChartPart

    want = [ChartPart('{"mark": "line", "x": 1}', "aaa"), ChartPart('{"mark": "rect"}', "bbb")]
    assert chart_difference(want[:1], want) == "1 charts, reference 2"
    moved = [ChartPart('{"mark": "line", "x": 2}', "aaa"), want[1]]
    said = chart_difference(moved, want)
    assert said.startswith("chart 1 of 2: spec differs at 22:") and 'x": 2}' in said
    other = [want[0], ChartPart('{"mark": "rect"}', "ccc")]
    assert chart_difference(other, want).startswith("chart 2 of 2: same spec, other data")


def test_a_last_bit_difference_says_how_small_it_is() -> None:
    from loadtest import chart_difference

    y = np.linspace(-1.0, 1.0, 50)
    want = _chart('{{"data": {{"name": "{0}"}}}}', pd.DataFrame({"x": range(50), "y": y}))
    nudged = y.copy()
    nudged[7] = np.nextafter(nudged[7], 2.0)  # one value, one unit in the last place
    got = _chart('{{"data": {{"name": "{0}"}}}}', pd.DataFrame({"x": range(50), "y": nudged}))
    said = chart_difference([got], [want])
    # a dataset's name is a hash of its bytes, so the specs differ there only: not another spec
    assert said.startswith("chart 1 of 1: same spec, other data: dataset 1 of 1: y: 1 of 50")
    assert f"max |Δ| {abs(nudged[7] - y[7]):.3g} (|reference| ≤ 1)" in said


def test_another_charts_data_in_a_chart_is_named_as_such() -> None:
    from loadtest import chart_difference
    from st_client import ChartPart

    own = pd.DataFrame({"x": range(5), "y": np.arange(5.0)})
    stray = pd.DataFrame({"row": range(12), "col": range(12), "value": np.ones(12)})
    want = _chart('{{"data": {{"name": "{0}"}}}}', own, names=("a1",))
    got = ChartPart(want.spec, "other", (*want.datasets, ("b2", _chart("", stray).datasets[0][1])))
    said = chart_difference([got], [want])
    assert said == (
        "chart 1 of 1: same spec, other data: 1 dataset(s) more than the reference, not named "
        "in the spec (another chart’s data): 12 rows × ['row', 'col', 'value']"
    )
    bigger = _chart('{{"data": {{"name": "{0}"}}}}', pd.concat([own, own]), names=("c3",))
    assert "10 rows × ['x', 'y'] vs reference 5 rows" in chart_difference([bigger], [want])
