# posviz as a container: CPU-only torch, the offline default model baked in, runs as a non-root user.
#
#   docker build -t posviz .
#   docker run --rm -p 8501:8501 -v posviz-hf:/data/hf posviz      # then open http://localhost:8501
#
# Build arguments:
#   BASE_IMAGE       any image with python3 (>= 3.11) and its venv module; the same base is used for both
#                    stages so the copied virtualenv's interpreter path stays valid.
#   TORCH_INDEX_URL  where the CPU-only torch wheel comes from (PyTorch's CPU index by default; the
#                    default Linux wheel on PyPI pulls ~3 GB of CUDA libraries the image never uses).
#   TORCH_VERSION    must satisfy the pin in requirements.txt.
#   POSVIZ_WARM_STORE  1 (default) trains every lab answer into the image; 0 leaves the store empty.
# Optional build-only inputs: a directory `.build-extra/` in the build context may hold `ca.pem` (a CA
# bundle for a TLS-intercepting proxy, used by pip in the build stage only) and `*.whl` files (e.g. a
# CPU torch wheel from local disk). scripts/docker-smoke.sh uses it; neither reaches the final image.

ARG BASE_IMAGE=python:3.11-slim

# ---- build stage: a virtualenv with every dependency; pip, its cache and any CA stay here ----
FROM ${BASE_IMAGE} AS build
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG TORCH_VERSION=2.13.0
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_DEFAULT_TIMEOUT=120
RUN python3 -m venv /opt/venv
# The bracket makes `.build-extra` optional: COPY only fails when no source matches at all.
# The RUN installs CPU torch first (so requirements.txt's pin is already met), fails if any CUDA wheel
# crept in, and trims what the app never runs: torch's C++ headers and test binaries (~180 MB), the
# test suites of numpy/pandas/pyarrow/scipy/sklearn/sympy (~85 MB), pip.
COPY requirements.txt requirements-checkpoints.txt .build-extr[a] /tmp/build/
RUN set -eu; cd /tmp/build; \
    if [ -f ca.pem ]; then export PIP_CERT=/tmp/build/ca.pem; fi; \
    pip="/opt/venv/bin/pip"; \
    if ls torch-*.whl >/dev/null 2>&1; then \
        "$pip" install torch-*.whl; \
    else \
        "$pip" install --index-url "$TORCH_INDEX_URL" "torch==${TORCH_VERSION}"; \
    fi; \
    "$pip" install -r requirements.txt; \
    "$pip" install --only-binary=:all: --no-deps -r requirements-checkpoints.txt; \
    if "$pip" list 2>/dev/null | grep -qi '^nvidia-'; then echo "CUDA wheels crept in" >&2; exit 1; fi; \
    site="$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"; \
    rm -rf "$site/torch/include" "$site/torch/test" "$site"/torch/bin/test_* \
           "$site/torch/bin/protoc"* "$site/torch/bin/FileStoreTest" "$site/torch/bin/HashStoreTest" \
           "$site/torch/bin/TCPStoreTest"; \
    for pkg in numpy pandas pyarrow scipy sklearn sympy; do \
        find "$site/$pkg" -depth -type d -name tests -exec rm -rf {} +; \
    done; \
    "$pip" uninstall -y -q pip; \
    rm -rf /tmp/build

# ---- final stage: the base, the virtualenv, the app; nothing else ----
FROM ${BASE_IMAGE}
# PYTHONPATH: the lab's Dask scheduler and workers run `dask ...` from this image (deploy/compose,
# deploy/kubernetes/lab-cluster) and unpickle posviz's tasks; only `python -m` from /app would
# find the package without it (the first compose run with workers: "No module named 'posviz'").
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app \
    PYTHONUNBUFFERED=1 \
    HF_HOME=/data/hf \
    POSVIZ_LAB_DIR=/data/lab \
    HF_HUB_DISABLE_TELEMETRY=1 \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false \
    STREAMLIT_SERVER_HEADLESS=true
# uid 1000 is what Hugging Face Spaces runs containers as; it owns only the two data volumes (a fresh
# named volume takes this ownership from the image, so replicas can write to it).
RUN useradd --create-home --uid 1000 --shell /usr/sbin/nologin posviz \
    && mkdir -p /data/hf /data/lab && chown posviz:posviz /data/hf /data/lab
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
# App files stay owned by root: the server user can read them, not change them.
COPY app.py ./
COPY .streamlit/ .streamlit/
COPY pages/ pages/
COPY posviz/ posviz/
# Fail the build (not the first visitor) if the baked-in default model, or a packaged checkpoint the
# pages show offline (Whisper's two tables, DINOv2's grid, MPNet's data), is missing or corrupt;
# precompile the app so a read-only /app still starts fast.
RUN python3 -c "from posviz.tables.bundled import verified_bundled_weights as v; print('bundled:', v())" \
    && python3 -c "from posviz import load_table; [print(load_table('bundled:' + n).label) for n in \
        ('whisper-tiny.en-decoder', 'whisper-tiny.en-encoder', 'dinov2-vit-s14', 'mpnet-relative-bias')]" \
    && python3 -m compileall -q /app/posviz /app/pages /app/app.py
# Every lab question's default answer (its whole sweep) and every paper check, trained at build time
# into a read-only store the app reads after /data/lab: a hosted link's first visitor sees every
# answer without training. CPU runs are deterministic and run ids hash the code, so the ids the app
# computes at runtime are these. Costs the build one `python -m posviz lab warm` (minutes of CPU).
# POSVIZ_WARM_STORE=0 skips it (an empty store: every answer is trained on first demand, on the lab
# cluster where one is configured; scripts/compose-smoke.sh builds so, for its workers to train).
ARG POSVIZ_WARM_STORE=1
RUN if [ "$POSVIZ_WARM_STORE" = 1 ]; then POSVIZ_LAB_DIR=/app/lab-warm python3 -m posviz lab warm; \
    else mkdir -p /app/lab-warm; fi && chmod -R a+rX /app/lab-warm
# The build ran as root and wrote into the data folders (the bundled model's verification memo in
# /data/hf/posviz): hand them back to the app user, or the server cannot create its own caches
# there (the GGUF model's float32 copy failed with "Permission denied" on /data/hf/posviz/gguf).
RUN chown -R posviz:posviz /data/hf /data/lab
ENV POSVIZ_LAB_WARM_DIR=/app/lab-warm
# Hugging Face downloads (hub model ids) and stored lab runs live on volumes: they survive container
# restarts and, shared, serve every replica (deploy/compose, deploy/kubernetes).
VOLUME ["/data/hf", "/data/lab"]
USER posviz
EXPOSE 8501
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python3", "-c", "import sys, urllib.request as u; sys.exit(u.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() != b'ok')"]
CMD ["python", "-m", "posviz.ui.launch", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0"]
