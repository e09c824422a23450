#!/usr/bin/env bash
# Install what the tests need into .venv (once), make sure a Chromium exists for the browser tests,
# and run every test. Extra arguments go to pytest (e.g. -k sinusoid, -m "not browser").
source "$(dirname "$0")/_venv.sh" requirements-dev.txt
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's chromium for the browser tests ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >/dev/null
  elif command -v apt-get >/dev/null && command -v sudo >/dev/null; then
    (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
  else
    echo "No Chromium found: browser tests will be SKIPPED. Install Chromium (e.g. 'apt-get install chromium'," >&2
    echo "'dnf install chromium', 'brew install --cask chromium') or set POSVIZ_CHROMIUM=/path/to/chrome." >&2
  fi
fi
if [ "${CI:-}" = "true" ]; then export POSVIZ_REQUIRE_BROWSER=1; fi
exec .venv/bin/python -m pytest "$@"
