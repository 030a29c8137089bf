"""AST service settings (LOCUS_AST_*). Fails fast on invalid values."""

from __future__ import annotations

import os

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict

from locus.ast.domain import ChunkingPolicy
from locus.config import ServiceSettings


class AstSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="LOCUS_AST_", extra="ignore")

    service_name: str = "ast"
    grpc_port: int = Field(default=50052, ge=0, le=65535)
    # Code chunks: a body over either limit is split into parts sharing `overlap` lines.
    chunk_max_lines: int = Field(default=60, ge=1, le=10_000)
    chunk_max_chars: int = Field(default=3000, ge=1, le=1_000_000)
    chunk_overlap_lines: int = Field(default=5, ge=0, le=9_999)
    # Files the extractor cannot parse (markdown, yaml, other languages) become line windows.
    text_window_lines: int = Field(default=60, ge=1, le=10_000)
    # A files.parsed message carries at most this many symbols + relations + dependencies +
    # chunks, and about this many bytes; a larger file is published in several parts.
    max_items_per_part: int = Field(default=400, ge=1, le=100_000)
    max_part_bytes: int = Field(default=512 * 1024, ge=4096, le=8 * 1024 * 1024)
    # Files of one batch fetched and parsed at the same time, and the worker processes that
    # parse them (-1: one per core; 0: parse in a thread of the service process).
    parse_workers: int = Field(default=8, ge=1, le=64)
    parse_processes: int = Field(default=-1, ge=-1, le=256)

    @model_validator(mode="after")
    def _chunking_is_consistent(self) -> AstSettings:
        if self.chunk_overlap_lines >= self.chunk_max_lines:
            raise ValueError(
                f"chunk_overlap_lines ({self.chunk_overlap_lines}) must be smaller than "
                f"chunk_max_lines ({self.chunk_max_lines})"
            )
        return self

    @model_validator(mode="after")
    def _processes_per_core(self) -> AstSettings:
        if self.parse_processes < 0:
            # The cores this process may run on (a container's CPU set), at most 16.
            self.parse_processes = min(len(os.sched_getaffinity(0)), 16)
        return self

    @property
    def chunking_policy(self) -> ChunkingPolicy:
        return ChunkingPolicy(
            max_lines=self.chunk_max_lines,
            max_chars=self.chunk_max_chars,
            overlap_lines=self.chunk_overlap_lines,
        )
