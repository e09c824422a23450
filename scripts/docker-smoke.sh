#!/usr/bin/env bash
# Prove the Docker image on this machine: build it, run it as non-root, wait for HEALTHCHECK to say
# healthy, open every page in headless Chromium and check that none shows an error; report the size.
#
#   sudo ./scripts/docker-smoke.sh          # ~5-10 min on 2 cores the first time; not part of the tests
#
# What it does, and why (image registries are unreachable here, the package index is behind a proxy):
#   1. installs docker.io and debootstrap with apt if missing; starts its own dockerd (temp data root,
#      own socket) unless DOCKER_HOST already answers;
#   2. builds a local base image with debootstrap (Debian minbase + python3 + python3-venv +
#      ca-certificates) from the Debian mirror apt uses here, because `python:3.11-slim` cannot be
#      pulled; passes it as `--build-arg BASE_IMAGE=posviz-base:local`;
#   3. hands two build-only inputs to the build stage through `.build-extra/` (deleted on exit): the
#      host CA bundle as `ca.pem` (pip's HTTPS goes through a TLS-intercepting proxy) and a CPU torch
#      wheel from local disk (PyTorch's CPU index, the Dockerfile's default TORCH_INDEX_URL, is not
#      reachable here). The multi-stage build keeps both out of the final image; step 6 checks that;
#   4. runs the image (its own non-root user; read-only root file system, no capabilities), waits
#      for (healthy);
#   5. loads every page of posviz/ui/pages.py in Chromium (Playwright + /usr/bin/chromium) and fails on
#      any `stException` or error alert;
#   6. checks inside the image: non-root uid, CPU-only torch, no compiler, no CA/wheel left behind, and
#      the bundled default table loads with no network at all (--network none, HF_HUB_OFFLINE=1);
#   7. prints the image size, then removes the container and stops the daemon it started.
#
# Environment knobs: POSVIZ_DOCKER_ROOT=dir keeps the daemon's data root (and so the base image and
# layer cache) between runs; POSVIZ_TORCH_WHEEL=path picks the torch wheel; POSVIZ_IMAGE=name:tag.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
IMAGE="${POSVIZ_IMAGE:-posviz:smoke}"
BASE_IMAGE="posviz-base:local"
WORK="$(mktemp -d /tmp/posviz-docker.XXXXXX)"
DATA_ROOT="${POSVIZ_DOCKER_ROOT:-$WORK/data-root}"
CONTAINER="posviz-smoke-$$"
DOCKERD_PID=""
PY="$ROOT/.venv/bin/python"
log() { printf '[docker-smoke %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

cleanup() {
  set +e
  rm -rf "$ROOT/.build-extra"
  if [ -n "${DOCKER_HOST:-}" ] && docker info >/dev/null 2>&1; then
    docker rm -f "$CONTAINER" >/dev/null 2>&1
  fi
  if [ -n "$DOCKERD_PID" ]; then
    kill "$DOCKERD_PID" 2>/dev/null && wait "$DOCKERD_PID" 2>/dev/null
  fi
  # dockerd leaves its network-namespace mount behind under the exec root: unmount, then remove.
  awk -v w="$WORK/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  rm -rf "$WORK"  # POSVIZ_DOCKER_ROOT, when set, lives outside it and is kept
}
trap cleanup EXIT

need() {  # need COMMAND DEBIAN_PACKAGE
  command -v "$1" >/dev/null && return
  [ "$(id -u)" = 0 ] || { echo "docker-smoke: '$1' is missing; run as root or install $2" >&2; exit 1; }
  log "installing $2 with apt"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2") >/dev/null
}

start_docker() {
  if [ -n "${DOCKER_HOST:-}" ] && docker info >/dev/null 2>&1; then
    log "using the daemon at $DOCKER_HOST"; return
  fi
  need dockerd docker.io
  need docker docker.io
  mkdir -p "$DATA_ROOT" "$WORK/exec"
  export DOCKER_HOST="unix://$WORK/docker.sock"
  log "starting dockerd (data root $DATA_ROOT)"
  dockerd --data-root "$DATA_ROOT" --exec-root "$WORK/exec" --pidfile "$WORK/dockerd.pid" \
    --host "$DOCKER_HOST" >"$WORK/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && return
    kill -0 "$DOCKERD_PID" 2>/dev/null || break
    sleep 1
  done
  echo "docker-smoke: dockerd did not come up; its log:" >&2
  tail -20 "$WORK/dockerd.log" >&2
  exit 1
}

debian_mirror() {  # the first Debian URI apt uses here (deb822 or one-line format)
  local uri
  uri="$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -m1 '/debian/\?$' || true)"
  [ -n "$uri" ] || uri="$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    | awk '{print $2}' | grep -m1 '/debian/\?$' || true)"
  echo "${uri:-http://deb.debian.org/debian}"
}

build_base() {
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    log "base image $BASE_IMAGE exists"; return
  fi
  need debootstrap debootstrap
  local suite mirror
  suite="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
  mirror="$(debian_mirror)"
  log "debootstrap $suite from $mirror (about a minute)"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    "$suite" "$WORK/rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
  # What a slim base would not carry: apt lists and caches, docs, man pages, locales.
  rm -rf "$WORK/rootfs"/var/lib/apt/lists/* "$WORK/rootfs"/var/cache/apt/*.bin \
    "$WORK/rootfs"/var/cache/apt/archives/*.deb "$WORK/rootfs"/usr/share/doc/* \
    "$WORK/rootfs"/usr/share/man/* "$WORK/rootfs"/usr/share/info/*
  find "$WORK/rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'locale.alias' \
    -exec rm -rf {} + 2>/dev/null || true
  tar -C "$WORK/rootfs" -c . | docker import --change 'CMD ["python3"]' - "$BASE_IMAGE" >/dev/null
  log "base image: $(docker image inspect -f '{{.Size}}' "$BASE_IMAGE" | awk '{printf "%.0f MB", $1/1e6}')"
}

torch_wheel() {
  if [ -n "${POSVIZ_TORCH_WHEEL:-}" ]; then echo "$POSVIZ_TORCH_WHEEL"; return; fi
  local dir
  for dir in ${PIP_FIND_LINKS:-} /opt/wheels; do
    ls "$dir"/torch-2.13.0+cpu-cp311-*.whl 2>/dev/null | head -1 && return
  done
  return 0
}

build_image() {
  local wheel ca build_args=()
  rm -rf .build-extra && mkdir .build-extra
  for ca in "${PIP_CERT:-}" /etc/ssl/certs/ca-certificates.crt; do
    if [ -n "$ca" ] && [ -f "$ca" ]; then cp "$ca" .build-extra/ca.pem; break; fi
  done
  wheel="$(torch_wheel)"
  if [ -n "$wheel" ]; then
    log "torch from local disk: $(basename "$wheel") (PyTorch's CPU index is unreachable here)"
    cp "$wheel" .build-extra/
  else
    log "no local CPU torch wheel: the build uses the Dockerfile's TORCH_INDEX_URL"
  fi
  build_args+=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
  log "docker build -t $IMAGE (legacy builder)"
  local start=$SECONDS
  DOCKER_BUILDKIT=0 docker build --network host "${build_args[@]}" -t "$IMAGE" . \
    >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log" >&2; exit 1; }
  rm -rf .build-extra
  log "built in $((SECONDS - start)) s"
}

free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run_and_wait_healthy() {
  PORT="$(free_port)"
  # Hardened the way a careful operator would run it: read-only root, no capabilities.
  docker run -d --name "$CONTAINER" -p "127.0.0.1:$PORT:8501" --read-only --tmpfs /tmp \
    --cap-drop ALL --security-opt no-new-privileges "$IMAGE" >/dev/null
  log "container $CONTAINER on 127.0.0.1:$PORT; waiting for (healthy)"
  local status start=$SECONDS
  while :; do
    status="$(docker inspect -f '{{.State.Health.Status}}' "$CONTAINER")"
    [ "$status" = healthy ] && break
    if [ "$status" = unhealthy ] || [ $((SECONDS - start)) -gt 240 ]; then
      echo "docker-smoke: container is $status; its log:" >&2
      docker logs "$CONTAINER" 2>&1 | tail -30 >&2
      exit 1
    fi
    sleep 2
  done
  log "(healthy) after $((SECONDS - start)) s"
}

check_pages() {
  log "opening every page in headless Chromium"
  PYTHONPATH="$ROOT" "$PY" - "http://127.0.0.1:$PORT" <<'PYEOF'
import sys
import time

from playwright.sync_api import sync_playwright

from posviz.ui.pages import all_pages

base = sys.argv[1]
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
failures = []
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    for spec in all_pages():
        start = time.perf_counter()
        page.goto(f"{base}/{spec.url_path}", wait_until="domcontentloaded")
        # Done = the script ran (state notRunning) and the page drew its title.
        page.wait_for_selector(
            '[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=180_000
        )
        page.wait_for_selector("h1", timeout=30_000)
        errors = [e.inner_text()[:200] for e in page.query_selector_all(ERRORS)]
        took = time.perf_counter() - start
        print(f"  {spec.url_path:18s} {took:5.1f} s  {'ERROR ' + repr(errors) if errors else 'ok'}")
        if errors:
            failures.append(spec.url_path)
    browser.close()
if failures:
    sys.exit(f"pages with an error element: {failures}")
PYEOF
}

check_inside() {
  log "checks inside the image"
  docker exec "$CONTAINER" sh -c 'test "$(id -u)" != 0' || { echo "runs as root" >&2; exit 1; }
  docker exec "$CONTAINER" sh -c '! command -v gcc && ! command -v cc && ! test -e /tmp/build \
    && ! find / -xdev -name ca.pem -o -xdev -name "torch-*.whl" 2>/dev/null | grep -q .' >/dev/null \
    || { echo "build tools or build-only inputs left in the image" >&2; exit 1; }
  docker exec "$CONTAINER" python3 -c \
    'import torch; assert not torch.cuda.is_available() and "+cpu" in torch.__version__, torch.__version__; print("  torch", torch.__version__)'
  docker run --rm --network none -e HF_HUB_OFFLINE=1 "$IMAGE" python3 -c '
import posviz
try:
    shape = posviz.load_table("bundled").matrix.shape
except (AttributeError, ImportError):  # loader not there yet: read the verified file directly
    from safetensors.numpy import load_file
    from posviz.tables.bundled import verified_bundled_weights
    shape = load_file(verified_bundled_weights())["embeddings.position_embeddings.weight"].shape
print("  air-gapped: bundled table", shape)' \
    || { echo "the bundled default does not load without network" >&2; exit 1; }
}

start_docker
build_base
build_image
run_and_wait_healthy
check_inside
check_pages
SIZE_MB="$(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f", $1/1e6}')"
log "image $IMAGE: ${SIZE_MB} MB (base $(docker image inspect -f '{{.Size}}' "$BASE_IMAGE" | awk '{printf "%.0f", $1/1e6}') MB)"
log "PASS"
