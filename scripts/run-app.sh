#!/usr/bin/env bash
# Install what the app needs into .venv (once) and start it on http://localhost:8501 (offline default).
#
# It listens on 127.0.0.1 only: nobody else on the network can reach it, and loading tables from
# paths on this machine's disk stays on. To let others in, choose the address explicitly:
#   POSVIZ_ADDRESS=0.0.0.0 ./scripts/run-app.sh     # every interface (PORT=… picks the port)
# On any address other than loopback the "Local path on the server" source is off (others could
# read your files) unless you also set POSVIZ_ALLOW_LOCAL_PATHS=1.
#
# The first start computes the lab's default answers and paper checks in the background (a few
# minutes on two cores; the pages show the progress and each answer as it is stored; later starts
# read them from the store). POSVIZ_LAB_WARMUP=0 turns that off.
source "$(dirname "$0")/_venv.sh" requirements.txt
export POSVIZ_LAB_WARMUP="${POSVIZ_LAB_WARMUP:-1}"
exec .venv/bin/python -m posviz.ui.launch run app.py \
  --server.address "${POSVIZ_ADDRESS:-127.0.0.1}" --server.port "${PORT:-8501}" "$@"
