"""Exceptions raised by the retrieval domain; adapters map them onto gRPC status codes."""

from __future__ import annotations


class RetrievalError(Exception):
    """Base class for every error the retrieval domain raises on purpose."""


class InvalidSearch(RetrievalError):
    """A search request is empty, too long, out of bounds or names an unknown mode."""


class NothingIndexed(RetrievalError):
    """The project has no indexed chunks yet."""


class EmbedderUnavailable(RetrievalError):
    """The embedder cannot be loaded or reached; the message says how to fix it."""


class IndexIncompatible(RetrievalError):
    """An index on disk or on a server was built for another vector size or schema."""
