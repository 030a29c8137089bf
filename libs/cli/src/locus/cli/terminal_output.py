"""What a person reads: rich tables and short summaries. Locations are printed as
``path:start-end`` so terminals and editors can open them. Text that came from the server or a
file is escaped, never read as rich markup."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from locus.cli.json_output import dumps, line_span, scan_json
from locus.codepaths.relation_words import relation_label
from locus.v1 import ast_pb2, common_pb2, gateway_pb2, impact_pb2, ingestion_pb2, retrieval_pb2

WIDE_WITHOUT_TERMINAL = 160


def make_console(*, stderr: bool = False) -> Console:
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:
        # Pipes and logs: tables as wide as a wide terminal, messages never wrapped mid-path.
        console.width = WIDE_WITHOUT_TERMINAL
        console.soft_wrap = True
    return console


def print_json(console: Console, data: Any) -> None:
    """Highlighted in a terminal; byte-for-byte ``json.dumps`` output in pipes and files."""
    if console.is_terminal:
        console.print_json(dumps(data))
    else:
        console.file.write(dumps(data) + "\n")
        console.file.flush()


def _table(*columns: str, title: str | None = None) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _symbol_location(symbol: common_pb2.Symbol) -> str:
    location = symbol.location
    return line_span(location.relative_path, location.start_line, location.end_line)


def _kind(symbol: common_pb2.Symbol) -> str:
    return common_pb2.SymbolKind.Name(symbol.kind).removeprefix("SYMBOL_KIND_").lower()


def projects_table(projects: Sequence[ingestion_pb2.Project]) -> Table:
    table = _table("name", "project id", "system", "subsystem", "latest snapshot")
    for project in projects:
        table.add_row(
            escape(project.name),
            project.project_id,
            escape(project.system),
            escape(project.subsystem),
            project.latest_snapshot_id or "(not scanned)",
        )
    return table


def sources_table(sources: Sequence[ingestion_pb2.Source]) -> Table:
    table = _table("source id", "kind", "path")
    for source in sources:
        kind = ingestion_pb2.SourceKind.Name(source.kind).removeprefix("SOURCE_KIND_").lower()
        where = source.path or f"{source.git_url}@{source.git_ref or 'HEAD'}"
        if source.last_commit_sha:
            where += f" ({source.last_commit_sha[:12]})"
        table.add_row(source.source_id, kind, escape(where))
    return table


def symbols_table(symbols: Sequence[common_pb2.Symbol]) -> Table:
    table = _table("kind", "symbol", "location")
    for symbol in symbols:
        location = _symbol_location(symbol)
        table.add_row(_kind(symbol), escape(symbol.qualified_name), escape(location))
    return table


def _first_line(text: str, width: int = 100) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= width else line[: width - 3] + "..."


def print_search_hits(console: Console, reply: retrieval_pb2.SearchResponse) -> None:
    """Each chunk, best first: its location, symbol, scores and first line of code."""
    mode = retrieval_pb2.SearchMode.Name(reply.mode).removeprefix("SEARCH_MODE_").lower()
    for rank, hit in enumerate(reply.hits, start=1):
        location = hit.chunk.location
        span = line_span(location.relative_path, location.start_line, location.end_line)
        ranks = [f"bm25 #{hit.lexical_rank}"] if hit.lexical_rank else []
        ranks += [f"vector #{hit.vector_rank}"] if hit.vector_rank else []
        console.print(
            f"{rank:>2}. [bold]{escape(span)}[/] {escape(hit.chunk.symbol_qualified_name)} "
            f"[dim]{hit.score:.3f} {' '.join(ranks)}[/]"
        )
        if preview := _first_line(hit.chunk.text):
            console.print(f"      [dim]{escape(preview)}[/]")
    console.print(f"{len(reply.hits)} chunk(s), {mode}", style="dim")


def _relation_kind(kind: common_pb2.RelationKind) -> str:
    """`RELATION_KIND_CALLS` → "calls"."""
    return common_pb2.RelationKind.Name(kind).removeprefix("RELATION_KIND_").lower()


def _relation_line(relation: common_pb2.Relation, *, outgoing: bool) -> str:
    kind = _relation_kind(relation.kind)
    if outgoing and relation.target_node_id:
        other, unresolved = relation.target_qualified_name or relation.target_name, ""
    elif outgoing:
        # Resolved to nothing in the project: the name as the code writes it (a guess such as
        # `pkg.positionedCells.associate` for a local's method would read as a symbol).
        other = relation.target_name or relation.target_qualified_name
        unresolved = " [dim](unresolved)[/]"
    else:
        other, unresolved = relation.source_qualified_name, ""
    line = f" [dim]line {relation.line}[/]" if relation.line else ""
    return f"  {kind} {escape(other)}{unresolved}{line}"


def print_node(console: Console, reply: ast_pb2.GetNodeResponse) -> None:
    """A symbol: kind, name and location, signature, first docstring line, children, and the
    relations each way (when asked for)."""
    symbol = reply.symbol
    console.print(
        f"{_kind(symbol)} [bold]{escape(symbol.qualified_name)}[/]  "
        f"{escape(_symbol_location(symbol))}"
    )
    if symbol.signature:
        console.print(f"  {escape(symbol.signature)}", highlight=False)
    if doc := _first_line(symbol.docstring):
        console.print(f"  [dim]{escape(doc)}[/]")
    if symbol.parent_qualified_name:
        console.print(f"  in {escape(symbol.parent_qualified_name)}", style="dim")
    if reply.children:
        console.print(f"[bold]children[/] ({len(reply.children)})")
        console.print(symbols_table(reply.children))
    for title, relations, outgoing in (
        ("outgoing", reply.outgoing, True),
        ("incoming", reply.incoming, False),
    ):
        if relations:
            console.print(f"[bold]{title}[/] ({len(relations)})")
            for relation in relations:
                console.print(_relation_line(relation, outgoing=outgoing))


def print_scan_summary(console: Console, job: ingestion_pb2.ScanJob, elapsed: float) -> None:
    data = scan_json(job, elapsed)
    stats = data["stats"]
    state = data["state"]
    style = {"completed": "bold green", "failed": "bold red"}.get(state, "bold")
    console.print(
        f"[{style}]scan {job.job_id} {state}[/] in {elapsed:.1f} s"
        + (f" (snapshot {job.snapshot_id})" if job.snapshot_id else "")
    )
    console.print(
        f"  added {stats['files_added']}  modified {stats['files_modified']}  "
        f"deleted {stats['files_deleted']}  unchanged {stats['files_unchanged']}  "
        f"skipped {stats['files_skipped']}"
    )
    embedded = "-" if job.without_vectors else stats["files_embedded"]
    level = f"{data['level']}; no vectors are made here" if job.without_vectors else data["level"]
    console.print(
        f"  seen {stats['files_seen']}  parsed {stats['files_parsed']}  "
        f"searchable {stats['files_indexed']}  embedded {embedded}  "
        f"failed {stats['files_failed']}  ({level})"
    )
    console.print(
        f"  throughput {data['files_per_second']:.1f} files/s, "
        f"{data['megabytes_per_second']:.2f} MB/s ({stats['bytes_read'] / 1_000_000:.2f} MB read)"
    )
    if job.error:
        console.print(f"  [red]error:[/] {escape(job.error)}")
    if stats["files_failed"]:
        console.print(f"  [yellow]{stats['files_failed']} file(s) failed to index[/]")


def _evidence_text(evidence: Sequence[gateway_pb2.Evidence], limit: int = 3) -> str:
    """The ``limit`` strongest pieces of evidence (by weight; --json has them all)."""
    strongest = sorted(evidence, key=lambda e: -e.weight)[:limit]
    parts = [f"{e.signal}" + (f" ({e.detail})" if e.detail else "") for e in strongest]
    return escape("; ".join(parts))


def nothing_found_hint(found: str, project: str, path: str = "", *, scanned: bool = False) -> str:
    """What an empty answer says: the path filter first when one was given (it is relative
    to the source root: `/etc` means `etc/`); else, for a project a scan has completed
    (``scanned``), what to try instead, and otherwise whether the project was scanned."""
    if path:
        return (
            f"{found} under '{escape(path)}' (a path relative to the source root); without "
            "--path, or is the project scanned?"
        )
    name = escape(project) if project else "the project"
    if scanned:
        return (
            f"{found} in {name}, which is scanned; try part of the name, or ask in words "
            f'(locus locate {escape(project)} "...")'
        )
    return f"{found}; is {name} scanned? (locus scan {escape(project) or 'PROJECT'} --wait)"


def print_located(
    console: Console,
    reply: gateway_pb2.LocateResponse,
    *,
    max_symbols_per_file: int = 5,
    path: str = "",
) -> None:
    if not reply.files and not reply.symbols:
        console.print(nothing_found_hint("nothing located", "", path))
        return
    if reply.projects:  # a scoped answer: each file names its project
        console.print(f"[bold]files[/] ({_projects_text(reply.projects)})")
    else:
        console.print(f"[bold]files[/] (snapshot {reply.snapshot_id or '-'})")
    for rank, located_file in enumerate(reply.files, start=1):
        # Labelled only when several projects answered: one project's are all the same.
        project = (located_file.project_name or located_file.project_id) if reply.projects else ""
        console.print(
            f"{rank:>2}. {escape(f'[{project}] ') if project else ''}"
            f"[bold]{escape(located_file.relative_path)}[/] "
            f"[dim]{located_file.score:.3f} {escape(located_file.language)}[/]"
        )
        if located_file.evidence:
            console.print(f"      [dim]{_evidence_text(located_file.evidence)}[/]")
        for located in located_file.symbols[:max_symbols_per_file]:
            _print_located_symbol(console, located, indent="      ")
    if reply.symbols:
        console.print("[bold]symbols[/]")
        for located in reply.symbols:
            _print_located_symbol(console, located, indent="  ")
    impact = reply.impact
    if impact.symbols or impact.files:
        console.print(
            f"[bold]impact[/] ({len(impact.symbols)} symbols, {len(impact.files)} files "
            "reached from these)"
        )
        for impacted in impact.symbols[:10]:
            console.print(
                f"  {escape(_symbol_location(impacted.symbol))}  "
                f"{escape(impacted.symbol.qualified_name)} "
                f"[dim]distance {impacted.distance}, {impacted.score:.3f}[/]"
            )
        for impacted_file in impact.files[:10]:
            console.print(
                f"  {escape(impacted_file.relative_path)} "
                f"[dim]distance {impacted_file.distance}, {impacted_file.score:.3f}[/]"
            )


def impact_path_text(reason: Sequence[impact_pb2.ImpactStep]) -> str:
    """The chain from the seed to an impacted symbol or file, as words: "called by, called
    by" (a caller's caller), "calls" (a callee), "contained in" (its class)."""
    words = []
    for step in reason:
        words.append(relation_label(_relation_kind(step.relation), step.reverse).replace("-", " "))
    return ", ".join(words)


def print_impact(console: Console, reply: impact_pb2.ComputeImpactResponse) -> None:
    """Impacted symbols then files, nearest first, each with how it is reached."""
    symbols = [
        (f"{_symbol_location(i.symbol)}  {i.symbol.qualified_name}", i) for i in reply.symbols
    ]
    files = [(i.relative_path, i) for i in reply.files]
    for heading, rows in (("symbols", symbols), ("files", files)):
        if rows:
            console.print(f"[bold]{heading}[/] ({len(rows)})")
        for label, item in rows:
            console.print(
                f"  {escape(label)} [dim]{escape(impact_path_text(item.reason))} · distance "
                f"{item.distance}, {item.score:.3f}[/]"
            )


def _projects_text(projects: Sequence[gateway_pb2.LocatedProject]) -> str:
    """ "orders 2 files, invoices 0 files, telescope skipped: not scanned yet"."""
    return ", ".join(
        escape(f"{p.name} skipped: {p.skipped}" if p.skipped else f"{p.name} {p.files} files")
        for p in projects
    )


def _print_located_symbol(
    console: Console, located: gateway_pb2.LocatedSymbol, indent: str
) -> None:
    symbol = located.symbol
    console.print(
        f"{indent}{escape(_symbol_location(symbol))}  {escape(symbol.qualified_name)} "
        f"[dim]{_kind(symbol)} {located.score:.3f}[/]"
    )
    if located.evidence:
        console.print(f"{indent}  [dim]{_evidence_text(located.evidence)}[/]")


def requests_table(records: Sequence[gateway_pb2.RequestRecord]) -> Table:
    table = _table("request id", "kind", "status", "created", "latency", "question")
    for record in records:
        created = (
            record.created_at.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
            if record.HasField("created_at")
            else ""
        )
        question = record.question if len(record.question) <= 60 else record.question[:57] + "..."
        table.add_row(
            record.request_id,
            escape(record.kind),
            escape(record.status),
            created,
            f"{record.latency_ms} ms" if record.latency_ms else "",
            escape(question),
        )
    return table


def status_table(rows: Sequence[dict[str, Any]]) -> Table:
    table = _table("service", "address", "pid", "health", "restarts", "metrics", "log file")
    for row in rows:
        health = str(row["health"])
        style = "green" if health in ("SERVING", "RUNNING") else "red"
        table.add_row(
            str(row["name"]),
            str(row["address"]),
            str(row["pid"]),
            f"[{style}]{escape(health)}[/]",
            str(row.get("restarts", 0)),
            str(row.get("metrics") or ""),
            escape(str(row["log_file"])),
        )
    return table


def print_code_block(
    console: Console,
    path: str,
    lines: Sequence[Any],
    language: str = "",
    heading: str = "",
) -> None:
    """``**path:start-end**`` and a fenced block of the numbered lines (Markdown a person can
    read and paste). ``heading`` goes after the location (a symbol, a citation id)."""
    first = lines[0].number if lines else 0
    last = lines[-1].number if lines else 0
    title = f"**{line_span(path, first, last)}**" + (f" {heading}" if heading else "")
    width = len(str(last)) if lines else 1
    body = [f"{line.number:>{width}}  {line.text}" for line in lines]
    text = "\n".join([title, f"```{language}", *body, "```"])
    console.print(text, markup=False, highlight=False, soft_wrap=True)
