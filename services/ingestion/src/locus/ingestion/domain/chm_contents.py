"""A CHM package's table of contents (the ``.hhc`` sitemap: nested ``<UL>`` lists of
``<OBJECT type="text/sitemap">`` entries with Name and Local params) read into pages with
their TOC path, and the pages of an extracted package in the order to index them."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import unquote

from locus.ingestion.domain.knowledge import TITLE_SEPARATOR

PAGE_EXTENSIONS = (".html", ".htm")


@dataclass(frozen=True)
class ContentsEntry:
    toc_path: tuple[str, ...]  # names from the top of the table of contents down to the entry
    local: str  # the page inside the package ("" for a heading without a page)


@dataclass(frozen=True)
class ChmPage:
    path: str  # inside the package, '/'-separated, no leading slash
    title: str  # "Manual > Installation > Upgrading"


class _SitemapReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.entries: list[ContentsEntry] = []
        self._depth = 0
        self._names: list[str] = []  # the current TOC path, one name per list depth
        self._params: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key.lower(): value or "" for key, value in attrs}
        if tag == "ul":
            self._depth += 1
        elif tag == "object" and values.get("type", "").lower() == "text/sitemap":
            self._params = {}
        elif tag == "param" and self._params is not None:
            name = values.get("name", "").lower()
            if name in ("name", "local") and name not in self._params:
                self._params[name] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "ul":
            self._depth = max(0, self._depth - 1)
        elif tag == "object" and self._params is not None:
            params, self._params = self._params, None
            name = " ".join(params.get("name", "").split())
            if not name:
                return
            depth = max(self._depth, 1)
            self._names = [*self._names[: depth - 1], name]
            self.entries.append(ContentsEntry(tuple(self._names), params.get("local", "")))


def read_contents(text: str) -> list[ContentsEntry]:
    reader = _SitemapReader()
    reader.feed(text)
    reader.close()
    return reader.entries


def _page_key(path: str) -> str:
    return posixpath.normpath(unquote(path.split("#", 1)[0]).replace("\\", "/")).lstrip("/").lower()


def chm_pages(files: Mapping[str, bytes], package_title: str) -> list[ChmPage]:
    """The HTML pages of an extracted package (path → bytes), titled by their TOC path, in TOC
    order; pages the table of contents does not list follow, titled ``<package> > <path>``.
    A page listed twice keeps its first entry."""
    pages = {_page_key(path): path for path in files if path.lower().endswith(PAGE_EXTENSIONS)}
    contents = sorted(path for path in files if path.lower().endswith(".hhc"))
    found: dict[str, ChmPage] = {}
    if contents:
        # A package has one contents file; a root-level one wins over nested copies.
        first = min(contents, key=lambda path: (path.count("/"), path))
        text = files[first].decode("utf-8", errors="replace")
        for entry in read_contents(text):
            key = _page_key(entry.local) if entry.local else ""
            if key in pages and pages[key] not in found:
                separator = f" {TITLE_SEPARATOR} "
                found[pages[key]] = ChmPage(pages[key], separator.join(entry.toc_path))
    for key in sorted(pages):
        path = pages[key]
        if path not in found:
            found[path] = ChmPage(path, f"{package_title} {TITLE_SEPARATOR} {path}")
    return list(found.values())
