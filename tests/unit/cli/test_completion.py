"""Shell completion: `locus --show-completion SHELL` prints the script `--install-completion`
installs, and the script's callback (`_LOCUS_COMPLETE`) completes commands and choices."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from locus.cli.main import app

pytestmark = pytest.mark.unit


def complete(words: str) -> list[str]:
    """What bash gets back for the command line ``words`` (completing its last word)."""
    environment = {
        "_LOCUS_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }
    result = CliRunner().invoke(app, [], env=environment, prog_name="locus")
    assert result.exit_code == 0, result.output
    return result.output.split()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_script_for_a_shell(shell: str) -> None:
    result = CliRunner().invoke(app, ["--show-completion", shell], prog_name="locus")

    assert result.exit_code == 0, result.output
    assert "_LOCUS_COMPLETE" in result.output


def test_the_help_offers_to_install_completion() -> None:
    result = CliRunner().invoke(app, ["--help"], prog_name="locus")

    assert "--install-completion" in result.output


def test_completion_names_commands_subcommands_and_choices() -> None:
    assert complete("locus sea") == ["search"]
    assert set(complete("locus scan")) == {"scan", "scan-status"}
    assert set(complete("locus project ")) == {"create", "get", "list", "delete", "rename", "move"}
    assert complete("locus search shop retry --mode ") == ["bm25", "vector", "hybrid"]
