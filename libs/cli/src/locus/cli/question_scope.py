"""Which projects `locus locate` and `locus ask` ask: one PROJECT argument, or a scope
(--system, --subsystem, --project ...) that the gateway resolves to the projects the caller may
read."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated

import typer

from locus.v1 import common_pb2

ProjectOrQuestionArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="PROJECT",
        help="Project name or id (leave it out when a scope option is given).",
        show_default=False,
    ),
]
QuestionArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="QUESTION",
        help="Your question; - reads it from standard input (a whole log or stack trace: "
        "locus locate PROJECT - < crash.log).",
        show_default=False,
    ),
]
SystemOption = Annotated[
    str,
    typer.Option(
        "--system", metavar="SYSTEM", help="Ask every project of this system (id or name)."
    ),
]
SubsystemOption = Annotated[
    str,
    typer.Option(
        "--subsystem",
        metavar="SUBSYSTEM",
        help="Ask every project of this subsystem (its id; or its name, with --system).",
    ),
]
ScopeProjectsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--project", metavar="PROJECT", help="Ask this project (repeat it to ask several)."
    ),
]


@dataclass(frozen=True)
class QuestionTarget:
    project: str  # empty when scoped
    question: str
    scope: common_pb2.Scope | None


def question_target(
    first: str | None,
    second: str | None,
    *,
    projects: list[str] | None,
    subsystem: str,
    system: str,
) -> QuestionTarget:
    """PROJECT QUESTION, or QUESTION alone with a scope option; anything else is a usage
    error that says what to give."""
    if projects or subsystem or system:
        if second is not None:
            raise typer.BadParameter(
                "give PROJECT or a scope (--system, --subsystem, --project), not both",
                param_hint="PROJECT",
            )
        scope = common_pb2.Scope(projects=projects or [], subsystem=subsystem, system=system)
        return QuestionTarget("", _question(first), scope)
    if first is None or second is None:
        raise typer.BadParameter(
            "give PROJECT and QUESTION, or QUESTION with --system, --subsystem or --project",
            param_hint="PROJECT",
        )
    return QuestionTarget(first, _question(second), None)


def _question(value: str | None) -> str:
    if value is None:
        raise typer.BadParameter("missing QUESTION", param_hint="QUESTION")
    if value == "-":  # the shell's limit on one argument (~128 KiB) is no limit on a log
        value = sys.stdin.read()
        if not value.strip():
            raise typer.BadParameter("standard input was empty", param_hint="QUESTION")
    if not value.strip():
        raise typer.BadParameter("must not be empty", param_hint="QUESTION")
    return value
