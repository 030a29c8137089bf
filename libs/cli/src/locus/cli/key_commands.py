"""``locus keys create|list|revoke|whoami``: API keys through the gateway's admin calls. A new
key is printed once (only its hash is kept); ``--save FILE`` writes it to a file only you may
read instead, for ``LOCUS_API_KEY_FILE``."""

from __future__ import annotations

import os
from datetime import UTC
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from locus.cli.command_options import GatewayOption, JsonOption, finish
from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.terminal_output import print_json
from locus.v1 import gateway_pb2

keys_app = typer.Typer(
    help="Create, list and revoke API keys (roles on projects: reader, writer, admin).",
    no_args_is_help=True,
)


ROLES = {
    "reader": gateway_pb2.ROLE_READER,
    "writer": gateway_pb2.ROLE_WRITER,
    "admin": gateway_pb2.ROLE_ADMIN,
}
ROLE_NAMES = {value: name for name, value in ROLES.items()}
DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def parse_grant(text: str) -> Any:
    """``reader:shop`` → Grant(project="shop", role=READER); ``admin:*`` for every project."""
    role, separator, project = text.strip().partition(":")
    if not separator or not project.strip() or role.strip().lower() not in ROLES:
        raise typer.BadParameter(
            f"{text!r} is not ROLE:PROJECT with ROLE one of {', '.join(ROLES)} "
            "(e.g. reader:shop, writer:shop, admin:*)"
        )
    return gateway_pb2.Grant(project=project.strip(), role=ROLES[role.strip().lower()])


def parse_duration(text: str) -> int:
    """``90d``, ``12h``, ``30m``, ``45s`` → seconds."""
    value = text.strip().lower()
    unit = DURATION_UNITS.get(value[-1:]) if value else None
    if unit is None or not value[:-1].isdigit() or int(value[:-1]) <= 0:
        raise typer.BadParameter(f"{text!r} is not a duration such as 90d, 12h, 30m or 45s")
    return int(value[:-1]) * unit


def grant_text(grant: Any) -> str:
    return f"{ROLE_NAMES.get(grant.role, 'unknown')}:{grant.project}"


def key_json(key: Any) -> dict[str, Any]:
    def moment(field: str) -> str | None:
        if not key.HasField(field):
            return None
        return str(getattr(key, field).ToDatetime(tzinfo=UTC).isoformat(timespec="seconds"))

    return {
        "key_id": key.key_id,
        "name": key.name,
        "owner": key.owner,
        "grants": [grant_text(g) for g in key.grants],
        "created_at": moment("created_at"),
        "created_by": key.created_by,
        "expires_at": moment("expires_at"),
        "revoked_at": moment("revoked_at"),
    }


def save_private(path: Path, text: str) -> None:
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise CliError(f"{path} exists; choose a new file for the key", ExitCode.USAGE) from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text + "\n")


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(metavar="NAME", help="What the key is for.")],
    grant: Annotated[
        list[str],
        typer.Option(
            "--grant",
            "-g",
            help="ROLE:PROJECT (reader|writer|admin, a project's name or id, or * for all); "
            "repeat for more.",
        ),
    ],
    owner: Annotated[str, typer.Option(help="Who holds the key (a person, team, service).")] = "",
    expires_in: Annotated[
        str, typer.Option("--expires-in", help="Lifetime such as 90d or 12h; default: none.")
    ] = "",
    save: Annotated[
        Path | None,
        typer.Option(help="Write the key to this new file (mode 0600) instead of printing it."),
    ] = None,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Create an API key. It is shown once; keep it in a secret store."""
    grants = [parse_grant(text) for text in grant]
    seconds = parse_duration(expires_in) if expires_in else 0

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            created = await client.create_api_key(
                gateway_pb2.CreateApiKeyRequest(
                    name=name, owner=owner, grants=grants, expires_in_seconds=seconds
                )
            )
        if save is not None:
            save_private(save, created.api_key)
        if json_output:
            shown = key_json(created.key)
            shown["api_key"] = None if save is not None else created.api_key
            shown["saved_to"] = str(save) if save is not None else None
            print_json(context.out, shown)
            return ExitCode.OK
        grants_shown = ", ".join(grant_text(g) for g in created.key.grants)
        context.out.print(f"created key [bold]{created.key.key_id}[/] ({escape(grants_shown)})")
        if save is not None:
            context.out.print(f"saved to {escape(str(save))}; use LOCUS_API_KEY_FILE={save}")
        else:
            context.out.print("the key (shown this once; only its hash is kept):")
            context.out.print(created.api_key, markup=False, highlight=False)
        return ExitCode.OK

    finish(run_command("keys create", body, gateway=gateway))


@keys_app.command("list")
def keys_list(
    revoked: Annotated[bool, typer.Option("--revoked", help="Include revoked keys.")] = False,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """List keys: every key for a system admin, the keys you created otherwise."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            keys = await client.list_api_keys(
                gateway_pb2.ListApiKeysRequest(include_revoked=revoked)
            )
        rows = [key_json(k) for k in keys]
        if json_output:
            print_json(context.out, {"keys": rows})
            return ExitCode.OK
        if not rows:
            context.out.print("no keys; create one with `locus keys create NAME --grant reader:P`")
            return ExitCode.OK
        table = Table("key id", "name", "owner", "grants", "expires", "revoked", "created by")
        for row in rows:
            table.add_row(
                row["key_id"],
                escape(row["name"]),
                escape(row["owner"]),
                escape(", ".join(row["grants"])),
                row["expires_at"] or "never",
                row["revoked_at"] or "",
                escape(row["created_by"]),
            )
        context.out.print(table)
        return ExitCode.OK

    finish(run_command("keys list", body, gateway=gateway))


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(metavar="KEY_ID", help="From `locus keys list`.")],
    gateway: GatewayOption = None,
) -> None:
    """Revoke a key: it stops working on its next call."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            revoked = await client.revoke_api_key(gateway_pb2.RevokeApiKeyRequest(key_id=key_id))
        context.out.print(f"revoked key {revoked.key_id} ({escape(revoked.name)})")
        return ExitCode.OK

    finish(run_command("keys revoke", body, gateway=gateway))


@keys_app.command("whoami")
def keys_whoami(gateway: GatewayOption = None, json_output: JsonOption = False) -> None:
    """Who the gateway takes you for, and what you may do."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            me = await client.who_am_i()
        grants = [grant_text(g) for g in me.grants]
        if json_output:
            print_json(context.out, {"principal": me.principal, "name": me.name, "grants": grants})
        else:
            shown = ", ".join(grants) or "no grants"
            context.out.print(f"{escape(me.principal)} ({escape(me.name)}): {escape(shown)}")
        return ExitCode.OK

    finish(run_command("keys whoami", body, gateway=gateway))
