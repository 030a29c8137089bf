"""Service layer of Ask: locate, send the context bundle to the answer service, relay its stream.

The stream is: one ``located`` event, the answer's events (text deltas, citations, usage,
errors) and exactly one ``final``. Each citation is followed by a ``snippet``: the cited lines
as the file has them (read from ingestion; the chunk's own text when the file cannot be read).
A scoped Ask's ``located`` is the merged one of its projects, its context drawn from all of
them, and each snippet is read from its citation's own project.
Problems before ``located`` end the call with a status code (like Locate); later ones become an
``error`` event and a FAILED final. A client that cancels cancels the answer stream (which
cancels the LLM request) and the request is recorded cancelled."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from locus.gateway.adapters.proto_mapping import (
    chunk_lines,
    citation_artifact,
    context_snippet,
    hit_artifact,
    snippet_artifact,
    snippet_message,
)
from locus.gateway.domain.context_selection import merge_contexts, select_context
from locus.gateway.domain.errors import GatewayError
from locus.gateway.domain.file_reading import NumberedLine
from locus.gateway.domain.requests import RequestStatus
from locus.gateway.domain.validation import bounded_count
from locus.gateway.downstream import AnswerGenerator, AnswerStream
from locus.gateway.locating import Located, LocateQuery, Locator
from locus.gateway.reading import FileReader
from locus.gateway.request_log import OpenRequest, RequestJournal
from locus.gateway.scoping import ScopedLocated
from locus.gateway.settings import GatewaySettings
from locus.rpc import ServiceError
from locus.v1 import answer_pb2, gateway_pb2

DRAIN_SECONDS = 2.0  # how long the rest of an answer stream may take after its final
_FINAL_STATUSES = {
    answer_pb2.FINAL_STATUS_FINISHED: RequestStatus.COMPLETED,
    answer_pb2.FINAL_STATUS_FAILED: RequestStatus.FAILED,
    answer_pb2.FINAL_STATUS_CANCELLED: RequestStatus.CANCELLED,
}


@dataclass
class AskSession:
    """One Ask in flight; ``cancel`` may be called from outside (the RPC's done callback)."""

    entry: OpenRequest
    stream: AnswerStream | None = None
    finished: bool = False
    client_gone: bool = False
    error_code: str = ""
    text: list[str] = field(default_factory=list)
    citations: list[Any] = field(default_factory=list)

    def cancel(self) -> None:
        """The client went away: stop the answer (a no-op once the final was sent)."""
        if self.finished:
            return
        self.client_gone = True
        if self.stream is not None:
            self.stream.cancel()


class Asker:
    def __init__(
        self,
        settings: GatewaySettings,
        locator: Locator,
        answers: AnswerGenerator,
        journal: RequestJournal,
        files: FileReader,
    ) -> None:
        self._settings = settings
        self._locator = locator
        self._answers = answers
        self._journal = journal
        self._files = files

    async def ask(
        self, project_ref: str, question: str, max_context_chunks: int, session: AskSession
    ) -> AsyncGenerator[Any, None]:
        """AskEvents. Raises (before the first event) for invalid requests and failed locates;
        the caller records those. After the first event this records the outcome itself."""
        entry = session.entry
        context_size = self._context_size(max_context_chunks)
        located = await self._locator.locate(
            LocateQuery(project_ref=project_ref, question=question), entry
        )
        await self._journal.add_artifacts(
            entry, [hit_artifact(i, hit) for i, hit in enumerate(located.hits)]
        )
        choices = select_context(located.ranking, context_size, has_text=_has_text(located))
        snippets = [context_snippet(c, located.chunks[c.chunk_id]) for c in choices]
        answer = self._answer(located.response, located.question, snippets, session, scoped=False)
        async with contextlib.aclosing(answer) as events:  # a client gone: its finally runs now
            async for event in events:
                yield event

    async def ask_scoped(
        self, scoped: ScopedLocated, max_context_chunks: int, session: AskSession
    ) -> AsyncGenerator[Any, None]:
        """AskEvents of a question asked of several projects, located already (ScopedQuestions):
        the context is each project's choice merged by score; every context snippet (and so
        every citation) carries its project, and each snippet is read from its own project."""
        entry = session.entry
        await self._journal.add_artifacts(
            entry, [hit_artifact(i, hit) for i, hit in enumerate(scoped.hits)]
        )
        context_size = self._context_size(max_context_chunks)
        merged = merge_contexts(
            [
                select_context(located.ranking, context_size, has_text=_has_text(located))
                for _, located in scoped.located
            ],
            context_size,
        )
        snippets = []
        for order, choice in merged:
            project, located = scoped.located[order]
            snippet = context_snippet(choice, located.chunks[choice.chunk_id])
            snippet.chunk.location.project_id = project.project_id
            snippets.append(snippet)
        question = scoped.located[0][1].question
        answer = self._answer(scoped.response, question, snippets, session, scoped=True)
        async with contextlib.aclosing(answer) as events:
            async for event in events:
                yield event

    def _context_size(self, max_context_chunks: int) -> int:
        return bounded_count(
            "max_context_chunks",
            max_context_chunks,
            default=self._settings.default_context_chunks,
            limit=self._settings.max_context_chunks_limit,
        )

    async def _answer(
        self,
        response: Any,
        question: str,
        snippets: list[Any],
        session: AskSession,
        *,
        scoped: bool,
    ) -> AsyncGenerator[Any, None]:
        """The stream after locating: ``located``, the answer's events, the recorded final."""
        entry = session.entry
        await self._journal.add_artifacts(
            entry, [snippet_artifact(i, snippet) for i, snippet in enumerate(snippets)]
        )
        response_bytes = response.SerializeToString()
        request_id = entry.request_id
        try:
            yield gateway_pb2.AskEvent(located=response, request_id=request_id)
            final = None
            try:
                with entry.timed("answer"):
                    async for event in self._relay(question, snippets, session, scoped=scoped):
                        if event.WhichOneof("event") == "final":
                            final = event.final  # sent last, once the outcome is recorded
                        else:
                            yield event
            except ServiceError as error:
                session.error_code = error.code.name
                yield gateway_pb2.AskEvent(
                    error=answer_pb2.GenerationError(code=error.code.name, message=error.message),
                    request_id=request_id,
                )
                final = answer_pb2.Final(
                    status=answer_pb2.FINAL_STATUS_FAILED, message=error.message
                )
            if final is None:
                message = "the answer service ended the stream without a final status"
                session.error_code = "INTERNAL"
                yield gateway_pb2.AskEvent(
                    error=answer_pb2.GenerationError(code="INTERNAL", message=message),
                    request_id=request_id,
                )
                final = answer_pb2.Final(status=answer_pb2.FINAL_STATUS_FAILED, message=message)
            session.finished = True
            status = _FINAL_STATUSES.get(final.status, RequestStatus.FAILED)
            if session.client_gone:
                status = RequestStatus.CANCELLED
            # Recorded before the final event goes out: a client that leaves right after it
            # must not turn a finished answer into a cancelled one.
            await self._finish(session, status, response_bytes, final.message)
            yield gateway_pb2.AskEvent(final=final, request_id=request_id)
        finally:
            if not entry.closed:
                # The client went away (CancelledError inside, or GeneratorExit at a yield).
                session.cancel()
                await self._finish(session, RequestStatus.CANCELLED, response_bytes, "")

    async def _relay(
        self, question: str, snippets: list[Any], session: AskSession, *, scoped: bool
    ) -> AsyncIterator[Any]:
        entry = session.entry
        stream = self._answers.generate(
            answer_pb2.GenerateRequest(
                request_id=entry.request_id,
                question=question,
                context=snippets,
                max_tokens=self._settings.answer_max_tokens,
                min_relevance=self._settings.answer_min_relevance,
            )
        )
        session.stream = stream
        cited = {snippet.citation_id: snippet for snippet in snippets}
        events = aiter(stream)
        try:
            async for event in events:
                kind = event.WhichOneof("event")
                if kind == "text":
                    session.text.append(event.text.text)
                    yield gateway_pb2.AskEvent(text=event.text, request_id=entry.request_id)
                elif kind == "citation":
                    session.citations.append(event.citation)
                    yield gateway_pb2.AskEvent(citation=event.citation, request_id=entry.request_id)
                    context = cited.get(event.citation.citation_id)
                    snippet = await self._snippet(entry, event.citation, context, scoped=scoped)
                    yield gateway_pb2.AskEvent(snippet=snippet, request_id=entry.request_id)
                elif kind == "usage":
                    yield gateway_pb2.AskEvent(usage=event.usage, request_id=entry.request_id)
                elif kind == "error":
                    session.error_code = session.error_code or event.error.code or "ANSWER_ERROR"
                    yield gateway_pb2.AskEvent(error=event.error, request_id=entry.request_id)
                elif kind == "final":
                    yield gateway_pb2.AskEvent(final=event.final, request_id=entry.request_id)
                    break
            # The answer service ends its stream right after the final: read on to that end so
            # the call (and its client span) completes normally rather than being cancelled.
            with contextlib.suppress(TimeoutError, ServiceError):
                await asyncio.wait_for(_discard(events), DRAIN_SECONDS)
        finally:
            stream.cancel()

    async def _snippet(
        self, entry: OpenRequest, citation: Any, context: Any | None, *, scoped: bool
    ) -> Any:
        """The Snippet of a citation: its lines read from the file (of the citation's own
        project when scoped); failing that, the cited chunk's text when it is exactly those
        lines; failing that, no lines."""
        location = citation.location
        project_ref = entry.project_id or entry.project_ref
        if scoped:
            project_ref = location.project_id or (
                context.chunk.location.project_id if context is not None else ""
            )
        lines: list[NumberedLine] = []
        language = ""
        if location.relative_path and location.start_line > 0:
            try:
                excerpt = await self._files.read(
                    project_ref,
                    relative_path=location.relative_path,
                    file_id=location.file_id,
                    start_line=location.start_line,
                    end_line=max(location.end_line, location.start_line),
                )
                lines, language = excerpt.lines, excerpt.language
            except (GatewayError, ServiceError) as error:
                entry.notes.append(f"snippet of {citation.citation_id} from the chunk: {error}")
        if not lines and context is not None:
            lines = chunk_lines(context.chunk)
        return snippet_message(citation, context, lines, language)

    async def _finish(
        self, session: AskSession, status: RequestStatus, response: bytes, message: str
    ) -> None:
        error_code = {
            RequestStatus.COMPLETED: "",
            RequestStatus.CANCELLED: "CANCELLED",
        }.get(status, session.error_code or "ANSWER_FAILED")
        # A failed record is logged by the journal; the stream goes on to its final.
        with contextlib.suppress(Exception):
            await self._journal.close(
                session.entry,
                status,
                error_code=error_code,
                error_message="" if status == RequestStatus.COMPLETED else message,
                response=response,
                answer_text="".join(session.text),
                citations=[citation_artifact(i, c) for i, c in enumerate(session.citations)],
            )


def _has_text(located: Located) -> Callable[[str], bool]:
    return lambda chunk_id: bool(chunk_id in located.chunks and located.chunks[chunk_id].text)


async def _discard(events: AsyncIterator[Any]) -> None:
    async for _ in events:
        pass
