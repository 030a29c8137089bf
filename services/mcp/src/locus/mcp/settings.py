"""MCP server settings (LOCUS_MCP_*). Fails fast on invalid values.

The gateway is ``LOCUS_MCP_GATEWAY_ADDR`` or the stack-wide ``LOCUS_GATEWAY_ADDR``. Over stdio
the server calls with one credential, the caller's: ``LOCUS_API_KEY`` or the file
``LOCUS_API_KEY_FILE`` names (``LOCUS_MCP_API_KEY[_FILE]`` override them). Over HTTP it has no
credential of its own: each request's ``Authorization`` header goes to the gateway as it came.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from locus.config import SettingsError


class McpSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LOCUS_MCP_", extra="ignore", populate_by_name=True
    )

    service_name: str = "mcp"
    http_host: str = "127.0.0.1"
    http_port: int = Field(default=50056, ge=0, le=65535)
    # Where the MCP endpoint is served (Streamable HTTP); GET /healthz beside it.
    http_path: str = "/mcp"
    gateway_addr: str = Field(
        default="127.0.0.1:50050",
        validation_alias=AliasChoices("LOCUS_MCP_GATEWAY_ADDR", "LOCUS_GATEWAY_ADDR"),
    )
    api_key: SecretStr = Field(
        default=SecretStr(""), validation_alias=AliasChoices("LOCUS_MCP_API_KEY", "LOCUS_API_KEY")
    )
    api_key_file: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("LOCUS_MCP_API_KEY_FILE", "LOCUS_API_KEY_FILE"),
    )
    # Deadline of each gateway call; Ask streams get their own, longer one.
    gateway_timeout_seconds: float = Field(default=60.0, gt=0)
    ask_timeout_seconds: float = Field(default=300.0, gt=0)
    # read_file returns at most this many lines and characters (an agent's context is small).
    max_read_lines: int = Field(default=400, ge=1, le=2000)
    max_read_chars: int = Field(default=64_000, ge=1_000, le=256 * 1024)
    # get_symbol lists at most this many children and relations each way.
    max_relations: int = Field(default=100, ge=1, le=10_000)
    log_level: str = Field(
        default="INFO", validation_alias=AliasChoices("LOCUS_MCP_LOG_LEVEL", "LOCUS_LOG_LEVEL")
    )
    log_json: bool = Field(
        default=False, validation_alias=AliasChoices("LOCUS_MCP_LOG_JSON", "LOCUS_LOG_JSON")
    )
    shutdown_grace_seconds: float = Field(default=10.0, ge=0)

    @field_validator("http_path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        if not value.startswith("/") or value == "/":
            raise ValueError(f"must be a path below / such as /mcp (got {value!r})")
        return value.rstrip("/")

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        value = value.strip().upper()
        if value not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError(f"must be DEBUG, INFO, WARNING, ERROR or CRITICAL (got {value!r})")
        return value

    def stdio_credential(self) -> str:
        """The credential of a stdio server ("" when none is set: the gateway then says what
        to send). The file is read now; surrounding whitespace is stripped."""
        if self.api_key.get_secret_value().strip():
            return self.api_key.get_secret_value().strip()
        if self.api_key_file is not None:
            try:
                return self.api_key_file.read_text(encoding="utf-8").strip()
            except OSError as error:
                raise SettingsError(
                    f"cannot read LOCUS_API_KEY_FILE ({self.api_key_file}): {error.strerror}"
                ) from None
        return ""
