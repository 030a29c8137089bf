"""The deployment files agree with each other and with the services' conventions: chart values,
Dockerfiles, compose file, dashboard. With a helm binary (LOCUS_HELM, or deploy/.tools/bin/helm
from `make deploy-check`) the chart is also rendered and the manifests themselves are checked."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "deploy" / "helm" / "locus"
COMPOSE = ROOT / "deploy" / "compose" / "compose.yaml"
DASHBOARD = CHART / "files" / "dashboards" / "locus-overview.json"
PORTS = {
    "gateway": 50050,
    "ingestion": 50051,
    "ast": 50052,
    "retrieval": 50053,
    "impact": 50054,
    "answer": 50055,
}
DATABASE_SERVICES = {"gateway", "ingestion", "ast", "impact"}
RELEASE = "locus"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def values() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(CHART / "values.yaml")
    return loaded


def service_config(name: str) -> dict[str, Any]:
    """serviceDefaults merged with services.<name> one level deep, as the template does."""
    config = json.loads(json.dumps(values()["serviceDefaults"]))
    for key, value in values()["services"][name].items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


def test_chart_metadata() -> None:
    chart = load_yaml(CHART / "Chart.yaml")

    assert chart["apiVersion"] == "v2"
    assert chart["name"] == "locus"
    assert re.fullmatch(r"\d+\.\d+\.\d+", chart["version"])


def test_values_declare_every_service_on_its_default_port() -> None:
    services = values()["services"]

    assert {name: svc["port"] for name, svc in services.items()} == PORTS
    assert {name for name, svc in services.items() if svc["database"]} == DATABASE_SERVICES


@pytest.mark.parametrize("name", sorted(PORTS))
def test_every_service_gets_probes_and_a_hardened_security_context(name: str) -> None:
    config = service_config(name)

    assert set(config["probes"]) == {"startup", "liveness", "readiness"}
    assert config["securityContext"]["readOnlyRootFilesystem"] is True
    assert config["securityContext"]["allowPrivilegeEscalation"] is False
    assert config["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert config["podSecurityContext"]["runAsNonRoot"] is True
    assert config["podSecurityContext"]["runAsUser"] == 10001
    assert config["podSecurityContext"]["seccompProfile"]["type"] == "RuntimeDefault"


def test_values_hold_no_secret_values() -> None:
    def walk(node: Any, path: str) -> list[str]:
        if isinstance(node, dict):
            found = []
            for key, value in node.items():
                lowered = str(key).lower()
                if lowered.endswith(("password", "token", "apikey")) and value:
                    found.append(f"{path}.{key}")
                found += walk(value, f"{path}.{key}")
            return found
        if isinstance(node, list):
            return [hit for i, item in enumerate(node) for hit in walk(item, f"{path}[{i}]")]
        return []

    assert walk(values(), "values") == []


@pytest.mark.parametrize("name", sorted(PORTS))
def test_dockerfile_builds_a_non_root_image_that_runs_the_service(name: str) -> None:
    dockerfile = (ROOT / "services" / name / "Dockerfile").read_text(encoding="utf-8")
    port = PORTS[name]
    stages = re.findall(r"^FROM (\S+) AS (\S+)$", dockerfile, flags=re.MULTILINE)

    assert "ARG PYTHON_IMAGE=python:3.11-slim" in dockerfile
    assert stages[0] == ("${PYTHON_IMAGE}", "build")
    assert stages[-1] == ("${PYTHON_IMAGE}", "runtime")
    assert "grpcio-tools==1.85.1" in dockerfile
    assert "--grpc_python_out=libs/contracts/src protos/locus/v1/*.proto" in dockerfile
    assert f"/opt/locus/bin/pip install ./libs/*/ ./services/{name}\n" in dockerfile
    assert " -e " not in dockerfile
    assert "USER 10001:10001" in dockerfile
    assert f"LOCUS_{name.upper()}_GRPC_HOST=0.0.0.0" in dockerfile
    assert f"LOCUS_{name.upper()}_GRPC_PORT={port}" in dockerfile
    assert f"EXPOSE {port}\n" in dockerfile
    assert f"insecure_channel('127.0.0.1:{port}')" in dockerfile
    assert dockerfile.rstrip().endswith(f'ENTRYPOINT ["python", "-m", "locus.{name}"]')


def test_retrieval_image_carries_the_exported_model() -> None:
    dockerfile = (ROOT / "services" / "retrieval" / "Dockerfile").read_text(encoding="utf-8")

    assert "python -m locus.retrieval.export_model --out /models" in dockerfile
    assert "ARG MODEL_SOURCE=export" in dockerfile
    assert "COPY --from=model /models /models" in dockerfile
    assert "LOCUS_RETRIEVAL_MODEL_DIR=/models" in dockerfile


def test_compose_runs_every_service_from_its_dockerfile_hardened_and_health_checked() -> None:
    compose = load_yaml(COMPOSE)["services"]

    for name, port in PORTS.items():
        service = compose[name]
        assert service["build"] == {"context": "../..", "dockerfile": f"services/{name}/Dockerfile"}
        assert service["user"] == "10001:10001"
        assert service["read_only"] is True
        assert service["cap_drop"] == ["ALL"]
        assert f"127.0.0.1:{port}" in " ".join(service["healthcheck"]["test"])
        assert service["depends_on"]["nats"] == {"condition": "service_healthy"}
        env = service["environment"]
        assert env["LOCUS_NATS_URL"] == "nats://nats:4222"
        for peer, peer_port in PORTS.items():
            assert env[f"LOCUS_{peer.upper()}_ADDR"] == f"{peer}:{peer_port}"
        if name in DATABASE_SERVICES:
            url = env[f"LOCUS_{name.upper()}_DATABASE_URL"]
            assert url.startswith("postgresql://locus:${LOCUS_POSTGRES_PASSWORD:?")
            assert url.endswith(f"@postgres:5432/locus_{name}")
    gateway_waits_for = compose["gateway"]["depends_on"]
    assert all(
        gateway_waits_for[peer] == {"condition": "service_healthy"}
        for peer in PORTS.keys() - {"gateway"}
    )
    assert compose["vllm"]["profiles"] == ["gpu"]
    assert compose["answer"]["depends_on"]["vllm"]["required"] is False


def test_compose_creates_the_databases_the_services_use() -> None:
    sql = (COMPOSE.parent / "postgres" / "10-locus-databases.sql").read_text(encoding="utf-8")

    assert set(re.findall(r'CREATE DATABASE "locus_(\w+)"', sql)) == DATABASE_SERVICES


def test_dashboard_queries_the_provisioned_datasource() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    compose_sources = load_yaml(COMPOSE.parent / "grafana" / "datasources.yaml")["datasources"]
    targets = [t for panel in dashboard["panels"] for t in panel.get("targets", [])]

    assert dashboard["uid"] == "locus-overview"
    assert targets
    assert {t["datasource"]["uid"] for t in targets} == {"locus-prometheus"}
    assert {s["uid"] for s in compose_sources} == {"locus-prometheus", "locus-traces"}
    assert all("traces_span_metrics_" in t["expr"] for t in targets)


def test_the_services_dashboard_plots_only_metrics_the_services_export() -> None:
    from locus.telemetry import metrics

    exported = set()
    for value in vars(metrics).values():
        if isinstance(value, metrics.Counter):
            exported.add(f"{value._name}_total")
        elif isinstance(value, metrics.Histogram):
            exported |= {f"{value._name}_{part}" for part in ("bucket", "count", "sum")}
        elif isinstance(value, metrics.Gauge):
            exported.add(value._name)
    dashboard = json.loads((DASHBOARD.parent / "locus-services.json").read_text(encoding="utf-8"))
    targets = [t for panel in dashboard["panels"] for t in panel.get("targets", [])]
    plotted = {name for t in targets for name in re.findall(r"\b(locus_[a-z_]+)", t["expr"])}

    assert dashboard["uid"] == "locus-services"
    assert {t["datasource"]["uid"] for t in targets} == {"locus-prometheus"}
    assert plotted
    assert plotted <= exported, plotted - exported

    def family(name: str) -> str:
        return re.sub(r"_(total|bucket|count|sum)$", "", name)

    # Every family the services export is on the dashboard.
    assert {family(n) for n in plotted} == {family(n) for n in exported}


def test_compose_prometheus_scrapes_every_service() -> None:
    config = load_yaml(COMPOSE.parent / "prometheus.yaml")
    [job] = [j for j in config["scrape_configs"] if j["job_name"] == "locus-services"]
    scraped = {c["labels"]["service"]: c["targets"] for c in job["static_configs"]}
    environment = load_yaml(COMPOSE)["x-locus-env"]

    assert scraped == {name: [f"{name}:9464"] for name in PORTS}
    assert environment["LOCUS_METRICS_PORT"] == "9464"
    assert environment["LOCUS_METRICS_HOST"] == "0.0.0.0"


# ---- rendered with helm ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def helm() -> str:
    candidates = [os.environ.get("LOCUS_HELM"), str(ROOT / "deploy/.tools/bin/helm"), "helm"]
    for candidate in candidates:
        if candidate and shutil.which(candidate):
            return candidate
    pytest.fail(
        "no helm binary: `make test` and `make deploy-check` install one into deploy/.tools "
        "(`bash deploy/check.sh --tools`), or set LOCUS_HELM"
    )


def render(helm: str, *args: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        [helm, "template", RELEASE, str(CHART), "--namespace", "locus", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def by_kind(manifests: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}


def container_env(deployment: dict[str, Any]) -> dict[str, Any]:
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_rendered_services_listen_probe_and_find_their_peers(helm: str) -> None:
    manifests = render(helm)
    deployments = by_kind(manifests, "Deployment")
    shared = by_kind(manifests, "ConfigMap")[f"{RELEASE}-config"]["data"]

    assert shared["LOCUS_NATS_URL"] == f"nats://{RELEASE}-nats:4222"
    assert shared["OTEL_EXPORTER_OTLP_ENDPOINT"] == f"http://{RELEASE}-otel-collector:4317"
    for name, port in PORTS.items():
        assert shared[f"LOCUS_{name.upper()}_ADDR"] == f"{RELEASE}-{name}:{port}"
        deployment = deployments[f"{RELEASE}-{name}"]
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        assert container["ports"] == [
            {"name": "grpc", "containerPort": port, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9464, "protocol": "TCP"},
        ]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            assert container[probe]["grpc"] == {"port": port}
        env = container_env(deployment)
        assert env[f"LOCUS_{name.upper()}_GRPC_HOST"] == "0.0.0.0"
        assert env[f"LOCUS_{name.upper()}_GRPC_PORT"] == str(port)
        assert container["envFrom"] == [{"configMapRef": {"name": f"{RELEASE}-config"}}]
        service = by_kind(manifests, "Service")[f"{RELEASE}-{name}"]
        assert service["spec"]["ports"][0]["port"] == port
        assert f"{RELEASE}-{name}" in by_kind(manifests, "ServiceAccount")
        assert f"{RELEASE}-{name}" in by_kind(manifests, "PodDisruptionBudget")


def test_every_rendered_pod_is_hardened(helm: str) -> None:
    manifests = render(helm, "-f", str(CHART / "ci" / "tempo-gpu-values.yaml"))
    workloads = [m for m in manifests if m["kind"] in {"Deployment", "StatefulSet"}]
    locus = {f"{RELEASE}-{name}" for name in PORTS}

    assert workloads
    for workload in workloads:
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
        assert pod["automountServiceAccountToken"] is False
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]
            if workload["metadata"]["name"] in locus:
                assert context["readOnlyRootFilesystem"] is True


@pytest.mark.parametrize(
    ("values_file", "existing_secrets"),
    [
        (None, set()),
        ("external-values.yaml", {"locus-database-urls", "locus-opensearch"}),
        ("tempo-gpu-values.yaml", {"hf-token"}),
    ],
)
def test_secrets_are_referenced_never_inlined(
    helm: str, values_file: str | None, existing_secrets: set[str]
) -> None:
    args = ["-f", str(CHART / "ci" / values_file)] if values_file else []
    manifests = render(helm, *args)
    rendered_secrets = set(by_kind(manifests, "Secret"))
    text = yaml.safe_dump_all(manifests)

    references = set(re.findall(r"secretKeyRef:\s+key: \S+\s+name: (\S+)", text))
    assert references <= rendered_secrets | existing_secrets
    for manifest in manifests:
        for container in (
            manifest.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
        ):
            for env in container.get("env", []):
                if re.search(r"PASSWORD|TOKEN", env["name"]):
                    assert "valueFrom" in env, env["name"]


def test_production_backends_are_chosen_by_configuration(helm: str) -> None:
    production = by_kind(render(helm), "Deployment")
    embedded = by_kind(render(helm, "-f", str(CHART / "ci" / "embedded-values.yaml")), "Deployment")

    retrieval = container_env(production[f"{RELEASE}-retrieval"])
    assert retrieval["LOCUS_RETRIEVAL_BM25_BACKEND"] == "opensearch"
    assert retrieval["LOCUS_RETRIEVAL_OPENSEARCH_URL"] == f"http://{RELEASE}-opensearch:9200"
    assert retrieval["LOCUS_RETRIEVAL_VECTOR_BACKEND"] == "qdrant"
    assert retrieval["LOCUS_RETRIEVAL_QDRANT_URL"] == f"http://{RELEASE}-qdrant:6333"
    for name in DATABASE_SERVICES:
        env = container_env(production[f"{RELEASE}-{name}"])
        assert env[f"LOCUS_{name.upper()}_DATABASE_URL"] == (
            f"postgresql://locus:$(POSTGRES_PASSWORD)@{RELEASE}-postgresql:5432/locus_{name}"
        )
        assert list(env).index("POSTGRES_PASSWORD") < list(env).index(
            f"LOCUS_{name.upper()}_DATABASE_URL"
        )
    assert container_env(production[f"{RELEASE}-ingestion"])["LOCUS_INGESTION_REQUIRED_STAGES"] == (
        "ast,retrieval,impact"
    )
    assert (
        container_env(production[f"{RELEASE}-ingestion"])["LOCUS_INGESTION_EMBEDDING_STAGES"]
        == "vectors"
    )

    embedded_env = {name: container_env(d) for name, d in embedded.items()}
    assert not any(
        key.endswith(("_DATABASE_URL", "_BACKEND")) for env in embedded_env.values() for key in env
    )
    assert embedded_env[f"{RELEASE}-ingestion"]["LOCUS_INGESTION_REQUIRED_STAGES"] == (
        "ast,retrieval"
    )


def test_vllm_runs_on_a_gpu_and_the_answer_service_uses_it(helm: str) -> None:
    deployments = by_kind(
        render(helm, "-f", str(CHART / "ci" / "tempo-gpu-values.yaml")), "Deployment"
    )
    vllm = deployments[f"{RELEASE}-vllm"]["spec"]["template"]["spec"]
    answer = container_env(deployments[f"{RELEASE}-answer"])

    assert vllm["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in vllm[
        "tolerations"
    ]
    assert answer["LOCUS_LLM_BASE_URL"] == f"http://{RELEASE}-vllm:8000/v1"
    assert answer["LOCUS_LLM_MODEL"] == values()["vllm"]["servedModelName"]


def test_nats_is_a_three_server_jetstream_cluster(helm: str) -> None:
    manifests = render(helm)
    nats = by_kind(manifests, "StatefulSet")[f"{RELEASE}-nats"]
    config = by_kind(manifests, "ConfigMap")[f"{RELEASE}-nats-config"]["data"]["nats.conf"]
    headless = by_kind(manifests, "Service")[f"{RELEASE}-nats-headless"]

    assert nats["spec"]["replicas"] == 3
    assert nats["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    assert "jetstream {" in config
    routes = re.findall(r"nats://locus-nats-\d\.locus-nats-headless\.locus\.svc:6222", config)
    assert len(routes) == 3
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["publishNotReadyAddresses"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "services.gateway.replicas=2,postgresql.enabled=false"], "configure PostgreSQL"),
        (["--set", "services.ingestion.replicas=2"], "ReadWriteMany"),
        (["--set", "services.retrieval.autoscaling.enabled=true,qdrant.enabled=false"], "Qdrant"),
        (["--set", "nats.replicas=2"], "quorum"),
        (["--set", "nats.enabled=false"], "externalNats.url"),
        (["--set", "tracing.backend=zipkin"], "tracing.backend"),
    ],
)
def test_refuses_configurations_that_cannot_work(helm: str, args: list[str], message: str) -> None:
    with pytest.raises(subprocess.CalledProcessError) as failure:
        render(helm, *args)

    assert message in failure.value.stderr


def test_every_replica_of_every_service_is_scraped(helm: str) -> None:
    manifests = render(helm)
    services = by_kind(manifests, "Service")
    deployments = by_kind(manifests, "Deployment")
    prometheus = yaml.safe_load(
        by_kind(manifests, "ConfigMap")[f"{RELEASE}-prometheus"]["data"]["prometheus.yml"]
    )
    [job] = [j for j in prometheus["scrape_configs"] if j["job_name"] == "locus-services"]
    discovered = {name for config in job["dns_sd_configs"] for name in config["names"]}
    grafana = by_kind(manifests, "ConfigMap")[f"{RELEASE}-grafana-dashboards"]["data"]

    for name in PORTS:
        headless = services[f"{RELEASE}-{name}-metrics"]
        assert headless["spec"]["clusterIP"] == "None"  # one DNS record per pod
        assert headless["spec"]["ports"][0]["targetPort"] == "metrics"
        assert headless["spec"]["selector"] == services[f"{RELEASE}-{name}"]["spec"]["selector"]
        env = container_env(deployments[f"{RELEASE}-{name}"])
        assert env[f"LOCUS_{name.upper()}_METRICS_PORT"] == "9464"
        assert env[f"LOCUS_{name.upper()}_METRICS_HOST"] == "0.0.0.0"
        assert f"{RELEASE}-{name}-metrics.locus.svc" in discovered
    assert re.fullmatch(job["relabel_configs"][0]["regex"], f"{RELEASE}-ast-metrics.locus.svc")
    assert {"locus-overview.json", "locus-services.json"} <= set(grafana)
    assert "ServiceMonitor" not in {m["kind"] for m in manifests}

    monitored = by_kind(
        render(helm, "--set", "monitoring.serviceMonitor.enabled=true"), "ServiceMonitor"
    )
    assert set(monitored) == {f"{RELEASE}-{name}" for name in PORTS}
    for name in PORTS:
        spec = monitored[f"{RELEASE}-{name}"]["spec"]
        assert spec["selector"]["matchLabels"]["locus.dev/scrape"] == "metrics"
        assert spec["endpoints"][0]["port"] == "metrics"
