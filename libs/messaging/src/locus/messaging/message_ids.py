"""Deterministic message ids of events whose content, not their position, identifies them."""

from __future__ import annotations

import hashlib

from locus.v1 import events_pb2


def index_updated_message_id(event: events_pb2.IndexUpdated) -> str:
    """``index.updated:<stage>:<job>:<digest>``, the digest over the report's files, versions
    and statuses: a report repeated after a redelivery is deduplicated by JetStream, a
    different one (another file, version or status) is not."""
    key = ",".join(sorted(f"{f.file_id}:{f.sha256}:{f.status}" for f in event.files))
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"index.updated:{event.stage}:{event.job_id}:{digest}"
