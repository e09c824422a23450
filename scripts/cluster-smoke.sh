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
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's haproxy ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy) >/dev/null
  else
    echo "cluster-smoke needs haproxy: apt-get install haproxy (or your system's package)." >&2
    exit 2
  fi
fi
exec .venv/bin/python tests/load/cluster_smoke.py "$@"
