"""A page's answer as it ran in Streamlit's ``AppTest``: its verdict sentence and its hero chart.

Used by ``scripts/make_home_answers.py`` (which stores the answers the home page's cards show) and
``tests/test_home_answers.py`` (which checks the stored answers against the pages).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow.ipc


def page_answer(at: Any) -> dict[str, Any]:
    """A page's verdict sentence and hero spec (data inlined) from its run in ``AppTest``: the
    first Markdown block is the verdict, the first chart the hero."""
    return {
        "verdict": verdict_text(at.markdown[0].value),
        "hero": inline_spec(at.get("vega_lite_chart")[0].proto),
    }


def verdict_text(markdown: str) -> str:
    """The plain sentence inside the verdict's Markdown (bold, escaped by ``safe_md``), without
    the provenance badges drawn after it (``:gray-badge[…]``, posviz.analysis.provenance)."""
    line = re.sub(r"(\s:gray-badge\[(?:\\.|[^\]\\])*\])+$", "", markdown.strip())
    return re.sub(r"\\(.)", r"\1", line.removeprefix("**").removesuffix("**"))


def inline_spec(proto: Any) -> dict[str, Any]:
    """A chart element's Vega-Lite spec with its Arrow datasets turned into inline values."""
    spec = json.loads(proto.spec)
    datasets = dict(spec.get("datasets", {}))
    for dataset in proto.datasets:
        table = pyarrow.ipc.open_stream(dataset.data.data).read_all()
        datasets[dataset.name] = json.loads(table.to_pandas().to_json(orient="records"))
    if not datasets:
        return spec
    # Streamlit names a dataset by a hash of its bytes, which moves when BLAS rounds a last digit
    # differently; the values are compared within a tolerance, so the names are made positional.
    renamed = {name: f"dataset_{i}" for i, name in enumerate(datasets)}  # in emitted order
    text = json.dumps({**spec, "datasets": datasets})
    for old, new in renamed.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    return json.loads(text)
