# Sourced by docker-smoke.sh and compose-smoke.sh: a Docker daemon of our own, a Debian base image
# built with debootstrap, and the posviz image, on a machine where image registries are unreachable
# and the package index sits behind a TLS-intercepting proxy. Expects ROOT, WORK, LOG_NAME; sets
# DOCKER_HOST (unless one answers already) and DOCKERD_PID.
#
# Knobs: POSVIZ_DOCKER_ROOT=dir keeps the daemon's data root (base image, layer cache) between runs;
# POSVIZ_TORCH_WHEEL=path picks the CPU torch wheel; POSVIZ_BUILD_REF=HEAD builds a git revision
# (git archive) instead of the working tree.
BASE_IMAGE="posviz-base:local"
DATA_ROOT="${POSVIZ_DOCKER_ROOT:-$WORK/data-root}"
DOCKERD_PID=""
PY="$ROOT/.venv/bin/python"
log() { printf '[%s %s] %s\n' "$LOG_NAME" "$(date +%H:%M:%S)" "$*"; }

stop_docker() {  # the daemon we started, and the mounts it leaves under WORK
  set +e
  if [ -n "$DOCKERD_PID" ]; then
    kill "$DOCKERD_PID" 2>/dev/null && wait "$DOCKERD_PID" 2>/dev/null
  fi
  # dockerd leaves its network-namespace mount behind under the exec root: unmount, then remove.
  awk -v w="$WORK/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  rm -rf "$WORK"  # POSVIZ_DOCKER_ROOT, when set, lives outside it and is kept
}

need() {  # need COMMAND DEBIAN_PACKAGE
  command -v "$1" >/dev/null && return
  [ "$(id -u)" = 0 ] || { echo "$LOG_NAME: '$1' is missing; run as root or install $2" >&2; exit 1; }
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
  echo "$LOG_NAME: dockerd did not come up; its log:" >&2
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

build_base() {  # python:3.11-slim cannot be pulled here: a Debian minbase with python3 instead
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
  rm -rf "$WORK/rootfs"
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

build_context() {  # the directory the image is built from: the working tree, or POSVIZ_BUILD_REF
  if [ -z "${POSVIZ_BUILD_REF:-}" ]; then echo "$ROOT"; return; fi
  mkdir -p "$WORK/context"
  git -C "$ROOT" archive "$POSVIZ_BUILD_REF" | tar -x -C "$WORK/context"
  echo "$WORK/context"
}

build_image() {  # build_image TAG: the posviz image, with the build-only CA and wheel
  local tag="$1" context wheel ca
  context="$(build_context)"
  rm -rf "$context/.build-extra" && mkdir "$context/.build-extra"
  for ca in "${PIP_CERT:-}" /etc/ssl/certs/ca-certificates.crt; do
    if [ -n "$ca" ] && [ -f "$ca" ]; then cp "$ca" "$context/.build-extra/ca.pem"; break; fi
  done
  wheel="$(torch_wheel)"
  if [ -n "$wheel" ]; then
    log "torch from local disk: $(basename "$wheel") (PyTorch's CPU index is unreachable here)"
    cp "$wheel" "$context/.build-extra/"
  else
    log "no local CPU torch wheel: the build uses the Dockerfile's TORCH_INDEX_URL"
  fi
  log "docker build -t $tag from ${POSVIZ_BUILD_REF:-the working tree} (legacy builder)"
  local start=$SECONDS
  DOCKER_BUILDKIT=0 docker build --network host --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    --build-arg "POSVIZ_WARM_STORE=${POSVIZ_WARM_STORE:-1}" -t "$tag" "$context" \
    >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log" >&2; exit 1; }
  rm -rf "$context/.build-extra"
  BUILD_SECONDS=$((SECONDS - start))
  log "built in $BUILD_SECONDS s"
}

free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
