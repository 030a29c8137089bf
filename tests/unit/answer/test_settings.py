"""Answer settings: the stack-wide LLM variables pick the generator."""

from __future__ import annotations

import pytest

from locus.answer.adapters.extractive_generator import ExtractiveGenerator
from locus.answer.adapters.openai_compatible import OpenAICompatibleGenerator
from locus.answer.main import make_generator
from locus.answer.settings import AnswerSettings
from locus.config import SettingsError, load_settings

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BASE_URL", "MODEL", "API_KEY"):
        monkeypatch.delenv(f"LOCUS_LLM_{name}", raising=False)
        monkeypatch.delenv(f"LOCUS_ANSWER_LLM_{name}", raising=False)


def test_without_an_llm_url_the_extractive_generator_is_used() -> None:
    settings = load_settings(AnswerSettings)

    assert settings.grpc_port == 50055
    assert isinstance(make_generator(settings), ExtractiveGenerator)


async def test_the_llm_variables_select_the_openai_compatible_generator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCUS_LLM_BASE_URL", "http://vllm:8000/v1/")
    monkeypatch.setenv("LOCUS_LLM_MODEL", "Qwen/Qwen2.5-Coder-7B-Instruct")
    monkeypatch.setenv("LOCUS_LLM_API_KEY", "s3cret")

    settings = load_settings(AnswerSettings)
    generator = make_generator(settings)

    assert settings.llm_base_url == "http://vllm:8000/v1"
    assert "s3cret" not in repr(settings)
    assert isinstance(generator, OpenAICompatibleGenerator)
    assert (generator.base_url, generator.model) == (
        "http://vllm:8000/v1",
        "Qwen/Qwen2.5-Coder-7B-Instruct",
    )
    await generator.stop()


def test_the_service_specific_variable_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_LLM_BASE_URL", "http://shared:8000/v1")
    monkeypatch.setenv("LOCUS_ANSWER_LLM_BASE_URL", "http://mine:8000/v1")
    monkeypatch.setenv("LOCUS_LLM_MODEL", "m")

    assert load_settings(AnswerSettings).llm_base_url == "http://mine:8000/v1"


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({"LOCUS_LLM_BASE_URL": "http://vllm:8000/v1"}, "LOCUS_LLM_MODEL must name"),
        ({"LOCUS_LLM_BASE_URL": "vllm:8000", "LOCUS_LLM_MODEL": "m"}, "http:// or https://"),
    ],
)
def test_incomplete_llm_settings_fail_fast(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], message: str
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    with pytest.raises(SettingsError, match=message):
        load_settings(AnswerSettings)
