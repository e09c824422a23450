"""Shared test setup: repository paths, AppTest helpers, offline guards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Tests never talk to the real hub: anything that forgets to point HF_ENDPOINT at a loopback server
# fails fast instead of hanging on a closed network.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The Inside-real-models page computes 32-token windows only in tests (the page sweeps, the browser
# servers): its 64-256-token computations are minutes of CPU cold, and tests/test_inside_real.py
# asks for the other lengths itself. The page's handling of the cap is tested in test_inside_page.
os.environ.setdefault("POSVIZ_INSIDE_MAX_WINDOW", "32")
# huggingface_hub freezes HF_HUB_OFFLINE into its constants when first imported: imported here,
# before any test sets it for itself, so an offline test cannot leave every later hub test of its
# process (an xdist worker) offline.
import huggingface_hub.constants  # noqa: E402, F401


def app_test(
    page: str | None = None,
    *,
    query: dict[str, str] | None = None,
    timeout: float = 60,
    server_address: str = "127.0.0.1",
):
    """An ``AppTest`` of app.py opened at ``page`` and run once, as a browser opening the page's
    URL: app.py runs (page config, style, ``st.navigation``), then that page; the home page is
    not rendered first. ``page`` is a page's key, its script ("pages/sinusoidal.py") or, for a
    page generated without one (a lab study's), its URL segment ("lab_learned"; see
    posviz.navigation); ``None`` opens the default page (home).

    ``query`` pre-fills ``st.query_params`` the way a shared link would; ``server_address`` is the
    ``server.address`` the app sees ("" or "0.0.0.0": reachable from other machines).
    """
    from streamlit import config
    from streamlit.testing.v1 import AppTest

    # Show real exception messages to the tests (the app itself hides them from users).
    config.set_option("client.showErrorDetails", "full")
    # A local server on loopback, as scripts/run-app.sh starts it (server paths allowed there);
    # tests of an exposed server set another address themselves (see test_tables_page).
    config.set_option("server.address", server_address)

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    target = None if page is None else page_hash(page)
    if target is not None:
        # Open the page itself, as a browser opening its URL does: app.py still runs first (page
        # config, style, st.navigation), then the page, and the home page never renders.
        at._page_hash = target
    at.run()
    if target is not None and not at.exception:
        assert at._finished_page_script_hash == target, f"{page} did not open"
    return at


def page_hash(page: str) -> str | None:
    """Streamlit's key for a page (its script or a generated page's URL segment): the hash of
    its URL path, as ``st.Page`` computes it (None for the home page, the default)."""
    from streamlit.util import calc_hash

    from posviz.navigation import HOME, page_spec

    spec = page_spec(page)
    return None if spec.key == HOME else calc_hash(spec.url_path)


def assert_no_exception(at) -> None:
    """The page ran without an uncaught exception (Streamlit's red box)."""
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def root() -> Path:
    return ROOT


# --------------------------------------------------------------------------- tiers
#
# Every test is in one tier (pyproject's markers; ``./scripts/test.sh --fast`` runs the first):
#   fast:    unit tests of what a module owns (the default: no marker to write);
#   page:    runs a page of the app in Streamlit's AppTest (marked here, from what the test calls);
#   slow:    over ~2 s (trains a model at full size, starts a server, builds a wheel), by hand;
#   browser: drives Chromium against a real server, by hand.
# A test that calls ``app_test`` (or ``AppTest``), itself or through a helper or fixture of its own
# module, is a page test without a marker; one that opens an AppTest without being marked fails,
# so the fast tier never renders a page.

TIERS = ("fast", "page", "slow", "browser")
_PAGE_NAMES = frozenset({"app_test", "AppTest"})


def _codes(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            yield from _codes(const)


def _reaches_a_page(func, seen: set[int]) -> bool:
    """Whether ``func`` names ``app_test``/``AppTest``, itself or through a function of the test
    modules (their helpers, fixtures and ``*_support`` modules) that it names."""
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None or id(code) in seen:
        return False
    seen.add(id(code))
    scope = getattr(func, "__globals__", {})
    for c in _codes(code):
        for name in c.co_names:
            if name in _PAGE_NAMES:
                return True
            helper = scope.get(name)
            module = getattr(helper, "__module__", "") or ""
            ours = module.startswith("test_") or module.endswith("_support")
            if callable(helper) and ours and _reaches_a_page(helper, seen):
                return True
    return False


#: the modules that read every page's shared first render (tests/page_support.py caches it per
#: process): one xdist group, so the renders are paid once per run, not once per module's worker
SHARED_RENDERS = ("test_pages.py", "test_exports.py", "test_chart_hygiene.py")


#: files split into this many units of work, their tests dealt out by their last recorded
#: seconds (a file longer than a third of the run would otherwise end it alone); each unit starts
#: the file's module fixtures (its servers, its browser) on the worker that takes it
SPLIT = {"test_pages_browser.py": 2}


def _group(path: str) -> str:
    """A test file's unit of work for the xdist workers: its own, or the shared renders'."""
    return "page_renders" if path.rsplit("/", 1)[-1] in SHARED_RENDERS else path


def _known() -> dict[str, float]:
    """The last recorded run's seconds per file and per test of a :data:`SPLIT` file."""
    import json

    try:
        return json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}


def _units(nodeids: list[str]) -> dict[str, str]:
    """Each test's unit of work: its file's (:func:`_group`), or for a :data:`SPLIT` file one of
    its parts, the tests dealt longest first to the part with the least work so far."""
    known, units, split = _known(), {}, {}
    for nodeid in nodeids:
        path = nodeid.split("::")[0]
        if path.rsplit("/", 1)[-1] in SPLIT:
            split.setdefault(path, []).append(nodeid)
        else:
            units[nodeid] = _group(path)
    for path, ids in split.items():
        parts = [0.0] * SPLIT[path.rsplit("/", 1)[-1]]
        typical = sorted(known.get(i, 0.0) for i in ids)[len(ids) // 2] or 1.0
        for nodeid in sorted(ids, key=lambda i: (-known.get(i, typical), i)):
            part = parts.index(min(parts))
            parts[part] += known.get(nodeid, typical)
            units[nodeid] = f"{path} (part {part + 1} of {len(parts)})"
    return units


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (scripts/test.sh), with :data:`SHARED_RENDERS` one unit and
    :data:`SPLIT` files in parts: a unit's tests stay on one worker (its module fixtures, such as a
    browser's servers, start once per unit)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        units: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.units is None and self.collection:
                self.units = _units(list(self.collection))
            return (self.units or {}).get(nodeid) or _group(nodeid.split("::")[0])

    return ByUnit(config, log)


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if any(item.get_closest_marker(tier) for tier in ("page", "slow", "browser")):
            continue
        seen: set[int] = set()
        funcs = [getattr(item, "function", None)]
        fixtures = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        funcs += [d.func for defs in fixtures.values() for d in defs if d.baseid]
        if any(f is not None and _reaches_a_page(f, seen) for f in funcs):
            item.add_marker(pytest.mark.page)
        else:
            item.add_marker(pytest.mark.fast)
    # Longest work first, one unit of work (a file, or the shared renders) at a time: the xdist
    # workers take units in this order, so the last ones to start are short and no worker runs
    # alone at the end. A unit's length is what it took in the last recorded run
    # (tests/durations.json), else a guess from its tests' tiers.
    units = _units([item.nodeid for item in items])
    work = _work_units(items, units)
    items.sort(key=lambda item: -work[units[item.nodeid]])  # stable


#: the last recorded run's seconds per test file (``POSVIZ_RECORD_DURATIONS=1 ./scripts/test.sh``)
DURATIONS = ROOT / "tests" / "durations.json"
#: a file missing from :data:`DURATIONS`: seconds guessed per test of each tier
_GUESS_S = {"browser": 20.0, "slow": 5.0, "page": 2.0, "fast": 0.05}


def _work_units(items, units: dict[str, str]) -> dict[str, float]:
    """Seconds of each unit of work (``units``: test → unit) of ``items``."""
    known = _known()
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    work: dict[str, float] = {}
    for path, tests in files.items():
        guesses = [
            _GUESS_S[next((t for t in _GUESS_S if i.get_closest_marker(t)), "fast")] for i in tests
        ]
        share = float(known.get(path, sum(guesses))) / len(tests)  # a file's seconds, per test
        for item in tests:
            unit = units[item.nodeid]
            work[unit] = work.get(unit, 0.0) + known.get(item.nodeid, share)
    return work


_SPENT: dict[str, float] = {}


def pytest_runtest_logreport(report) -> None:
    """Sum each file's seconds (setup, call, teardown) for ``POSVIZ_RECORD_DURATIONS``."""
    recording = os.environ.get("POSVIZ_RECORD_DURATIONS") == "1"
    if recording and not os.environ.get("PYTEST_XDIST_WORKER"):
        path = report.nodeid.split("::")[0]
        _SPENT[path] = _SPENT.get(path, 0.0) + report.duration
        if path.rsplit("/", 1)[-1] in SPLIT:
            _SPENT[report.nodeid] = _SPENT.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus) -> None:
    """Write :data:`DURATIONS` after a run with ``POSVIZ_RECORD_DURATIONS=1`` (the controller's
    or the one process's view: every report reaches it)."""
    import json

    if os.environ.get("POSVIZ_RECORD_DURATIONS") != "1" or not _SPENT:
        return
    rounded = {path: round(seconds, 1) for path, seconds in sorted(_SPENT.items())}
    DURATIONS.write_text(json.dumps(rounded, indent=0) + "\n")


_RUNNING: dict[str, object] = {}


def pytest_runtest_setup(item) -> None:
    _RUNNING["item"] = item


def pytest_runtest_teardown(item) -> None:
    _RUNNING.pop("item", None)


def pytest_configure(config) -> None:
    """Guard the tiers: an AppTest opened by a test of the fast tier fails with how to fix it."""
    from streamlit.testing.v1 import AppTest

    original = AppTest.from_file.__func__

    def from_file(cls, *args, **kwargs):
        item = _RUNNING.get("item")
        if item is not None and item.get_closest_marker("fast"):
            pytest.fail(
                f"{item.nodeid} opens an AppTest but is in the fast tier: mark it "
                "@pytest.mark.page (or call app_test through a helper of its own module).",
                pytrace=False,
            )
        return original(cls, *args, **kwargs)

    AppTest.from_file = classmethod(from_file)
    _scan_components_once()


def _scan_components_once() -> None:
    """AppTest scans every installed distribution for Streamlit components (v2 manifests) on each
    run, rerun included (with its thread pool: 4.4 of 45 CPU-s for tests/test_hostile_links.py's
    102 tests). The installed packages do not change while the tests run, so each test process
    scans once. (A server scans once, at its start; this is AppTest's cost alone.)"""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    found: list = []

    def scan_once(max_workers=None):
        if not found:
            found.append(scan(max_workers))
        return list(found[0])

    manifest_scanner.scan_component_manifests = scan_once


@pytest.fixture(scope="session")
def app_lab_dir(tmp_path_factory):
    """The lab store of :func:`app_server`: empty at the start (as on a newcomer's machine), never
    the machine's own ``~/.cache/posviz/lab``."""
    return tmp_path_factory.mktemp("app_lab")


@pytest.fixture(scope="session")
def app_server(app_lab_dir):
    """The app on its defaults (no settings of its own but an empty lab store), one server per
    test process, shared by the browser modules that need nothing else: each page's first
    computation is then done once per process, not once per module (a server's start and the
    sinusoid's and learned table's first renders were paid by four modules)."""
    from browser_support import start_streamlit_server, stop_process

    url, process = start_streamlit_server(env={"POSVIZ_LAB_DIR": str(app_lab_dir)})
    yield url
    stop_process(process)


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium shared by a browser test module (skips without one; see
    tests/browser_support.py)."""
    from browser_support import chromium

    with chromium() as browser:
        yield browser
