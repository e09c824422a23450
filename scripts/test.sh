#!/usr/bin/env bash
# Install what the tests need into .venv (once), make sure a Chromium (browser tests) and HAProxy (the
# real-proxy deploy tests) exist, check lint, format and the import layering, then run every test.
#
#   ./scripts/test.sh            every tier: fast (unit), page (AppTest), slow, browser; not the
#                                full-size answers (below)
#   ./scripts/test.sh --fast     lint + the fast tier only (unit tests; no page, server, browser or
#                                full-size training): the run before each commit
#   ./scripts/test.sh --answers  the lab's presets and the paper checks trained at full size, their
#                                shipped numbers pinned (~25 min on 2 cores; scripts/docker-smoke.sh
#                                runs it, where the image's warm store is built)
#
# The tiers are pytest markers (pyproject.toml; tests/conftest.py sets fast/page itself). Extra
# arguments go to pytest (e.g. -k sinusoid, -m "not browser").
source "$(dirname "$0")/_venv.sh" requirements-dev.txt
tier=(-m "not answers")
if [ "${1:-}" = "--fast" ]; then
  shift
  tier=(-m fast)
elif [ "${1:-}" = "--answers" ]; then
  shift
  tier=(-m answers)
else
  missing=()
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=(chromium chromium-driver)
  command -v haproxy >/dev/null || missing+=(haproxy)
  if [ ${#missing[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
      echo "Installing Debian's ${missing[*]} for the browser and proxy tests ..."
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null
    elif command -v apt-get >/dev/null && command -v sudo >/dev/null; then
      (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null
    else
      echo "Missing ${missing[*]}: browser tests (Chromium) and real-proxy tests (HAProxy) will be SKIPPED." >&2
      echo "Install them (e.g. 'apt-get install chromium haproxy') or set POSVIZ_CHROMIUM=/path/to/chrome." >&2
    fi
  fi
  if [ "${CI:-}" = "true" ]; then export POSVIZ_REQUIRE_BROWSER=1; fi
fi
echo "ruff (lint + format) and import-linter (layers) ..."
.venv/bin/ruff check --quiet . && .venv/bin/ruff format --check --quiet . && .venv/bin/lint-imports --no-logo --no-cache || {
  echo "Lint, format or layering failed: run '.venv/bin/ruff check .', '.venv/bin/ruff format .' and '.venv/bin/lint-imports'." >&2
  exit 1
}
# Workers (pytest-xdist), a test file per worker at a time (its module fixtures, such as a
# browser's servers, start once; the three modules that read every page's first render are one
# unit of work, tests/conftest.py, so those renders are paid once). The fast tier: two. The other
# tiers: three, which on the same 2,517 tests took 988 s of pytest against 1,132 s for two (quiet
# clean clones, 2 cores; while one worker waits on a server or a browser, another computes).
# POSVIZ_TEST_WORKERS=0: one process.
default_workers=3
if [ "${tier[1]}" = "fast" ]; then default_workers=2; fi
workers="${POSVIZ_TEST_WORKERS:-$default_workers}"
parallel=()
# --no-loadscope-reorder: files in the order tests/conftest.py gives them (longest first, from the
# last recorded run's tests/durations.json), not xdist's most-tests-first, which left one-test
# modules (the load test) to the end. POSVIZ_RECORD_DURATIONS=1 rewrites tests/durations.json.
if [ "$workers" != "0" ]; then parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder); fi
exec .venv/bin/python -m pytest "${parallel[@]}" "${tier[@]}" "$@"
