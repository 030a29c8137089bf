"""Exceptions raised on purpose by the gateway's domain and service layer; the gRPC adapter maps
them onto status codes. Messages are written for the person who sent the request."""

from __future__ import annotations


class GatewayError(Exception):
    """Base class for every error the gateway raises on purpose."""


class InvalidRequest(GatewayError):
    """A request value is empty, too long, out of range or malformed."""


class ProjectNotScanned(GatewayError):
    """The project exists but no scan of it has completed, so there is nothing to search."""


class RequestNotFound(GatewayError):
    """No recorded request has that id."""


class FileNotFound(GatewayError):
    """The project has no scanned file at that path (or with that id)."""


class LinesOutOfRange(GatewayError):
    """The lines asked for start past the file's end, or are more than one call returns."""


class RequestIdTaken(GatewayError):
    """A request with that id is recorded already (the caller reused an x-request-id)."""


class InvalidPageToken(InvalidRequest):
    """The page token was not issued by this server (or by this query)."""


class RerankerUnavailable(GatewayError):
    """The rerank endpoint failed or answered something unusable; Locate keeps its ranking."""
