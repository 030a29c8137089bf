"""Subject names: ``<prefix>.<noun>.<past-tense verb>``; dead letters under ``<prefix>.dlq.``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subjects:
    prefix: str = "locus.v1"

    def _s(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    @property
    def scan_requested(self) -> str:
        return self._s("scan.requested")

    @property
    def scan_completed(self) -> str:
        return self._s("scan.completed")

    @property
    def files_changed(self) -> str:
        return self._s("files.changed")

    @property
    def files_parsed(self) -> str:
        return self._s("files.parsed")

    @property
    def project_deleted(self) -> str:
        return self._s("project.deleted")

    @property
    def index_updated(self) -> str:
        return self._s("index.updated")

    def vectors_requested(self, value_class: str) -> str:
        """``locus.v1.vectors.requested.<value class>`` (source, test, docs, vendored)."""
        return self._s(f"vectors.requested.{value_class}")

    @property
    def request_submitted(self) -> str:
        return self._s("request.submitted")

    @property
    def answer_completed(self) -> str:
        return self._s("answer.completed")

    @property
    def feedback_recorded(self) -> str:
        return self._s("feedback.recorded")

    @property
    def access_denied(self) -> str:
        return self._s("access.denied")

    @property
    def all(self) -> str:
        return self._s(">")

    def dead_letter(self, subject: str) -> str:
        """``locus.v1.files.changed`` → ``locus.v1.dlq.files.changed``."""
        suffix = subject.removeprefix(self.prefix + ".")
        return self._s(f"dlq.{suffix}")
