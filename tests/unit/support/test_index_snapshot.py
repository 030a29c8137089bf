"""The crash comparison (tests/support/index_snapshot.py): exact by default; with a score
tolerance, the same hits scored within it, and nothing else, compare equal."""

import index_snapshot
from index_snapshot import differences


def _hits(scores: dict[str, float], query: str = "q") -> list[tuple[str, str, float]]:
    return sorted((query, path, score) for path, score in scores.items())


def test_hits_scored_a_little_differently_differ_exactly_but_not_within_the_tolerance() -> None:
    clean = {"bm25 hits": _hits({"a.py": 20.0, "b.py": 10.0}), "files": [("a.py",), ("b.py",)]}
    crashed = {"bm25 hits": _hits({"a.py": 20.4, "b.py": 9.9}), "files": [("a.py",), ("b.py",)]}
    assert differences(crashed, clean)["bm25 hits"]
    assert not any(differences(crashed, clean, score_tolerance=0.05).values())


def test_a_missing_hit_or_a_score_beyond_the_tolerance_differs() -> None:
    clean = {"bm25 hits": _hits({"a.py": 20.0, "b.py": 10.0})}
    missing = {"bm25 hits": _hits({"a.py": 20.0, "c.py": 10.0})}
    beyond = {"bm25 hits": _hits({"a.py": 20.0, "b.py": 11.0})}
    assert differences(missing, clean, score_tolerance=0.05)["bm25 hits"]
    assert differences(beyond, clean, score_tolerance=0.05)["bm25 hits"]


def test_the_tolerance_never_loosens_unscored_indexes() -> None:
    clean = {"files": [("a.py", "sha-1", "python", 10)]}
    changed = {"files": [("a.py", "sha-2", "python", 10)]}
    assert differences(changed, clean, score_tolerance=0.5)["files"]


def test_the_lowest_hits_trading_places_is_within_the_tolerance() -> None:
    # The old comparison dropped each side's lowest hit before comparing: a.py in one, b.py in
    # the other, and the two then seemed to hold different documents.
    clean = {"bm25 hits": _hits({"a.py": 20.0, "b.py": 10.0, "c.py": 10.1})}
    crashed = {"bm25 hits": _hits({"a.py": 20.4, "b.py": 10.2, "c.py": 10.1})}
    assert not differences(crashed, clean, score_tolerance=0.05)["bm25 hits"]
    # Exactly, the lowest tie group of each query is still left out (index order may differ).
    tied = {"bm25 hits": _hits({"a.py": 20.0, "b.py": 10.0, "d.py": 10.0})}
    assert not differences(tied, {"bm25 hits": _hits({"a.py": 20.0, "b.py": 10.0})})["bm25 hits"]


def test_a_document_only_one_side_matched_differs_however_low_it_scores() -> None:
    clean = {"bm25 hits": _hits({"a.py": 20.0, "b.py": 10.0})}
    stale = {"bm25 hits": _hits({"a.py": 20.0, "b.py": 10.0, "old.py": 0.5})}
    assert "old.py" in differences(stale, clean, score_tolerance=0.05)["bm25 hits"]


def test_a_cut_list_may_lose_a_hit_at_its_cut_but_not_above_it() -> None:
    fetched = index_snapshot.FETCHED_HITS
    scores = {f"f{rank:03}.py": 100.0 - rank * 0.5 for rank in range(fetched + 1)}
    clean = {"bm25 hits": _hits(dict(list(scores.items())[:fetched]))}
    # The crash lifted the 101st hit a little above the 100th: each list's cut drops another.
    near = dict(list(scores.items())[: fetched - 1]) | {"f100.py": scores["f099.py"] + 0.01}
    assert not differences({"bm25 hits": _hits(near)}, clean, score_tolerance=0.05)["bm25 hits"]
    # A hit from the top of the list missing is a difference, cut or not.
    high = dict(list(scores.items())[1:fetched]) | {"f100.py": scores["f099.py"] + 0.01}
    assert (
        "f000.py"
        in differences({"bm25 hits": _hits(high)}, clean, score_tolerance=0.05)["bm25 hits"]
    )
