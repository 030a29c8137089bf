"""``locus dlq list|replay``: the dead letters of the running stack's bus (or of the NATS server
``--nats`` / ``LOCUS_NATS_URL`` names), read and replayed with ``locus.messaging.dead_letters``.
The stack's bus is reached with the stack's NATS user and password file; another server with
``LOCUS_NATS_USER`` / ``LOCUS_NATS_PASSWORD[_FILE]``. Payloads are never printed; errors and
message ids are redacted."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from locus.cli.command_options import JsonOption, finish
from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.stack_credentials import bus_credentials
from locus.cli.stack_state import require_running_stack
from locus.cli.terminal_output import print_json
from locus.config.redaction import redact
from locus.messaging import (
    DeadLetterNotFound,
    DeadLetters,
    NotADeadLetter,
    Replayed,
    StoredDeadLetter,
    Subjects,
    connect_dead_letters,
)

dlq_app = typer.Typer(
    help="List and replay the dead letters of the bus (events a consumer gave up on).",
    no_args_is_help=True,
)

NatsOption = Annotated[
    str | None,
    typer.Option(
        "--nats",
        envvar="LOCUS_NATS_URL",
        help="NATS URL; default: the running stack's nats-server.",
        show_default=False,
    ),
]
StreamOption = Annotated[
    str, typer.Option("--stream", envvar="LOCUS_STREAM_NAME", help="The JetStream stream.")
]
PrefixOption = Annotated[
    str,
    typer.Option(
        "--subject-prefix", envvar="LOCUS_SUBJECT_PREFIX", help="Prefix of every Locus subject."
    ),
]
SubjectOption = Annotated[
    str | None,
    typer.Option(
        "--subject",
        help="Only the dead letters of this subject (files.changed, locus.v1.files.changed, "
        "files.>).",
        show_default=False,
    ),
]


@asynccontextmanager
async def _dead_letters(
    context: CommandContext, nats_url: str | None, stream: str, prefix: str
) -> AsyncIterator[DeadLetters]:
    if nats_url:
        url, credentials = nats_url, bus_credentials("", None)
    else:
        stack = context.stack or require_running_stack()
        url = stack.nats.address
        credentials = bus_credentials(stack.nats_user, stack.nats_password_file)
    try:
        queue = await connect_dead_letters(
            url, stream=stream, subjects=Subjects(prefix), credentials=credentials
        )
    except Exception as error:  # nats-py raises several kinds for an unreachable server
        raise CliError(
            f"cannot reach NATS at {redact(url)}: {type(error).__name__}: {redact(str(error))}",
            ExitCode.UNAVAILABLE,
        ) from None
    try:
        yield queue
    finally:
        await queue.close()


def _letters_table(letters: list[StoredDeadLetter]) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    for column in ("seq", "subject", "consumer", "failed at", "tries", "bytes", "error"):
        table.add_column(column, overflow="fold")
    for letter in letters:
        failed_at = letter.failed_at.strftime("%Y-%m-%d %H:%M:%S") if letter.failed_at else ""
        table.add_row(
            str(letter.sequence),
            escape(letter.subject or letter.dead_letter_subject),
            escape(letter.consumer),
            failed_at,
            str(letter.deliveries),
            f"{letter.payload_bytes:,}",
            escape(letter.error),
        )
    return table


@dlq_app.command("list")
def dlq_list(
    subject: SubjectOption = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many, oldest first.")] = 100,
    nats_url: NatsOption = None,
    stream: StreamOption = "LOCUS",
    subject_prefix: PrefixOption = "locus.v1",
    json_output: JsonOption = False,
) -> None:
    """List dead letters: sequence, original subject, consumer, error, time, size (never the
    payload)."""

    async def body(context: CommandContext) -> int:
        async with _dead_letters(context, nats_url, stream, subject_prefix) as queue:
            letters = await queue.list(subject, limit=limit + 1)
        more = len(letters) > limit
        letters = letters[:limit]
        if json_output:
            print_json(
                context.out,
                {"dead_letters": [letter.to_json() for letter in letters], "more": more},
            )
        elif letters:
            context.out.print(_letters_table(letters))
            hint = " (more: raise --limit)" if more else ""
            context.out.print(
                f"{len(letters)} dead letter(s){hint}; replay with `locus dlq replay SEQ`",
                style="dim",
            )
        else:
            context.out.print("no dead letters")
        return ExitCode.OK

    finish(run_command("dlq list", body))


def _describe(replayed: Replayed) -> str:
    again = " (already there: an earlier replay)" if replayed.duplicate else ""
    removed = "removed" if replayed.removed else "NOT removed"
    return (
        f"replayed dead letter {replayed.sequence} to {escape(replayed.subject)} as "
        f"{escape(replayed.message_id)} (stream sequence {replayed.stream_sequence}){again}; "
        f"letter {removed}"
    )


@dlq_app.command("replay")
def dlq_replay(
    sequences: Annotated[
        list[int] | None,
        typer.Argument(metavar="SEQ", help="Stream sequences from `locus dlq list`."),
    ] = None,
    replay_all: Annotated[
        bool, typer.Option("--all", help="Replay every dead letter (of --subject).")
    ] = False,
    subject: SubjectOption = None,
    nats_url: NatsOption = None,
    stream: StreamOption = "LOCUS",
    subject_prefix: PrefixOption = "locus.v1",
    json_output: JsonOption = False,
) -> None:
    """Republish dead letters to their original subject (new message id, original headers),
    then remove them. Every consumer of that subject gets the event again."""
    if replay_all == bool(sequences):
        raise typer.BadParameter("give either --all or one or more SEQ", param_hint="SEQ")

    async def body(context: CommandContext) -> int:
        done: list[Replayed] = []
        problems: list[str] = []
        async with _dead_letters(context, nats_url, stream, subject_prefix) as queue:
            if replay_all:
                letters = await queue.list(subject)
            else:
                letters = []
                for sequence in sequences or []:
                    try:
                        letters.append(await queue.get(sequence, subject))
                    except DeadLetterNotFound as error:
                        problems.append(f"{sequence}: {error}")
            for letter in letters:
                try:
                    done.append(await queue.replay(letter))
                except NotADeadLetter as error:
                    problems.append(str(error))
                except Exception as error:  # the publish was refused (no stream for it, ...)
                    problems.append(
                        f"{letter.sequence}: {type(error).__name__}: {redact(str(error))}"
                    )
        if json_output:
            print_json(
                context.out,
                {"replayed": [r.to_json() for r in done], "problems": problems},
            )
        else:
            for replayed in done:
                context.out.print(_describe(replayed))
            for problem in problems:
                context.err.print(f"not replayed: {escape(problem)}", style="yellow")
            if not done and not problems:
                context.out.print("no dead letters to replay")
        return ExitCode.FAILED if problems else ExitCode.OK

    finish(run_command("dlq replay", body))
