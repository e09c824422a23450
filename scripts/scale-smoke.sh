#!/usr/bin/env bash
# Beyond one process, proved on this machine without Docker:
#   3 posviz replicas (streamlit run, hosted profile, one cookie secret, shared HF cache and lab
#   store) + HAProxy with the repository's own config (deploy/compose/haproxy/haproxy.cfg rendered
#   for loopback ports), everything on 127.0.0.1; then the websocket load test through the proxy:
#   30 sessions for 60 s moving sliders, switching pages, uploading tables (and starting a lab run
#   where the app has lab pages). 30 s in, one replica is SIGKILLed (what an OOM kill does) and
#   restarted 10 s later (what the orchestrator does): sessions on the other replicas must see
#   nothing, sessions on the killed one must reconnect to a survivor and get their view back from
#   the URL. Then every entry of the shared lab store must load; a real Chromium tab (where one is
#   installed) must keep its linked view and a live session while every replica is killed and
#   restarted in turn; and 20 s with the proxy's affinity line removed must show uploads failing.
#   Last, LAB_BURST (10) sessions spread over the replicas press Run at once on one uncached lab
#   question, then on the cheapest paper check (one runner, one run id for both): for each, the
#   store's claims log must show exactly one claim and one training, every session its answer.
#   Prints counts, p50/p95 latency, RSS per replica; exits non-zero if any promise fails. About
#   4-5 minutes on 2 cores.
#
#   ./scripts/scale-smoke.sh                      # the numbers in the README
#   REPLICAS=4 SESSIONS=40 DURATION=90 ./scripts/scale-smoke.sh
#
# Needs haproxy (installed with apt-get when run as root); not part of the default tests.
source "$(dirname "$0")/_venv.sh" requirements-dev.txt
source scripts/_haproxy.sh scale-smoke  # _venv.sh has moved to the repository root
DURATION="${DURATION:-60}"
exec .venv/bin/python tests/load/loadtest.py \
  --replicas "${REPLICAS:-3}" --sessions "${SESSIONS:-30}" --seconds "$DURATION" \
  --kill-after "$(( DURATION / 2 ))" --restart-after 10 --no-affinity-seconds 20 --browser \
  --lab-burst "${LAB_BURST:-10}" "$@"
