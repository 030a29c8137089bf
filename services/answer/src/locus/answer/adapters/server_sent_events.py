"""Server-sent events (text/event-stream) decoded line by line, as OpenAI-compatible servers
(vLLM, llama.cpp, OpenAI) stream chat completions: ``data: {json}`` events separated by blank
lines, ``: comment`` keep-alives, and a final ``data: [DONE]``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EventDecoder:
    """Feed lines (without their line ending); get each event's data when the event ends."""

    _data: list[str] = field(default_factory=list)

    def feed(self, line: str) -> str | None:
        if not line:
            return self._flush()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        return None  # event:, id:, retry: carry nothing an answer needs

    def close(self) -> str | None:
        """Data of a last event the stream did not terminate with a blank line."""
        return self._flush()

    def _flush(self) -> str | None:
        if not self._data:
            return None
        data = "\n".join(self._data)
        self._data.clear()
        return data
