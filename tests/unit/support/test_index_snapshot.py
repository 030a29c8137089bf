"""The crash comparison (tests/support/index_snapshot.py): exact by default; with a score
tolerance, the same hits scored within it, and nothing else, compare equal."""

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
