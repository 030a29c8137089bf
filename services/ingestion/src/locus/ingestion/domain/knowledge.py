"""Knowledge documents from outside a repository: accepted formats, validation, the document id
(from the URL, else the title) and the file path in the project's documents source that carries
the title (``knowledge/<slug of each title part>.<ext>``)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from locus.ingestion.domain.errors import InvalidRequest

DOCUMENTS_DIRECTORY = "knowledge"
TITLE_SEPARATOR = ">"
MAX_TITLE_CHARS = 300
MAX_URL_CHARS = 2000
# format → the file extension its path gets (the language ingestion and ast know it by)
FORMAT_EXTENSIONS = {
    "markdown": ".md",
    "restructuredtext": ".rst",
    "asciidoc": ".adoc",
    "html": ".html",
}
_FORMAT_ALIASES = {
    "md": "markdown",
    "rst": "restructuredtext",
    "rest": "restructuredtext",
    "adoc": "asciidoc",
    "htm": "html",
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_MAX_SLUG_CHARS = 80


@dataclass(frozen=True)
class DocumentDraft:
    """A validated document, ready to store: its body as UTF-8 bytes and their hash."""

    document_id: str
    title: str
    url: str
    format: str
    data: bytes
    sha256: str


def document_format(value: str) -> str:
    """The canonical format name for ``value`` (a few file-extension aliases are accepted)."""
    name = value.strip().lower()
    name = _FORMAT_ALIASES.get(name, name)
    if name not in FORMAT_EXTENSIONS:
        accepted = ", ".join(FORMAT_EXTENSIONS)
        raise InvalidRequest(f"format {value!r} is not one this service reads; give {accepted}")
    return name


def format_of_filename(name: str) -> str | None:
    """The format a file name's extension stands for (``guide.rst`` → restructuredtext)."""
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if not extension:
        return None
    found = _FORMAT_ALIASES.get(extension, extension)
    return found if found in FORMAT_EXTENSIONS else None


def document_id_for(project_id: str, title: str, url: str) -> str:
    key = f"url\0{url}" if url else f"title\0{title}"
    return "doc_" + hashlib.sha256(f"{project_id}\0{key}".encode()).hexdigest()[:24]


def draft_document(
    project_id: str, title: str, url: str, body: str, format_name: str, max_bytes: int
) -> DocumentDraft:
    """Validate one document; every refusal names the limit or the accepted values."""
    title = " ".join(title.split())
    if not title:
        raise InvalidRequest("title must not be empty: give the document's title")
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidRequest(f"title is longer than {MAX_TITLE_CHARS} characters")
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise InvalidRequest(f"url is longer than {MAX_URL_CHARS} characters")
    if _CONTROL.search(url) or " " in url:
        raise InvalidRequest("url must not contain spaces or control characters")
    canonical = document_format(format_name)
    data = body.encode("utf-8")
    if len(data) > max_bytes:
        raise InvalidRequest(
            f"the body is {len(data):,} bytes; a document may have at most {max_bytes:,} bytes "
            "(split it into several documents)"
        )
    if not body.strip():
        raise InvalidRequest("body is empty: give the document's text")
    return DocumentDraft(
        document_id=document_id_for(project_id, title, url),
        title=title,
        url=url,
        format=canonical,
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def slug(text: str) -> str:
    """Lower-case ASCII words joined by hyphens (``Getting Started!`` → ``getting-started``)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")
    return words[:_MAX_SLUG_CHARS].rstrip("-") or "untitled"


def document_path(title: str, format_name: str, document_id: str, taken: set[str]) -> str:
    """``knowledge/<part>/<part>.<ext>`` from the title's ``>``-separated parts; when another
    document has that path already, the document id's start tells them apart."""
    parts = [slug(part) for part in title.split(TITLE_SEPARATOR) if part.strip()] or ["untitled"]
    extension = FORMAT_EXTENSIONS[format_name]
    path = "/".join([DOCUMENTS_DIRECTORY, *parts]) + extension
    if path in taken:
        path = "/".join([DOCUMENTS_DIRECTORY, *parts[:-1], f"{parts[-1]}-{document_id[4:12]}"])
        path += extension
    return path
