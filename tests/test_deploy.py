"""The deployment files: Kubernetes manifests against the API schemas, compose and nginx as written.

* every manifest in ``deploy/kubernetes`` validates (strict: unknown fields are errors) against the
  Kubernetes 1.32 and 1.37 schemas shipped inside ``kubernetes-validate`` (offline), and carries
  what a hosted deployment needs: non-root, read-only root file system, requests/limits, probes on
  ``/_stcore/health``, cookie affinity and long websocket timeouts on the Ingress, a shared PVC,
  an HPA, the cookie secret from a Secret;
* the compose file's structure (no Docker needed; ``docker compose config`` too where the plugin
  exists), the git-ignored ``.env`` and its committed example;
* the repository's HAProxy config passes ``haproxy -c`` and, run for real in front of three
  loopback backends, pins a tab's cookie to one backend, spreads new tabs, passes websocket
  upgrade headers, and when the pinned backend dies re-pins the tab to a survivor that it keeps
  after the dead one is back (the property that makes a reconnected tab's uploads work). Skipped
  where haproxy is missing (``apt-get install haproxy``).
"""

from __future__ import annotations

import fnmatch
import http.server
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "kubernetes"
COMPOSE = ROOT / "deploy" / "compose"
K8S_VERSIONS = ("1.32.0", "1.37.0")
HEALTH = "/_stcore/health"

sys.path.insert(0, str(ROOT / "tests" / "load"))
import proxy  # noqa: E402  (tests/load is not a package)


def _manifests() -> dict[str, dict]:
    """kind -> document, for every YAML document under deploy/kubernetes (one per kind)."""
    docs: dict[str, dict] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["kind"] not in docs, f"two {doc['kind']} documents"
            docs[doc["kind"]] = doc | {"_file": path.name}
    return docs


def _strip(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "_file"}


@pytest.fixture(scope="module")
def k8s() -> dict[str, dict]:
    return _manifests()


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_manifest_validates_against_the_kubernetes_schemas(k8s, version):
    import kubernetes_validate

    kinds = set(k8s) - {"Kustomization"}
    assert kinds == {"Deployment", "Service", "Ingress", "PersistentVolumeClaim",
                     "HorizontalPodAutoscaler", "PodDisruptionBudget"}  # fmt: skip
    for kind in kinds:
        kubernetes_validate.validate(_strip(k8s[kind]), version, strict=True)


def test_the_validator_rejects_a_broken_manifest(k8s):
    import kubernetes_validate

    broken = json.loads(json.dumps(_strip(k8s["Deployment"])))
    broken["spec"]["replicas"] = "three"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSIONS[-1], strict=True)
    unknown = json.loads(json.dumps(_strip(k8s["Service"])))
    unknown["spec"]["stickyness"] = True  # a typo'd field is an error in strict mode
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(unknown, K8S_VERSIONS[-1], strict=True)


def test_kustomization_applies_every_manifest(k8s):
    files = {doc["_file"] for kind, doc in k8s.items() if kind != "Kustomization"}
    assert set(k8s["Kustomization"]["resources"]) == files


def _container(k8s) -> dict:
    (container,) = k8s["Deployment"]["spec"]["template"]["spec"]["containers"]
    return container


def test_deployment_runs_non_root_read_only_with_resources(k8s):
    pod = k8s["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 1000  # the image's posviz user
    sc = _container(k8s)["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    res = _container(k8s)["resources"]
    for key in ("cpu", "memory"):
        assert key in res["requests"] and key in res["limits"], key
    units = {"Mi": 2**20, "Gi": 2**30}
    mem = {k: int(v[:-2]) * units[v[-2:]] for k, v in
           ((k, res[k]["memory"]) for k in ("requests", "limits"))}  # fmt: skip
    assert mem["requests"] <= mem["limits"]
    # a read-only root still needs a writable /tmp
    mounts = {m["mountPath"] for m in _container(k8s)["volumeMounts"]}
    assert "/tmp" in mounts


def test_deployment_probes_the_streamlit_health_endpoint(k8s):
    container = _container(k8s)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] == HEALTH, probe
        assert get["port"] in ports or get["port"] in ports.values(), probe


def test_deployment_settings_shared_state_and_secret(k8s):
    container = _container(k8s)
    env = {e["name"]: e for e in container["env"]}
    assert env["POSVIZ_HOSTED"]["value"] == "1"
    secret = env["STREAMLIT_SERVER_COOKIE_SECRET"]
    assert "value" not in secret and secret["valueFrom"]["secretKeyRef"]["name"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert env["HF_HOME"]["value"] in mounts and env["POSVIZ_LAB_DIR"]["value"] in mounts
    volumes = {v["name"]: v for v in k8s["Deployment"]["spec"]["template"]["spec"]["volumes"]}
    for path in (env["HF_HOME"]["value"], env["POSVIZ_LAB_DIR"]["value"]):
        volume = volumes[mounts[path]["name"]]
        claim = volume["persistentVolumeClaim"]["claimName"]
        assert claim == k8s["PersistentVolumeClaim"]["metadata"]["name"], path
    # replicas on different nodes share the claim
    assert k8s["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadWriteMany"]


def test_service_ingress_and_autoscaler_point_at_the_deployment(k8s):
    labels = k8s["Deployment"]["spec"]["template"]["metadata"]["labels"]
    service = k8s["Service"]
    assert service["spec"]["selector"].items() <= labels.items()
    port_names = {p["name"] for p in _container(k8s)["ports"]}
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] in port_names
    (rule,) = k8s["Ingress"]["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    backend = path["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] == service_port["name"]
    hpa = k8s["HorizontalPodAutoscaler"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == k8s["Deployment"]["metadata"]["name"]
    assert 2 <= hpa["minReplicas"] < hpa["maxReplicas"]
    pdb = k8s["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"]
    assert pdb.items() <= labels.items()


def test_ingress_has_cookie_affinity_and_long_websocket_timeouts(k8s):
    notes = k8s["Ingress"]["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert notes[prefix + "affinity"] == "cookie"
    assert notes[prefix + "session-cookie-name"]
    assert int(notes[prefix + "proxy-read-timeout"]) >= 3600
    assert int(notes[prefix + "proxy-send-timeout"]) >= 3600
    assert k8s["Ingress"]["spec"]["ingressClassName"] == "nginx"


# --- compose -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((COMPOSE / "compose.yaml").read_text())


def test_compose_replicas_behind_the_proxy(compose):
    app, proxy_service = compose["services"]["app"], compose["services"]["proxy"]
    assert str(app["deploy"]["replicas"]).startswith("${POSVIZ_REPLICAS")
    assert app["build"]["context"] == "../.." and (COMPOSE / "../../Dockerfile").is_file()
    for service in (app, proxy_service):
        assert service["restart"] == "unless-stopped"  # an OOM-killed replica comes back
        assert "healthcheck" in service
    assert HEALTH in " ".join(app["healthcheck"]["test"])
    assert app["deploy"]["resources"]["limits"]["memory"]
    assert proxy_service["depends_on"]["app"]["condition"] == "service_healthy"
    (mount,) = proxy_service["volumes"]
    source = mount.split(":")[0]
    assert (COMPOSE / source).resolve() == proxy.CONFIG
    # published on loopback unless the operator says otherwise
    (published,) = proxy_service["ports"]
    assert published.startswith("${POSVIZ_BIND:-127.0.0.1}:")


def test_compose_services_that_serve_no_page_override_the_images_health_check(compose):
    """The image's HEALTHCHECK asks the app's /_stcore/health on 8501; the Dask scheduler and
    workers run the same image with another command and never serve it, so `up --wait` failed on
    them ("lab-scheduler-1 is unhealthy", the first real compose run): each checks its own port."""
    app_image = compose["services"]["app"]["image"]
    others = {
        n: s for n, s in compose["services"].items() if n != "app" and s.get("image") == app_image
    }
    assert set(others) == {"lab-scheduler", "lab-worker"}
    for name, service in others.items():
        test = " ".join(service["healthcheck"]["test"])
        assert "8501" not in test and "8786" in test, name


def test_the_image_lets_every_command_import_posviz():
    """The Dask scheduler and workers run ``dask ...`` from the app's image, not ``python -m``
    from its WORKDIR: the directory posviz is copied to must be on PYTHONPATH (the first compose
    run with workers failed with "No module named 'posviz'" on the scheduler)."""
    final = (ROOT / "Dockerfile").read_text().rsplit("\nFROM ", 1)[1]
    workdir = re.search(r"^WORKDIR (\S+)", final, re.M).group(1)
    assert re.search(r"^COPY posviz/ posviz/", final, re.M)
    assert re.search(rf"PYTHONPATH={re.escape(workdir)}\b", final), "PYTHONPATH misses the app"


def test_compose_proxy_image_is_official_unless_a_local_build_is_named(compose):
    """Docker Hub's haproxy by default; ``POSVIZ_PROXY_IMAGE`` names the local build of
    haproxy/Dockerfile, which must run the config compose mounts, as the same user, with the
    health check's tools."""
    proxy_service = compose["services"]["proxy"]
    assert proxy_service["image"] == "${POSVIZ_PROXY_IMAGE:-haproxy:2.8-alpine}"
    (mount,) = proxy_service["volumes"]
    target = mount.split(":")[1]
    dockerfile = (COMPOSE / "haproxy" / "Dockerfile").read_text()
    assert f'"-f", "{target}"]' in dockerfile and "mkdir -p /usr/local/etc/haproxy" in dockerfile
    assert "\nUSER haproxy\n" in dockerfile  # unprivileged, as in the official image
    tool = proxy_service["healthcheck"]["test"][1]
    assert re.search(rf"install -y --no-install-recommends haproxy .*\b{tool}\b", dockerfile)


def test_compose_smoke_uses_the_v2_plugin_and_cleans_up():
    script = (ROOT / "scripts" / "compose-smoke.sh").read_text()
    assert "docker compose version" in script and "docker-compose up" not in script
    assert re.search(r"up -d --no-build --pull never --wait", script)
    assert "down -v --remove-orphans" in script and "trap cleanup EXIT" in script
    assert re.search(r"COMPOSE_SHA256=[0-9a-f]{64}\n", script)  # the downloaded binary is pinned
    assert "--compose" in script and "--kill-after" in script


def test_compose_hosted_profile_secret_and_shared_volumes(compose):
    app = compose["services"]["app"]
    env = app["environment"]
    assert env["POSVIZ_HOSTED"] == "1"
    # the secret is interpolated from the git-ignored .env and compose refuses to start without it
    assert env["STREAMLIT_SERVER_COOKIE_SECRET"].startswith("${STREAMLIT_SERVER_COOKIE_SECRET:?")
    mounts = dict(v.split(":")[::-1][:2][::-1] for v in app["volumes"])
    volume_of = {target: source for source, target in mounts.items()}
    for path in (env["HF_HOME"], env["POSVIZ_LAB_DIR"]):
        assert volume_of[path] in compose["volumes"], path  # named volumes, shared by replicas
    assert app["read_only"] is True and app["cap_drop"] == ["ALL"]


def test_env_file_is_ignored_and_only_the_example_is_committed():
    example = (COMPOSE / ".env.example").read_text()
    assert "STREAMLIT_SERVER_COOKIE_SECRET=\n" in example  # the example carries no secret
    ignored = subprocess.run(["git", "check-ignore", "-q", "deploy/compose/.env"], cwd=ROOT)
    assert ignored.returncode == 0, "deploy/compose/.env must be git-ignored"
    tracked = subprocess.run(["git", "ls-files", "deploy/compose/.env"], cwd=ROOT,
                             capture_output=True, text=True)  # fmt: skip
    assert tracked.stdout.strip() == ""


def test_docker_compose_config_accepts_the_file(tmp_path):
    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "compose", "version"],
                                        capture_output=True).returncode != 0:  # fmt: skip
        pytest.skip("no `docker compose` plugin here; the YAML tests above check the structure")
    env = tmp_path / "test.env"
    env.write_text("STREAMLIT_SERVER_COOKIE_SECRET=test-only\n")
    done = subprocess.run([docker, "compose", "-f", str(COMPOSE / "compose.yaml"), "--env-file",
                           str(env), "config", "-q"], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_dockerfile_prepares_both_data_volumes_for_the_app_user():
    text = (ROOT / "Dockerfile").read_text()
    assert "mkdir -p /data/hf /data/lab && chown posviz:posviz /data/hf /data/lab" in text
    assert 'VOLUME ["/data/hf", "/data/lab"]' in text
    assert "POSVIZ_LAB_DIR=/data/lab" in text
    assert "\nUSER posviz\n" in text and HEALTH in text
    # every RUN as root before the volumes may write into them: the last one gives them back
    before_volume = text[: text.index('VOLUME ["/data/hf", "/data/lab"]')]
    last_run = before_volume[before_volume.rindex("\nRUN ") :]
    assert last_run.strip().splitlines()[0] == "RUN chown -R posviz:posviz /data/hf /data/lab"


def dockerignore_keeps(path: str, patterns: list[str]) -> bool:
    """Whether Docker sends ``path`` (a file, relative to the context) to the build: the last
    matching ``.dockerignore`` pattern decides, ``!`` re-includes, a directory pattern covers
    everything below it."""
    kept = True
    for raw in patterns:
        negated = raw.startswith("!")
        pattern = raw.removeprefix("!").rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if any(fnmatch.fnmatchcase(p, pattern) for p in prefixes) or (
            pattern.startswith("**/") and fnmatch.fnmatchcase(parts[-1], pattern[3:])
        ):
            kept = negated
    return kept


def test_dockerignore_matcher_reads_allowlists():
    patterns = ["*", "!app.py", "!pages/", "**/__pycache__"]
    assert dockerignore_keeps("app.py", patterns) and dockerignore_keeps("pages/x.py", patterns)
    assert not dockerignore_keeps("README.md", patterns)
    assert not dockerignore_keeps("pages/__pycache__/x.pyc", patterns)


def test_every_file_the_dockerfile_copies_reaches_the_build_context():
    """A COPY of a file that .dockerignore leaves out fails the build ("file not found in build
    context"): requirements-checkpoints.txt once did, for every user of the Dockerfile."""
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    sources = []
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from") for w in words):
            # a bracket makes a source optional (it need not exist): only the plain ones must
            sources += [w.rstrip("/") for w in words[1:-1] if "[" not in w]
    assert "requirements.txt" in sources and "posviz" in sources
    for source in sources:
        files = [f for f in tracked if f == source or f.startswith(source + "/")]
        assert files, f"the Dockerfile copies {source}, which git does not track"
        assert all(dockerignore_keeps(f, patterns) for f in files), (
            f".dockerignore leaves {source} out of the build context: add !{source}"
        )


# --- nginx ---------------------------------------------------------------------------------------


def test_config_keeps_websockets_open_and_pins_tabs():
    text = proxy.CONFIG.read_text()
    assert "timeout tunnel 1d" in text  # upgraded websockets are never cut for idling
    assert "option redispatch" in text
    assert "http-check send meth GET uri /_stcore/health" in text
    rendered = proxy.render(listen="127.0.0.1:1", ports=[2, 3])
    assert "server app1 127.0.0.1:2" in rendered and "server app2 127.0.0.1:3" in rendered
    assert proxy.AFFINITY_PREFIX in rendered
    assert not [line for line in rendered.splitlines() if line.strip().startswith("server-t")]
    off = proxy.render(listen="127.0.0.1:1", ports=[2], affinity=False)
    assert proxy.AFFINITY_PREFIX not in off


needs_haproxy = pytest.mark.skipif(
    proxy.haproxy_binary() is None,
    reason="haproxy is not installed (apt-get install haproxy; scripts/test.sh does it as root)",
)


@needs_haproxy
@pytest.mark.parametrize("affinity", [True, False])
def test_haproxy_accepts_the_config(tmp_path, affinity):
    assert proxy.check_config(proxy.CONFIG).returncode == 0  # the file compose runs, as is
    path = proxy.write_config(tmp_path, listen="127.0.0.1:18999", ports=[18997, 18998],
                              affinity=affinity)  # fmt: skip
    done = proxy.check_config(path)
    assert done.returncode == 0, done.stdout + done.stderr


class _Backend(http.server.ThreadingHTTPServer):
    """Answers every request with its own name and the Upgrade/Connection/Host it received."""

    def __init__(self, name: str, port: int = 0):
        self.name = name

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(handler):
                body = b"ok" if handler.path == HEALTH else json.dumps({
                    "backend": name,
                    "upgrade": handler.headers.get("Upgrade"),
                    "host": handler.headers.get("Host"),
                }).encode()  # fmt: skip
                handler.send_response(200)
                handler.send_header("Content-Length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)

            def log_message(handler, *args):
                pass

        super().__init__(("127.0.0.1", port), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(url: str, cookie: str | None = None, headers: dict | None = None) -> tuple[dict, str]:
    """(the backend's echo, the Set-Cookie pair the proxy sent or "")."""
    sent = {**(headers or {}), **({"Cookie": cookie} if cookie else {})}
    request = urllib.request.Request(url, headers=sent)
    with urllib.request.urlopen(request, timeout=10) as response:
        set_cookie = response.headers.get("Set-Cookie") or ""
        return json.loads(response.read()), set_cookie.split(";")[0]


def _until(condition, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.2)  # waiting on the proxy's health checks (every 2 s)


@needs_haproxy
@pytest.mark.slow
def test_haproxy_pins_a_tab_and_re_pins_it_when_its_replica_dies(tmp_path):
    backends = [_Backend(f"b{i}") for i in range(3)]
    ports = [b.server_address[1] for b in backends]
    try:
        with proxy.haproxy(tmp_path, port=_free_port(), ports=ports) as url:
            _until(lambda: len({_get(url + "/")[0]["backend"] for _ in range(9)}) == 3)
            first, cookie = _get(url + "/")
            assert cookie.startswith("posviz_affinity=")
            assert {_get(url + "/", cookie)[0]["backend"] for _ in range(20)} == {first["backend"]}
            assert _get(url + "/", cookie)[1] == ""  # a valid pin is not re-set
            # websocket upgrade headers and the browser's Host reach the backend
            echo, _ = _get(url + "/_stcore/stream", cookie, {"Upgrade": "websocket",
                                                             "Connection": "Upgrade"})  # fmt: skip
            assert echo["upgrade"] == "websocket"
            assert echo["host"] == url.removeprefix("http://")
            # the pinned replica dies: the tab is served by a survivor and re-pinned to it
            index = [b.name for b in backends].index(first["backend"])
            backends[index].stop()
            moved, new_cookie = _get(url + "/", cookie)
            assert moved["backend"] != first["backend"]
            assert new_cookie.startswith("posviz_affinity=") and new_cookie != cookie
            # the dead replica comes back (orchestrator restart): the tab stays where it is now
            backends[index] = _Backend(first["backend"], ports[index])
            _until(lambda: first["backend"] in {_get(url + "/")[0]["backend"] for _ in range(9)})
            assert {_get(url + "/", new_cookie)[0]["backend"] for _ in range(10)} == {
                moved["backend"]
            }
    finally:
        for backend in backends:
            backend.server_close()


# ------------------------------------------------------------------ the lab on a Dask cluster

LAB_CLUSTER = K8S / "lab-cluster"


def _lab_cluster_docs() -> dict[str, dict]:
    """name -> document of the lab-cluster overlay (several Deployments: keyed by name)."""
    docs = {}
    for path in sorted(LAB_CLUSTER.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            key = doc["metadata"]["name"] if "metadata" in doc else doc["kind"]
            docs[f"{doc['kind']}/{key}"] = doc | {"_file": path.name}
    return docs


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_the_lab_cluster_overlay_validates_and_applies_every_file(version):
    import kubernetes_validate

    docs = _lab_cluster_docs()
    kustomization = docs.pop("Kustomization/Kustomization")
    patch = docs.pop("Deployment/posviz")  # a patch of the base app, not a whole Deployment
    assert set(kustomization["resources"]) == {".."} | {d["_file"] for d in docs.values()}
    assert [p["path"] for p in kustomization["patches"]] == [patch["_file"]]
    for doc in docs.values():
        kubernetes_validate.validate(_strip(doc), version, strict=True)


def test_the_app_submits_to_the_scheduler_that_only_posviz_pods_reach(k8s):
    docs = _lab_cluster_docs()
    (container,) = docs["Deployment/posviz"]["spec"]["template"]["spec"]["containers"]
    address = {e["name"]: e["value"] for e in container["env"]}["POSVIZ_LAB_CLUSTER"]
    service = docs["Service/posviz-lab-scheduler"]
    assert address == f"tcp://{service['metadata']['name']}:{service['spec']['ports'][0]['port']}"
    assert service["spec"]["type"] == "ClusterIP"  # never published
    scheduler = docs["Deployment/posviz-lab-scheduler"]["spec"]["template"]
    assert service["spec"]["selector"].items() <= scheduler["metadata"]["labels"].items()
    policy = docs["NetworkPolicy/posviz-lab-scheduler"]["spec"]
    assert policy["podSelector"]["matchLabels"].items() <= scheduler["metadata"]["labels"].items()
    allowed = [p["podSelector"]["matchLabels"] for rule in policy["ingress"] for p in rule["from"]]
    app_labels = k8s["Deployment"]["spec"]["template"]["metadata"]["labels"]
    worker = docs["Deployment/posviz-lab-worker"]["spec"]["template"]
    assert any(a.items() <= app_labels.items() for a in allowed)
    assert any(a.items() <= worker["metadata"]["labels"].items() for a in allowed)


def test_lab_workers_share_the_store_and_the_image_and_scale(k8s):
    docs = _lab_cluster_docs()
    worker = docs["Deployment/posviz-lab-worker"]
    pod = worker["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    app = _container(k8s)
    assert container["image"] == app["image"]  # same code: same run ids (a worker checks)
    assert container["command"][:3] == ["dask", "worker", "tcp://posviz-lab-scheduler:8786"]
    env = {e["name"]: e["value"] for e in container["env"]}
    app_env = {e["name"]: e.get("value") for e in app["env"]}
    assert env["POSVIZ_LAB_DIR"] == app_env["POSVIZ_LAB_DIR"]  # the same path as the replicas
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == env["POSVIZ_LAB_DIR"])
    claim = {v["name"]: v for v in pod["volumes"]}[mount["name"]]["persistentVolumeClaim"]
    assert claim["claimName"] == k8s["PersistentVolumeClaim"]["metadata"]["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    hpa = docs["HorizontalPodAutoscaler/posviz-lab-worker"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == worker["metadata"]["name"]


def test_compose_runs_the_lab_on_its_own_scheduler_and_workers(compose):
    services = compose["services"]
    app, scheduler, worker = services["app"], services["lab-scheduler"], services["lab-worker"]
    assert app["environment"]["POSVIZ_LAB_CLUSTER"] == "tcp://lab-scheduler:8786"
    assert "ports" not in scheduler and scheduler["command"][:2] == ["dask", "scheduler"]
    assert worker["command"][:3] == ["dask", "worker", "tcp://lab-scheduler:8786"]
    assert str(worker["deploy"]["replicas"]).startswith("${POSVIZ_LAB_WORKERS")
    assert worker["environment"]["POSVIZ_LAB_DIR"] == app["environment"]["POSVIZ_LAB_DIR"]
    app_store = next(v for v in app["volumes"] if v.endswith(":/data/lab"))
    assert app_store in worker["volumes"]  # the same named volume
    for service in (scheduler, worker):
        assert service["image"] == app["image"] and service["read_only"] is True
