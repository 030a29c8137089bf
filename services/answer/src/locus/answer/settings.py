"""Answer settings (LOCUS_ANSWER_*). Fails fast on invalid values.

The LLM is configured stack-wide: ``LOCUS_LLM_BASE_URL`` (an OpenAI-compatible API base,
e.g. ``http://vllm:8000/v1``; unset = the extractive generator), ``LOCUS_LLM_MODEL`` (required
with it) and ``LOCUS_LLM_API_KEY`` (optional); ``LOCUS_ANSWER_LLM_*`` override them.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from locus.config import ServiceSettings


class AnswerSettings(ServiceSettings):
    model_config = SettingsConfigDict(
        env_prefix="LOCUS_ANSWER_", extra="ignore", populate_by_name=True
    )

    service_name: str = "answer"
    grpc_port: int = Field(default=50055, ge=0, le=65535)

    llm_base_url: str = Field(
        default="", validation_alias=AliasChoices("LOCUS_ANSWER_LLM_BASE_URL", "LOCUS_LLM_BASE_URL")
    )
    llm_model: str = Field(
        default="", validation_alias=AliasChoices("LOCUS_ANSWER_LLM_MODEL", "LOCUS_LLM_MODEL")
    )
    llm_api_key: SecretStr = Field(
        default=SecretStr(""),
        validation_alias=AliasChoices("LOCUS_ANSWER_LLM_API_KEY", "LOCUS_LLM_API_KEY"),
    )
    llm_connect_timeout_seconds: float = Field(default=5.0, gt=0)
    # Longest wait for the next streamed token (the first one includes the prompt's prefill).
    llm_read_timeout_seconds: float = Field(default=120.0, gt=0)
    llm_max_attempts: int = Field(default=3, ge=1, le=10)
    llm_retry_backoff_seconds: float = Field(default=0.5, ge=0)
    llm_temperature: float = Field(default=0.0, ge=0, le=2)

    # Prompt budget: the model's context window, shared by the prompt and the answer.
    context_window_tokens: int = Field(default=8192, ge=512)
    default_max_tokens: int = Field(default=512, ge=16)
    max_answer_tokens: int = Field(default=2048, ge=16)
    max_question_chars: int = Field(default=16000, ge=1)
    max_context_snippets: int = Field(default=100, ge=1)

    @field_validator("llm_base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http:// or https:// URL (got {value!r})")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _model_named_with_url(self) -> AnswerSettings:
        if self.llm_base_url and not self.llm_model.strip():
            raise ValueError(
                "LOCUS_LLM_MODEL must name the served model when LOCUS_LLM_BASE_URL is set"
            )
        if self.default_max_tokens > self.max_answer_tokens:
            raise ValueError("default_max_tokens must not exceed max_answer_tokens")
        if self.max_answer_tokens * 2 > self.context_window_tokens:
            raise ValueError("max_answer_tokens must leave half the context window to the prompt")
        return self
