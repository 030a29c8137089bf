"""Impact settings (LOCUS_IMPACT_*). Fails fast on invalid values."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from locus.config import ServiceSettings


class ImpactSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="LOCUS_IMPACT_", extra="ignore")

    service_name: str = "impact"
    grpc_port: int = Field(default=50054, ge=0, le=65535)
    # Durable consumer of files.parsed; one name per deployment, shared by its replicas.
    consumer_name: str = Field(default="impact", min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    fetch_batch: int = Field(default=64, ge=1, le=1000)
    # files.parsed parts gathered into one graph write: a lone change waits batch_linger,
    # a scan's stream stream_batch_linger (fewer, larger transactions).
    batch_linger_seconds: float = Field(default=0.05, ge=0, le=10)
    stream_batch_linger_seconds: float = Field(default=0.3, ge=0, le=10)
    # Projects whose graph stays in memory (least recently queried are dropped first).
    max_cached_projects: int = Field(default=16, ge=1, le=10_000)
    # A project's graph is rebuilt this long after files.parsed last changed the project, and
    # written under data_dir/graphs so a restart loads them instead of building them.
    graph_rebuild_delay_seconds: float = Field(default=3.0, ge=0)
    persist_graphs: bool = True
