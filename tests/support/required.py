"""What a test needs and cannot get: a failure, never a quiet skip.

Every component that runs on this machine (nats-server, each service process, tree-sitter, the
embedding model, PostgreSQL, the ``locus`` CLI, git, helm) is *required*: when it is missing or
does not start, the test that needs it fails with the reason, so a service broken at start-up
can never leave ``make test`` green.

``LOCUS_TEST_ALLOW_MISSING=1`` is the one documented opt-out, for partial local runs (a venv
with only some services installed): the same tests then skip, naming the variable. CI and
``make test`` never set it. Servers that cannot run here at all (OpenSearch, a Qdrant server,
vLLM) are not required; their tests skip on their own conditions."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

ALLOW_MISSING = "LOCUS_TEST_ALLOW_MISSING"


def missing_allowed() -> bool:
    return os.environ.get(ALLOW_MISSING, "").strip().lower() in ("1", "true", "yes")


def unavailable(component: str, reason: str) -> NoReturn:
    """Fail the test: ``component`` is required and ``reason`` says why it is not there."""
    message = f"{component} is required and unavailable: {reason}"
    if missing_allowed():
        pytest.skip(f"{message} ({ALLOW_MISSING} is set)")
    pytest.fail(f"{message} (set {ALLOW_MISSING}=1 to skip instead, for partial local runs)")
