"""Validation of names, labels and descriptions a person types (project, system, subsystem)."""

from __future__ import annotations

import re

from locus.ingestion.domain.errors import InvalidRequest

MAX_NAME_LENGTH = 100
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")


def validate_project_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidRequest("project name must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidRequest(
            f"project name is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}"
        )
    if not _NAME.match(name):
        raise InvalidRequest(
            f"project name {name!r} may contain only letters, digits, '.', '_' and '-', "
            "and must start with a letter or digit"
        )
    return name


def validate_label(field: str, value: str) -> str:
    value = value.strip()
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidRequest(
            f"{field} is {len(value)} characters long; the limit is {MAX_NAME_LENGTH}"
        )
    if value and not _NAME.match(value):
        raise InvalidRequest(f"{field} {value!r} may contain only letters, digits, '.', '_', '-'")
    return value


MAX_DESCRIPTION_LENGTH = 2000


def validate_registry_name(kind: str, name: str) -> str:
    """A system's or subsystem's name: required, the same characters as a project name."""
    name = name.strip()
    if not name:
        raise InvalidRequest(f"{kind} name must not be empty")
    return validate_label(f"{kind} name", name)


def validate_description(description: str) -> str:
    description = description.strip()
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise InvalidRequest(
            f"description is {len(description)} characters long; "
            f"the limit is {MAX_DESCRIPTION_LENGTH}"
        )
    return description
