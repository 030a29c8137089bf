"""The ``locus`` command: ``locus up`` runs the stack; every other command talks to it through the
Gateway API (see client.py). Read commands take ``--json`` for scripts. Commands live in
modules by topic (``*_commands.py``); this module puts them together."""

from __future__ import annotations

import typer

from locus.cli.code_commands import outline, read
from locus.cli.dead_letter_commands import dlq_app
from locus.cli.docs_commands import docs_app
from locus.cli.impact_command import impact
from locus.cli.key_commands import keys_app
from locus.cli.locbench_command import locbench_rank
from locus.cli.lookup_commands import node, project_get, scan_status
from locus.cli.mcp_command import mcp
from locus.cli.project_commands import (
    project_create,
    project_delete,
    project_list,
    scan,
    source_add,
    source_list,
)
from locus.cli.question_commands import ask, locate, symbols
from locus.cli.registry_commands import (
    project_move,
    project_rename,
    source_notify,
    source_remove,
    subsystem_app,
    system_app,
)
from locus.cli.request_commands import feedback_app, request_app, requests
from locus.cli.search_command import search
from locus.cli.stack_commands import down, migrate, status, up

app = typer.Typer(
    name="locus",
    help="Locus: find the code that answers a question. `locus up` starts the stack.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
project_app = typer.Typer(help="Create, show, list and delete projects.", no_args_is_help=True)
source_app = typer.Typer(
    help="Add and list the source directories of a project.", no_args_is_help=True
)
app.add_typer(project_app, name="project")
app.add_typer(source_app, name="source")
app.add_typer(dlq_app, name="dlq")
app.add_typer(keys_app, name="keys")
app.add_typer(request_app, name="request")
app.add_typer(feedback_app, name="feedback")
app.add_typer(docs_app, name="docs")
app.add_typer(system_app, name="system")
app.add_typer(subsystem_app, name="subsystem")
app.command("read")(read)
app.command("outline")(outline)
app.command("mcp")(mcp)
app.command("search")(search)
app.command("node")(node)
app.command("impact")(impact)
app.command("scan-status")(scan_status)
project_app.command("get")(project_get)
project_app.command("rename")(project_rename)
project_app.command("move")(project_move)
source_app.command("remove")(source_remove)
source_app.command("notify")(source_notify)
app.command("up")(up)
app.command("down")(down)
app.command("status")(status)
app.command("migrate")(migrate)
project_app.command("create")(project_create)
project_app.command("list")(project_list)
project_app.command("delete")(project_delete)
source_app.command("add")(source_add)
source_app.command("list")(source_list)
app.command("scan")(scan)
app.command("symbols")(symbols)
app.command("locate")(locate)
app.command("ask")(ask)
app.command("requests")(requests)
app.command("locbench-rank")(locbench_rank)
