#!/usr/bin/env bash
# The lab on a Dask cluster, proved on this machine without Docker (loopback only, bounded):
#   `dask scheduler` + 2 `dask worker` processes (niced: they stand in for other machines) +
#   3 posviz replicas with POSVIZ_LAB_CLUSTER set + HAProxy with the repository's config. Then:
#   10 sessions press Run on one lab page at once -> 1 task, 1 training, 1 store entry, all
#   answered; a worker SIGKILLed mid-training -> the task runs again on the other, stored once,
#   every session answered; a light page's median latency while the cluster trains vs idle
#   (<= 1.2x). Exits non-zero if any promise fails (tests/load/cluster_smoke.py).
#
#   ./scripts/cluster-smoke.sh
#
# Needs haproxy (installed with apt-get when run as root); not part of the default tests.
source "$(dirname "$0")/_venv.sh" requirements-dev.txt
source scripts/_haproxy.sh cluster-smoke  # _venv.sh has moved to the repository root
exec .venv/bin/python tests/load/cluster_smoke.py "$@"
