"""Add the change history of the candidates to dumps collected before Locate asked for it.

A dump (``collect.sh``) holds everything Locate ranked for one instance. Dumps made before
the gateway called ingestion's ScoreFileHistory lack ``file_history``; this script makes it
the way the stack does: ``git log`` of the instance's base commit (the one the harness checks
out, read here from the bare mirror) through ingestion's own reader and ``ChangeHistory``
(``locus.ingestion.adapters.git_history``, ``locus.ingestion.domain.change_history``), with
the service's default number of commits, scored for the dump's question over the dump's
candidate files (``locus.gateway.domain.ranking.candidate_paths``, the paths the gateway
sends). Dumps that already have a history are skipped unless ``--force``.

Usage: python bench/ranker/history.py --candidates DIR --split FILE --mirror-root DIR
"""

from __future__ import annotations

import time
from dataclasses import fields

from dumps import arguments, mirror_of, read_dump, split_rows, write_dump

from locus.gateway.domain.candidates import candidates_from_json
from locus.gateway.domain.ranking_types import FileHistory, candidate_paths
from locus.gateway.settings import GatewaySettings
from locus.ingestion.adapters.git_history import read_history
from locus.ingestion.settings import IngestionSettings

MAX_COMMITS = IngestionSettings.model_fields["history_max_commits"].default
TIMEOUT = IngestionSettings.model_fields["history_timeout_seconds"].default
HISTORY_PATHS = GatewaySettings.model_fields["history_paths"].default
# The dump's columns: the gateway's FileHistory, filled from ingestion's FileChanges.
FIELDS = [f.name for f in fields(FileHistory)]


def main() -> None:
    args = arguments(__doc__).parse_args()
    bases = split_rows(args.split)
    started = time.perf_counter()
    done = 0
    for path in sorted(args.candidates.glob("*.json.gz")):
        record = read_dump(path)
        candidates = record["candidates"]
        row = bases.get(record["instance_id"])
        if row is None or ("file_history" in candidates and not args.force):
            continue
        mirror = mirror_of(args.mirror_root, row["repo"])
        history = read_history(str(mirror), row["base_commit"], MAX_COMMITS, TIMEOUT, bare=True)
        if history is None:
            raise SystemExit(f"{record['instance_id']}: no history at {mirror}")
        question, request = candidates_from_json(candidates)
        paths = candidate_paths(request)[:HISTORY_PATHS]
        found = history.changes(question, paths)
        candidates["history_fields"] = FIELDS
        candidates["file_history"] = [
            [getattr(found[p], name) for name in FIELDS] for p in paths if p in found
        ]
        candidates["history_commits"] = history.commits
        write_dump(path, record)
        done += 1
        print(
            f"{done:4d} {record['instance_id']}: {history.commits} commits, "
            f"{len(candidates['file_history'])} of {len(paths)} candidates with history, "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
