"""A minimal Streamlit client over the app's own websocket, for load tests.

It speaks the protocol the browser speaks (``/_stcore/stream``; protobuf ``BackMsg`` out,
``ForwardMsg`` in): a script run is requested with a ``rerun_script`` ``ClientState`` (page, query
string, widget states) and answered by deltas until ``script_finished``. The deltas of one run are
parsed with Streamlit's own test tree (``streamlit.testing.v1``), so widgets are found by key and
their new state is built exactly as ``AppTest`` builds it. Only widgets that changed are sent; the
server keeps the rest of the session's state, as it does for a browser.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1.element_tree import ElementTree, parse_tree_from_messages

_GENERATED_NAMES = re.compile(r'"(param|view|selector|concat|layer|data)_\d+"')


@dataclass
class RunResult:
    """One finished script run as the client saw it."""

    tree: ElementTree
    seconds: float
    bytes_received: int
    exceptions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def charts(self) -> list[Any]:
        return list(self.tree.get("vega_lite_chart"))

    def chart_digest(self) -> str:
        """A digest of every chart on the page: spec (auto-generated names masked) + data bytes."""
        digest = hashlib.sha256()
        for chart in self.charts():
            proto = chart.proto
            spec = _GENERATED_NAMES.sub('"_"', proto.spec)
            digest.update(json.dumps(json.loads(spec), sort_keys=True).encode())
            for dataset in proto.datasets:
                digest.update(dataset.data.data)
            digest.update(proto.data.data)
        return digest.hexdigest()[:16]


class StreamlitSession:
    """One browser-less session of a running Streamlit app (``async with`` it)."""

    def __init__(self, base_url: str, page: str = "", query: str = "", *, timeout: float = 120):
        self.ws_url = base_url.replace("http://", "ws://").rstrip("/") + "/_stcore/stream"
        self.page = page  # the page's url_path; "" is the default page
        self.query = query
        self.timeout = timeout
        self.page_hash = ""
        self.tree: ElementTree | None = None
        self._ws: Any = None

    async def __aenter__(self) -> StreamlitSession:
        self._ws = await websockets.connect(
            self.ws_url, subprotocols=["streamlit"], max_size=256 * 2**20,
            open_timeout=self.timeout, compression=None,
        )  # fmt: skip
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._ws.close()

    async def run(self, widgets: list[WidgetState] | None = None) -> RunResult:
        """Ask for a script run (with ``widgets`` changed) and collect it until it finishes."""
        back = BackMsg()
        state = back.rerun_script
        state.query_string = self.query
        state.page_name = self.page
        state.page_script_hash = self.page_hash
        state.widget_states.widgets.extend(widgets or [])
        loop = asyncio.get_running_loop()
        start = loop.time()
        await self._ws.send(back.SerializeToString())
        deltas: list[ForwardMsg] = []
        received = 0
        while True:
            raw = await asyncio.wait_for(self._ws.recv(), self.timeout)
            received += len(raw)
            msg = ForwardMsg.FromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                deltas = []  # a new run starts: what came before belongs to an older one
            elif kind == "navigation":  # st.navigation tells which page this run draws
                self.page_hash = msg.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif kind == "delta":
                deltas.append(msg)
            elif kind == "page_not_found":
                raise RuntimeError(f"page {self.page!r} not found")
            elif kind == "script_finished":
                if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # superseded; the rerun's messages follow
                break
        tree = parse_tree_from_messages(deltas)
        self.tree = tree
        return RunResult(
            tree=tree,
            seconds=loop.time() - start,
            bytes_received=received,
            exceptions=[e.proto.message for e in tree.get("exception")],
            errors=[e.proto.body for e in tree.get("error")],
        )

    def widget(self, kind: str, key: str) -> Any:
        """The widget of type ``kind`` ("slider", "selectbox", …) with user key ``key``."""
        assert self.tree is not None, "run() first"
        return getattr(self.tree, kind)(key=key)

    async def set(self, kind: str, key: str, value: Any) -> RunResult:
        """Change one widget (as a user would) and run the script with it.

        For ``selectbox``/``radio`` ``value`` is the option's label as shown (what the browser
        sends back); for the other widgets it is the value itself.
        """
        widget = self.widget(kind, key)
        if kind in ("selectbox", "radio"):
            if value not in widget.proto.options:
                raise ValueError(f"{key}: {value!r} is not one of {list(widget.proto.options)}")
            state = WidgetState(id=widget.id, string_value=value)
        else:
            state = widget.set_value(value)._widget_state
        return await self.run([state])
