"""Composition root of the answer service: the only place that reads settings and builds the
generator, the gRPC server and telemetry."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace.export import SpanExporter

from locus.answer.adapters.extractive_generator import ExtractiveGenerator
from locus.answer.adapters.grpc_servicer import AnswerServicer
from locus.answer.adapters.openai_compatible import OpenAICompatibleGenerator
from locus.answer.domain import AnswerPolicy, Generator, PromptBudget, RequestLimits
from locus.answer.settings import AnswerSettings
from locus.rpc import MeshCredentials, RpcServer, ServiceRuntime
from locus.telemetry import Telemetry, configure_logging, setup_telemetry
from locus.telemetry.metrics import MetricsEndpoint
from locus.v1 import answer_pb2, answer_pb2_grpc


def make_generator(settings: AnswerSettings, telemetry: Telemetry | None = None) -> Generator:
    if not settings.llm_base_url:
        return ExtractiveGenerator()
    return OpenAICompatibleGenerator(
        settings.llm_base_url,
        settings.llm_model,
        api_key=settings.llm_api_key.get_secret_value(),
        connect_timeout_seconds=settings.llm_connect_timeout_seconds,
        read_timeout_seconds=settings.llm_read_timeout_seconds,
        max_attempts=settings.llm_max_attempts,
        retry_backoff_seconds=settings.llm_retry_backoff_seconds,
        temperature=settings.llm_temperature,
        tracer_provider=telemetry.provider if telemetry else None,
    )


def build(
    settings: AnswerSettings,
    *,
    exporters: Sequence[SpanExporter] = (),
    generator: Generator | None = None,
) -> ServiceRuntime:
    configure_logging(settings.service_name, level=settings.log_level, json_lines=settings.log_json)
    telemetry = setup_telemetry(settings.service_name, exporters=exporters)
    mesh = MeshCredentials.from_settings(settings)
    generator = generator if generator is not None else make_generator(settings, telemetry)
    servicer = AnswerServicer(
        generator,
        AnswerPolicy(
            budget=PromptBudget(context_window_tokens=settings.context_window_tokens),
            default_max_tokens=settings.default_max_tokens,
        ),
        RequestLimits(
            max_question_chars=settings.max_question_chars,
            max_snippets=settings.max_context_snippets,
            max_answer_tokens=settings.max_answer_tokens,
        ),
        telemetry.tracer("locus.answer"),
    )
    server = RpcServer(
        settings.grpc_bind,
        telemetry,
        mesh=mesh,
        grace_seconds=settings.shutdown_grace_seconds,
    )
    server.add_service(
        answer_pb2_grpc.add_AnswerServiceServicer_to_server,
        servicer,
        answer_pb2.DESCRIPTOR.services_by_name["AnswerService"].full_name,
    )
    return ServiceRuntime(
        settings.service_name,
        server,
        telemetry,
        [generator],
        metrics=MetricsEndpoint.from_settings(settings),
    )
