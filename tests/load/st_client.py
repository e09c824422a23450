"""A minimal Streamlit client over the app's own websocket, for load tests.

It speaks the protocol the browser speaks (``/_stcore/stream``; protobuf ``BackMsg`` out,
``ForwardMsg`` in): a script run is requested with a ``rerun_script`` ``ClientState`` (page, query
string, widget states) and answered by deltas until ``script_finished``. The deltas of one run are
parsed with Streamlit's own test tree (``streamlit.testing.v1``), so widgets are found by key and
their new state is built exactly as ``AppTest`` builds it. Only widgets that changed are sent; the
server keeps the rest of the session's state, as it does for a browser.

Like a browser it first loads the page over HTTP and keeps the cookies it is given (the proxy's
affinity cookie, Streamlit's XSRF cookie) for the websocket and for uploads, updating them from
every response; uploads go the browser's way (``file_urls_request`` on the websocket, then an HTTP
PUT with the XSRF header); after a lost connection :meth:`StreamlitSession.reconnect` opens a new
websocket and reruns the page from its URL, as the browser does when its server went away.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any, NamedTuple

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1.element_tree import ElementTree, parse_tree_from_messages

_GENERATED_NAMES = re.compile(r'"(param|view|selector|concat|layer|data)_\d+"')


class ChartPart(NamedTuple):
    """One chart as the browser gets it: ``spec`` (generated names masked), ``data`` (a digest
    of its data bytes) and ``datasets`` (``(name, Arrow IPC bytes)`` in the order sent)."""

    spec: str
    data: str
    datasets: tuple[tuple[str, bytes], ...] = ()


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

    def chart_parts(self) -> list[ChartPart]:
        """Each chart on the page: its spec (auto-generated names masked, keys sorted), a digest
        of its data bytes, and the data itself (each named dataset's Arrow bytes; the unnamed
        top-level data, if any, under the name "")."""
        parts = []
        for chart in self.charts():
            proto = chart.proto
            spec = json.dumps(json.loads(_GENERATED_NAMES.sub('"_"', proto.spec)), sort_keys=True)
            data = hashlib.sha256()
            datasets = []
            for dataset in proto.datasets:
                data.update(dataset.data.data)
                datasets.append((dataset.name, dataset.data.data))
            data.update(proto.data.data)
            if proto.data.data:
                datasets.append(("", proto.data.data))
            parts.append(ChartPart(spec, data.hexdigest()[:16], tuple(datasets)))
        return parts

    def chart_digest(self) -> str:
        """A digest of every chart on the page: spec (auto-generated names masked) + data bytes."""
        digest = hashlib.sha256()
        for spec, data, _ in self.chart_parts():
            digest.update(spec.encode())
            digest.update(data.encode())
        return digest.hexdigest()[:16]


def _placeholders_filled(deltas: list[ForwardMsg]) -> list[ForwardMsg]:
    """``deltas`` without an element that a later block replaces at the same place (an
    ``st.empty()`` filled with a container, as home's card pictures are): Streamlit's tree parser
    keeps a placeholder's children only when it is a block, and fails on an element there."""
    filled: set[tuple[int, ...]] = set()
    kept: list[ForwardMsg] = []
    for msg in reversed(deltas):
        path = tuple(msg.metadata.delta_path)
        kind = msg.delta.WhichOneof("type")
        if kind == "add_block":
            filled.add(path)
        elif kind == "new_element" and path in filled:
            continue
        kept.append(msg)
    return kept[::-1]


class StreamlitSession:
    """One browser-less session of a running Streamlit app (``async with`` it)."""

    def __init__(self, base_url: str, page: str = "", query: str = "", *, timeout: float = 120):
        self.base_url = base_url.rstrip("/")
        self.ws_url = self.base_url.replace("http://", "ws://") + "/_stcore/stream"
        self.page = page  # the page's url_path; "" is the default page
        self.query = query
        self.timeout = timeout
        self.page_hash = ""
        self.session_id = ""  # the server's id of this session (uploads are tied to it)
        self.cookies: dict[str, str] = {}
        self.tree: ElementTree | None = None
        self._ws: Any = None

    async def __aenter__(self) -> StreamlitSession:
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def connect(self) -> None:
        """Load the page and its health check as a browser does (cookies), open the websocket."""
        await asyncio.to_thread(self._http, "GET", f"/{self.page}")
        await asyncio.to_thread(self._http, "GET", "/_stcore/health")  # sets the XSRF cookie
        headers = {"Cookie": self._cookie_header()} if self.cookies else {}
        xsrf = self.cookies.get("_streamlit_xsrf")
        self._ws = await websockets.connect(
            self.ws_url, subprotocols=["streamlit", *([xsrf] if xsrf else [])],
            additional_headers=headers, max_size=256 * 2**20, open_timeout=self.timeout,
            compression=None,
        )  # fmt: skip
        self._keep_cookies(self._ws.response.headers.get_all("Set-Cookie"))

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()

    async def reconnect(self) -> RunResult:
        """A new websocket (the old server may be gone) and the page rebuilt from its URL."""
        # the old connection is already dead: that is why we are here
        with contextlib.suppress(OSError, websockets.exceptions.WebSocketException):
            await self.close()
        self.page_hash = ""
        self.session_id = ""
        await self.connect()
        return await self.run()

    def _cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def _keep_cookies(self, set_cookies: list[str]) -> None:
        for header in set_cookies:
            jar = SimpleCookie()
            jar.load(header)
            self.cookies.update({name: morsel.value for name, morsel in jar.items()})

    def _http(self, method: str, path: str, body: bytes | None = None,
              headers: dict[str, str] | None = None) -> int:  # fmt: skip
        """One HTTP request with this session's cookies; returns the status, keeps new cookies."""
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = self._cookie_header()
        request = urllib.request.Request(self.base_url + path, data=body, method=method,
                                         headers=sent)  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
                self._keep_cookies(response.headers.get_all("Set-Cookie") or [])
                return response.status
        except urllib.error.HTTPError as err:
            self._keep_cookies(err.headers.get_all("Set-Cookie") or [])
            return err.code

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
                self.session_id = msg.new_session.initialize.session_id or self.session_id
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
        tree = parse_tree_from_messages(_placeholders_filled(deltas))
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

    def _element_id(self, kind: str, key: str) -> str:
        """The widget id of an element the test tree does not model (e.g. ``file_uploader``)."""
        assert self.tree is not None, "run() first"
        for element in self.tree.get(kind):
            widget_id = getattr(element.proto, "id", "")
            if widget_id.endswith(f"-{key}"):
                return widget_id
        raise KeyError(f"no {kind} with key {key!r} on the page")

    async def upload(self, key: str, filename: str, data: bytes) -> tuple[int, RunResult | None]:
        """Upload ``data`` through the ``file_uploader`` with ``key``, as a browser does.

        Asks the server for an upload URL on the websocket, PUTs the file there (multipart, XSRF
        header + cookie), then sets the widget. Returns the PUT's HTTP status and the run it
        caused (``None`` when the PUT failed: e.g. 400 when the request reached a replica that
        does not hold this session).
        """
        widget_id = self._element_id("file_uploader", key)
        back = BackMsg()
        request_id = uuid.uuid4().hex
        back.file_urls_request.request_id = request_id
        back.file_urls_request.file_names.append(filename)
        back.file_urls_request.session_id = self.session_id
        await self._ws.send(back.SerializeToString())
        while True:
            msg = ForwardMsg.FromString(await asyncio.wait_for(self._ws.recv(), self.timeout))
            kind = msg.WhichOneof("type")
            if kind == "file_urls_response" and msg.file_urls_response.response_id == request_id:
                break
        response = msg.file_urls_response
        if response.error_msg or not response.file_urls:
            raise RuntimeError(f"no upload URL: {response.error_msg!r}")
        urls = response.file_urls[0]
        boundary = uuid.uuid4().hex
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        )
        body = head.encode() + data + f"\r\n--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        if "_streamlit_xsrf" in self.cookies:
            headers["X-Xsrftoken"] = self.cookies["_streamlit_xsrf"]
        status = await asyncio.to_thread(self._http, "PUT", urls.upload_url, body, headers)
        if status not in (200, 204):
            return status, None
        state = WidgetState(id=widget_id)
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.file_id, info.name, info.size = urls.file_id, filename, len(data)
        info.file_urls.CopyFrom(urls)
        return status, await self.run([state])
