"""AstService over gRPC: nodes, symbol search, chunk enrichment and file outlines.

``project_id`` is always the project *id* as carried in events (``p_…``); ingestion is the
service that resolves project names, so callers resolve a name there first. Errors are typed
(``locus.rpc``): INVALID_ARGUMENT for requests that can never succeed, NOT_FOUND for ids this
service does not hold (any more).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence

from locus.ast.adapters.messages import (
    SYMBOL_KIND_NAMES,
    chunk_message,
    dependency_message,
    outline_messages,
    relation_message,
    symbol_message,
)
from locus.ast.adapters.store import AstStore, SymbolQuery
from locus.ast.adapters.tables import FileRow, SymbolRow
from locus.ast.domain.written_names import searched_symbol_name
from locus.rpc import InvalidArgument, NotFound, RpcContext
from locus.v1 import ast_pb2, ast_pb2_grpc, common_pb2

DEFAULT_PAGE = 50
MAX_PAGE = 500
MAX_OFFSET = 2**31 - 1  # what a store's OFFSET takes; a token beyond it is forged
MAX_NAME_CHARS = 200
MAX_ID_CHARS = 100
MAX_PATH_CHARS = 4096
MAX_ENRICH_CHUNKS = 500
DEFAULT_RELATIONS = 20
MAX_RELATIONS = 200
MAX_NODE_RELATIONS = 1000
MAX_LISTED_FILES = 100
MAX_SYMBOL_TEXTS = 100


def _required_id(field: str, value: str, hint: str) -> str:
    value = value.strip()
    if not value:
        raise InvalidArgument(f"{field} must not be empty; {hint}")
    if len(value) > MAX_ID_CHARS:
        raise InvalidArgument(f"{field} is longer than {MAX_ID_CHARS} characters")
    return value


def _required_ids(field: str, values: Sequence[str], limit: int, hint: str) -> list[str]:
    """At most ``limit`` ids, none empty, each once (in the order given)."""
    _at_most(len(values), limit, field.replace("_", " "))
    return list(dict.fromkeys(_required_id(field, value, hint) for value in values))


def _at_most(count: int, limit: int, what: str) -> None:
    if count > limit:
        raise InvalidArgument(f"{count} {what}; ask for at most {limit} at once")


def _project_id(value: str) -> str:
    return _required_id(
        "project_id", value, "give the project's id (p_…), as ingestion's GetProject returns it"
    )


def _query_fingerprint(query: SymbolQuery) -> str:
    key = "\0".join(
        (
            query.project_id,
            query.text,
            query.kind,
            query.path_prefix,
            str(query.exact),
            str(query.name_end),
            str(query.without_signatures),
        )
    )
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def encode_page_token(offset: int, fingerprint: str) -> str:
    payload = json.dumps({"o": offset, "q": fingerprint}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode()


def decode_page_token(token: str, fingerprint: str) -> int:
    """The offset a token of this query stands for; InvalidArgument for any other token."""
    try:
        payload = json.loads(base64.urlsafe_b64decode(token.encode()).decode())
    except (ValueError, binascii.Error):
        raise InvalidArgument("page_token is not one this server issued") from None
    offset = payload.get("o") if isinstance(payload, dict) else None
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidArgument("page_token is not one this server issued")
    if payload.get("q") != fingerprint:
        raise InvalidArgument(
            "page_token belongs to a different query; repeat the request it came from "
            "with the same project_id, name, kind, path_prefix and exact"
        )
    return offset


class AstServicer(ast_pb2_grpc.AstServiceServicer):
    def __init__(self, store: AstStore) -> None:
        self._store = store

    async def GetNode(
        self, request: ast_pb2.GetNodeRequest, context: RpcContext
    ) -> ast_pb2.GetNodeResponse:
        node_id = _required_id(
            "node_id", request.node_id, "take one from FindSymbols or a chunk's symbol_node_id"
        )
        found = await self._store.symbol(node_id)
        if found is None:
            raise NotFound(
                f"no node {node_id!r}: it was never indexed, or its file changed or was deleted "
                "since; look the symbol up again with FindSymbols"
            )
        symbol, file = found
        response = ast_pb2.GetNodeResponse(
            symbol=symbol_message(symbol, file),
            children=[symbol_message(child, file) for child in await self._store.children(node_id)],
        )
        if request.include_relations:
            response.outgoing.extend(
                relation_message(r) for r in await self._store.outgoing(node_id, MAX_NODE_RELATIONS)
            )
            response.incoming.extend(
                relation_message(r) for r in await self._store.incoming(symbol, MAX_NODE_RELATIONS)
            )
        return response

    async def FindSymbols(
        self, request: ast_pb2.FindSymbolsRequest, context: RpcContext
    ) -> ast_pb2.FindSymbolsResponse:
        project_id = _project_id(request.project_id)
        name = searched_symbol_name(
            request.name.strip(), whole_name=request.exact and not request.exact_name_end
        )
        if len(name) > MAX_NAME_CHARS:
            raise InvalidArgument(f"name is longer than {MAX_NAME_CHARS} characters")
        if request.exact and not name:
            raise InvalidArgument("exact matching needs a name")
        if request.kind != common_pb2.SYMBOL_KIND_UNSPECIFIED and (
            request.kind not in SYMBOL_KIND_NAMES
        ):
            raise InvalidArgument(f"unknown symbol kind {request.kind}")
        if len(request.path_prefix) > MAX_PATH_CHARS:
            raise InvalidArgument(f"path_prefix is longer than {MAX_PATH_CHARS} characters")
        if request.page.page_size < 0:
            raise InvalidArgument("page.page_size must not be negative (0 = server default)")
        query = SymbolQuery(
            project_id=project_id,
            text=name.lower(),
            kind=SYMBOL_KIND_NAMES.get(request.kind, ""),
            path_prefix=request.path_prefix,
            exact=request.exact,
            name_end=request.exact and request.exact_name_end,
            without_signatures=request.without_signatures,
        )
        fingerprint = _query_fingerprint(query)
        offset = (
            decode_page_token(request.page.page_token, fingerprint)
            if request.page.page_token
            else 0
        )
        limit = min(request.page.page_size or DEFAULT_PAGE, MAX_PAGE)
        rows = await self._store.find_symbols(query, offset, limit + 1)
        return ast_pb2.FindSymbolsResponse(
            symbols=[symbol_message(symbol, file) for symbol, file in rows[:limit]],
            next_page_token=(
                encode_page_token(offset + limit, fingerprint) if len(rows) > limit else ""
            ),
        )

    async def Enrich(
        self, request: ast_pb2.EnrichRequest, context: RpcContext
    ) -> ast_pb2.EnrichResponse:
        project_id = _project_id(request.project_id)
        _at_most(len(request.chunk_ids), MAX_ENRICH_CHUNKS, "chunk ids")
        if request.max_relations < 0:
            raise InvalidArgument("max_relations must not be negative (0 = server default)")
        limit = min(request.max_relations or DEFAULT_RELATIONS, MAX_RELATIONS)
        chunk_ids = list(dict.fromkeys(c.strip() for c in request.chunk_ids if c.strip()))
        found = await self._store.chunks(project_id, chunk_ids)
        by_node = await self._store.symbols_and_ancestors(
            (chunk.symbol_node_id for chunk, _ in found.values()),
            with_ancestors=not request.symbols_only,
        )
        chunk_symbols = {
            chunk_id: symbol
            for chunk_id, (chunk, file) in found.items()
            if (symbol := by_node.get(chunk.symbol_node_id)) is not None
            and symbol.file_id == file.file_id
        }
        relations = (
            {}
            if request.symbols_only
            else await self._store.relations_of(list(chunk_symbols.values()), limit)
        )
        response = ast_pb2.EnrichResponse()
        for chunk_id in chunk_ids:
            if chunk_id not in found:
                response.missing_chunk_ids.append(chunk_id)
                continue
            chunk, file = found[chunk_id]
            enriched = response.chunks.add(chunk=chunk_message(chunk, file))
            symbol = chunk_symbols.get(chunk_id)
            if symbol is None:
                continue  # a line window of a file without symbols
            enriched.symbol.CopyFrom(symbol_message(symbol, file))
            if request.symbols_only:
                continue
            enriched.ancestors.extend(
                symbol_message(ancestor, file) for ancestor in _ancestors(symbol, by_node)
            )
            outgoing, incoming = relations[symbol.node_id]
            enriched.outgoing.extend(relation_message(r) for r in outgoing)
            enriched.incoming.extend(relation_message(r) for r in incoming)
        return response

    async def GetFileOutline(
        self, request: ast_pb2.GetFileOutlineRequest, context: RpcContext
    ) -> ast_pb2.GetFileOutlineResponse:
        project_id = _project_id(request.project_id)
        file_id = request.file_id.strip()
        relative_path = request.relative_path.strip()
        if not file_id and not relative_path:
            raise InvalidArgument("give the file's file_id or its relative_path")
        if len(file_id) > MAX_ID_CHARS or len(relative_path) > MAX_PATH_CHARS:
            raise InvalidArgument("file_id or relative_path is too long")
        files = await self._store.find_files(project_id, file_id, relative_path)
        wanted = f"file {file_id!r}" if file_id else f"file at {relative_path!r}"
        if not files:
            raise NotFound(
                f"no {wanted} in project {project_id!r}: not scanned yet, deleted, "
                "or not a file of this project"
            )
        if len(files) > 1:
            raise InvalidArgument(
                f"{relative_path!r} exists in {len(files)} sources of the project; "
                f"give file_id instead (one of {', '.join(f.file_id for f in files)})"
            )
        file: FileRow = files[0]
        symbols, dependencies = await self._store.file_outline(
            file, with_dependencies=not request.symbols_only
        )
        return ast_pb2.GetFileOutlineResponse(
            symbols=[symbol_message(symbol, file) for symbol in symbols],
            dependencies=[dependency_message(d) for d in dependencies],
            parse_errors=file.parse_errors,
        )

    async def ListFileSymbols(
        self, request: ast_pb2.ListFileSymbolsRequest, context: RpcContext
    ) -> ast_pb2.ListFileSymbolsResponse:
        project_id = _project_id(request.project_id)
        file_ids = _required_ids(
            "file_ids",
            request.file_ids,
            MAX_LISTED_FILES,
            "take them from search hits or FindSymbols",
        )
        unknown = [kind for kind in request.kinds if kind not in SYMBOL_KIND_NAMES]
        if unknown:
            raise InvalidArgument(f"unknown symbol kind {unknown[0]}")
        if request.limit_per_file < 0:
            raise InvalidArgument("limit_per_file must not be negative (0 = every symbol)")
        found = await self._store.outline_symbols(
            project_id,
            file_ids,
            [SYMBOL_KIND_NAMES[kind] for kind in request.kinds],
            request.limit_per_file,
        )
        response = ast_pb2.ListFileSymbolsResponse()
        for file_id in file_ids:
            if file_id not in found:
                response.missing_file_ids.append(file_id)
                continue
            file, symbols = found[file_id]
            response.files.add(file_id=file_id, symbols=outline_messages(symbols, file))
        return response

    async def GetSymbolTexts(
        self, request: ast_pb2.GetSymbolTextsRequest, context: RpcContext
    ) -> ast_pb2.GetSymbolTextsResponse:
        project_id = _project_id(request.project_id)
        node_ids = _required_ids(
            "node_ids", request.node_ids, MAX_SYMBOL_TEXTS, "take them from Locate or FindSymbols"
        )
        found = await self._store.first_chunks(project_id, node_ids)
        response = ast_pb2.GetSymbolTextsResponse()
        for node_id in node_ids:
            chunk = found.get(node_id)
            if chunk is None:
                response.missing_node_ids.append(node_id)
                continue
            response.symbols.add(
                node_id=node_id,
                chunk_id=chunk.chunk_id,
                text=chunk.text,
                start_line=chunk.start_line,
                end_line=chunk.end_line,
            )
        return response


def _ancestors(symbol: SymbolRow, by_node: dict[str, SymbolRow]) -> list[SymbolRow]:
    """Parent chain, innermost first (parents are always in the same file)."""
    chain: list[SymbolRow] = []
    seen = {symbol.node_id}
    parent = by_node.get(symbol.parent_node_id)
    while parent is not None and parent.node_id not in seen:
        chain.append(parent)
        seen.add(parent.node_id)
        parent = by_node.get(parent.parent_node_id)
    return chain
