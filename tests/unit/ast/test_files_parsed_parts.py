import pytest

from locus.ast.adapters.messages import split_into_parts
from locus.ast.identifiers import chunk_id_for, node_id_for
from locus.v1 import common_pb2, events_pb2

pytestmark = pytest.mark.unit


def header() -> events_pb2.FilesParsed:
    return events_pb2.FilesParsed(
        job_id="job_1",
        project_id="p_1",
        snapshot_id="snap_1",
        snapshot_seq=4,
        file=events_pb2.ChangedFile(file_id="f_1", sha256="a" * 64, relative_path="m.py"),
        module_name="m",
    )


def symbol(name: str, docstring: str = "") -> tuple[str, common_pb2.Symbol]:
    return "symbols", common_pb2.Symbol(qualified_name=name, docstring=docstring)


def chunk(ordinal: int) -> tuple[str, common_pb2.Chunk]:
    return "chunks", common_pb2.Chunk(chunk_id=f"c_{ordinal}", ordinal=ordinal)


def test_items_are_spread_over_numbered_parts_that_repeat_the_header() -> None:
    items = [symbol("m"), symbol("m.f"), symbol("m.g"), chunk(0), chunk(1)]

    parts = split_into_parts(header(), items, max_items=2, max_bytes=1_000_000)

    assert [(p.part_index, p.part_count) for p in parts] == [(0, 3), (1, 3), (2, 3)]
    assert [[s.qualified_name for s in p.symbols] for p in parts] == [["m", "m.f"], ["m.g"], []]
    assert [[c.chunk_id for c in p.chunks] for p in parts] == [[], ["c_0"], ["c_1"]]
    for part in parts:
        assert (part.job_id, part.file.file_id, part.module_name, part.snapshot_seq) == (
            "job_1",
            "f_1",
            "m",
            4,
        )


def test_parts_also_stay_under_the_byte_budget_unless_one_item_is_larger() -> None:
    items = [symbol("a", "x" * 3000), symbol("b", "y" * 3000), symbol("c", "z" * 9000)]

    parts = split_into_parts(header(), items, max_items=400, max_bytes=5000)

    assert [[s.qualified_name for s in p.symbols] for p in parts] == [["a"], ["b"], ["c"]]
    assert all(p.ByteSize() < 5000 for p in parts[:2])


def test_a_file_without_items_is_one_part() -> None:
    [part] = split_into_parts(header(), [], max_items=10, max_bytes=10_000)

    assert (part.part_index, part.part_count, part.file.file_id) == (0, 1, "f_1")


def test_ids_are_deterministic_and_depend_on_every_component() -> None:
    assert node_id_for("f_1", "m.f", "function") == node_id_for("f_1", "m.f", "function")
    assert len({
        node_id_for("f_1", "m.f", "function"),
        node_id_for("f_2", "m.f", "function"),
        node_id_for("f_1", "m.g", "function"),
        node_id_for("f_1", "m.f", "method"),
    }) == 4  # fmt: skip
    assert chunk_id_for("f_1", 0, "a" * 64).startswith("c_")
    assert chunk_id_for("f_1", 0, "a" * 64) != chunk_id_for("f_1", 1, "a" * 64)
