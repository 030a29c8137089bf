"""The repository's one Dockerfile builds every service's image, chosen by the SERVICE build
argument. With no Docker engine, the tests read it the way BuildKit does: FROM lines expanded with
the global ARGs, only the stages the last one reaches are built, and an image inherits the
configuration of the stages it is built FROM. Each image must match its service's Helm values."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE = ROOT / "Dockerfile"
VALUES = yaml.safe_load((ROOT / "deploy/helm/locus/values.yaml").read_text(encoding="utf-8"))
GRPC_PORTS: dict[str, int] = {name: svc["port"] for name, svc in VALUES["services"].items()}
MCP_PORT: int = VALUES["mcp"]["port"]
SERVICES = sorted([*GRPC_PORTS, "mcp"])


@dataclass
class Stage:
    base: str
    instructions: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Image:
    """What `docker build --build-arg SERVICE=<name> .` builds and the image it produces."""

    built: set[str]
    instructions: list[tuple[str, str]]  # of the last stage and the stages it is built FROM
    env: dict[str, str] = field(default_factory=dict)
    exposed: list[str] = field(default_factory=list)
    healthcheck: str = ""
    entrypoint: list[str] = field(default_factory=list)
    user: str = ""


def expand(word: str, args: dict[str, str]) -> str:
    """`${NAME}` and `${NAME:?message}` (an error when NAME is unset or empty), as in FROM."""

    def substitute(match: re.Match[str]) -> str:
        value = args.get(match["name"], "")
        if match["message"] is not None and not value:
            raise ValueError(f"{match['name']}: {match['message']}")
        return value

    return re.sub(r"\$\{(?P<name>\w+)(?::\?(?P<message>[^}]*))?\}", substitute, word)


def parse(build_args: dict[str, str]) -> tuple[dict[str, Stage], str]:
    """The stages by name (FROM lines expanded) and the name of the last one."""
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    args: dict[str, str] = {}
    stages: dict[str, Stage] = {}
    last = ""
    for keyword, rest in (line.split(None, 1) for line in lines if line and line[0] != "#"):
        if keyword == "FROM":
            base, as_, last = expand(rest, args).split()
            assert as_ == "AS", f"every stage is named: FROM {rest}"
            stages[last] = Stage(base)
        elif not stages and keyword == "ARG":
            name, _, default = rest.partition("=")
            args[name] = build_args.get(name, default)
        else:
            stages[last].instructions.append((keyword, rest))
    return stages, last


def build(service: str | None, **build_args: str) -> Image:
    if service is not None:
        build_args["SERVICE"] = service
    stages, last = parse(build_args)
    built: set[str] = set()

    def reach(name: str) -> None:
        if name in stages and name not in built:
            built.add(name)
            reach(stages[name].base)
            for keyword, rest in stages[name].instructions:
                if keyword == "COPY" and (source := re.match(r"--from=(\S+)", rest)):
                    reach(source[1])

    reach(last)
    chain = [last]
    while stages[chain[0]].base in stages:
        chain.insert(0, stages[chain[0]].base)
    image = Image(built, [ins for name in chain for ins in stages[name].instructions])
    for keyword, rest in image.instructions:
        if keyword == "ENV":
            image.env.update(pair.split("=", 1) for pair in rest.split())
        elif keyword == "EXPOSE":
            image.exposed += rest.split()
        elif keyword == "HEALTHCHECK":
            image.healthcheck = rest
        elif keyword == "ENTRYPOINT":
            image.entrypoint = json.loads(rest)
        elif keyword == "USER":
            image.user = rest
    return image


def test_the_build_stage_installs_the_libs_and_the_chosen_service_non_editable() -> None:
    dockerfile = DOCKERFILE.read_text(encoding="utf-8")

    assert "ARG PYTHON_IMAGE=python:3.11-slim" in dockerfile
    assert "grpcio-tools==1.85.1" in dockerfile
    assert "--grpc_python_out=libs/contracts/src protos/locus/v1/*.proto" in dockerfile
    assert "COPY services/${SERVICE}/ services/${SERVICE}/\n" in dockerfile
    assert '/opt/locus/bin/pip install ./libs/*/ "./services/${SERVICE}"\n' in dockerfile
    assert " -e " not in dockerfile
    assert not list(ROOT.glob("services/*/Dockerfile")), "one Dockerfile, at the repository root"


@pytest.mark.parametrize("name", SERVICES)
def test_each_image_runs_its_service_as_a_non_root_user(name: str) -> None:
    image = build(name)
    settings = {key for key in image.env if key.startswith("LOCUS_")} - {"LOCUS_LOG_JSON"}

    assert {"build", "runtime", f"service-{name}"} <= image.built
    assert ("COPY", "--from=build /opt/locus /opt/locus") in image.instructions
    assert image.user == "10001:10001"
    assert image.entrypoint == ["python", "-m", f"locus.{name}"]
    assert settings
    assert all(key.startswith(f"LOCUS_{name.upper()}_") for key in settings), settings


@pytest.mark.parametrize("name", sorted(GRPC_PORTS))
def test_each_grpc_image_listens_and_is_health_checked_on_its_chart_port(name: str) -> None:
    image = build(name)
    port = GRPC_PORTS[name]
    start_period = "60s" if name == "retrieval" else "30s"  # retrieval loads its model first

    assert image.env[f"LOCUS_{name.upper()}_GRPC_HOST"] == "0.0.0.0"
    assert image.env[f"LOCUS_{name.upper()}_GRPC_PORT"] == str(port)
    assert image.env[f"LOCUS_{name.upper()}_DATA_DIR"] == "/var/lib/locus"
    assert image.exposed == [str(port)]
    assert f"--start-period={start_period}" in image.healthcheck
    assert f"insecure_channel('127.0.0.1:{port}')" in image.healthcheck


def test_the_mcp_image_serves_http_on_its_chart_port() -> None:
    image = build("mcp")

    assert image.env["LOCUS_MCP_HTTP_HOST"] == "0.0.0.0"
    assert image.env["LOCUS_MCP_HTTP_PORT"] == str(MCP_PORT)
    assert image.exposed == [str(MCP_PORT)]
    assert f"'http://127.0.0.1:{MCP_PORT}/healthz'" in image.healthcheck


def test_only_the_retrieval_image_exports_the_model_and_only_by_default() -> None:
    retrieval = build("retrieval")
    without_model = build("retrieval", MODEL_SOURCE="none")
    stages, _ = parse({"SERVICE": "retrieval"})

    assert {"model-export", "model"} <= retrieval.built
    assert any(
        "python -m locus.retrieval.export_model --out /models" in rest
        for keyword, rest in stages["model-export"].instructions
        if keyword == "RUN"
    )
    assert ("COPY", "--from=model /models /models") in retrieval.instructions
    assert retrieval.env["LOCUS_RETRIEVAL_MODEL_DIR"] == "/models"
    assert "model-none" in without_model.built
    assert "model-export" not in without_model.built
    for name in set(SERVICES) - {"retrieval"}:
        assert not {stage for stage in build(name).built if stage.startswith("model")}, name


@pytest.mark.parametrize("name", SERVICES)
def test_only_the_ingestion_image_gets_git(name: str) -> None:
    runs = " ".join(rest for keyword, rest in build(name).instructions if keyword == "RUN")

    assert ("git openssh-client" in runs) == (name == "ingestion")


def test_the_build_fails_unless_service_names_one_of_the_seven() -> None:
    stages, _ = parse({"SERVICE": "gateway"})

    for missing in (None, ""):
        with pytest.raises(ValueError, match=r"^SERVICE: ") as error:
            build(missing)
        assert set(str(error.value).removeprefix("SERVICE: ").split("|")) == set(SERVICES)
    # Any other value names no stage: BuildKit looks for an image service-<value> and fails.
    assert {name.removeprefix("service-") for name in stages if name.startswith("service-")} == (
        set(SERVICES)
    )
