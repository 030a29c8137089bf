"""Domain values of ingestion as the protobufs its events carry."""

from __future__ import annotations

from locus.ingestion.domain.source_roots import SourceRoot
from locus.v1 import events_pb2


def with_source_root(changed: events_pb2.ChangedFile, root: SourceRoot) -> events_pb2.ChangedFile:
    """``changed`` with the file's source root: its directory and name, a JS/TS package's entry
    and import aliases (those into another package with that package's root)."""
    changed.source_root = root.directory
    changed.source_root_name = root.name
    changed.source_root_entry = root.entry
    changed.source_root_aliases.extend(
        events_pb2.ImportAlias(pattern=pattern, targets=targets)
        for pattern, targets in root.aliases
    )
    changed.source_root_aliases.extend(
        events_pb2.ImportAlias(
            pattern=alias.pattern,
            targets=alias.targets,
            other_package=True,
            package_root=alias.root.directory,
            package_name=alias.root.name,
            package_entry=alias.root.entry,
        )
        for alias in root.package_aliases
    )
    return changed
