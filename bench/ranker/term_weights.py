"""Which words of a bug report matter: learned query-term weights, and the report's parts.

A report is long and most of its words do not point at the fix. Two ideas are measured here on
the harness's own pieces (``locbench.py``: checkout, tokenizer, bm25s over non-test source
files, the documents of its ``bm25`` ranker; ``--all-files``: every text file instead):

  collect   one pass over the instances: per distinct query term its features (rarity in the
            repository; where it stands in the report: title, code, traceback, prose, first
            fifth; its shape; whether it names a path component or a function; whether the first
            BM25 files share it), its labels (in a gold file's / a gold function's document) and
            its BM25 scores over the files and functions some term ranks in its first ``--keep``
            (where a weighted ranking's first hundred come from); one pickle per instance;
  evaluate  term recall (Zhao & Callan 2010): P(term in a gold file), learned on folds of whole
            repositories (LightGBM), each term's BM25 weighted by it, against the unweighted sum
            (which reproduces the harness's BM25); dev rows, when given, are scored by a model of
            every training repository (validation only);
  ltr       the report's parts (``PARTS``: subsets of its terms) scored by BM25 over the first
            100 files, ranked by LambdaMART on folds of whole repositories;
  loro      those parts as extra columns of the shipped learned ranker: ``train.py``'s
            leave-one-repository-out on the committed dumps.

Results: bench/RESULTS.md, session 17.

Usage:
  python bench/ranker/term_weights.py collect --split ../shared/bench/train.jsonl --out DIR/train
  python bench/ranker/term_weights.py evaluate --rows DIR/train,DIR/train-multilang [--dev-rows ...]
  python bench/ranker/term_weights.py loro --rows DIR [--mode full|noall|eligible|none]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import pickle
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"
sys.path.insert(0, str(BENCH))
import locbench as lb  # noqa: E402

FEATURES = [
    "idf",
    "df_share",
    "fn_df_share",
    "log_qtf",
    "first_position",
    "in_title",
    "in_code",
    "in_traceback",
    "in_prose",
    "compound",
    "part_of_compound",
    "length",
    "digit",
    "names_path",
    "names_function",
    "prf_share",
    "top_score_share",
    "log_query_terms",
    "python",
]

_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_TICK = re.compile(r"`[^`\n]+`")
_TRACE = re.compile(
    r'^\s*(File ".*", line \d+|at \S+\s*\(|#\d+\s|\S+\.(py|java|go|rs|js|ts|c|cc|cpp|h|hpp)'
    r":\d+|Traceback|\w*(Error|Exception|panicked)\b)"
)


def _segments(text: str) -> dict[str, set[str]]:
    """The report's terms by where they stand."""
    lines = text.strip().splitlines()
    title = lines[0] if lines else ""
    code = " ".join(m.group(0) for m in _FENCE.finditer(text)) + " "
    code += " ".join(m.group(0) for m in _TICK.finditer(text))
    rest = _TICK.sub(" ", _FENCE.sub(" ", text))
    trace = " ".join(line for line in text.splitlines() if _TRACE.match(line))
    return {
        "title": set(lb.tokenize(title)),
        "code": set(lb.tokenize(code)),
        "trace": set(lb.tokenize(trace)),
        "prose": set(lb.tokenize(rest)),
    }


def _compound_terms(text: str) -> tuple[set[str], set[str]]:
    compounds, parts = set(), set()
    for word in lb._ID.findall(text):
        toks = lb._word_tokens(word)
        if len(toks) > 1:
            compounds.add(toks[0])
            parts.update(toks[1:])
    return compounds, parts


def _documents(
    snap: Any,
) -> tuple[list[list[str]], list[list[str]], list[tuple[int, str, int, int]]]:
    """The harness's file and function documents (BM25Ranker.index, kept)."""
    line_toks, toks = [], []
    for p, txt in zip(snap.paths, snap.texts, strict=True):
        lt = [lb.tokenize(line) for line in txt.split("\n")]
        line_toks.append(lt)
        d = lb.tokenize(lb.BM25Ranker._path_text(snap, p))
        for x in lt:
            d.extend(x)
        toks.append(d)
    funcs = snap.functions()
    ftoks = []
    for i, q, s, e in funcs:
        d = lb.tokenize(lb.BM25Ranker._path_text(snap, snap.paths[i])) + lb.tokenize(q)
        for x in line_toks[i][s - 1 : e]:
            d.extend(x)
        ftoks.append(d)
    return toks, ftoks, funcs


def _kept(per_term: list[np.ndarray], keep: int) -> tuple[np.ndarray, np.ndarray]:
    """The documents some term ranks in its first ``keep`` (a weighted ranking's first
    hundred come from there) and every term's score on each of them (terms x documents)."""
    union: set[int] = set()
    for scores in per_term:
        nz = np.flatnonzero(scores > 0)
        if len(nz) > keep:
            nz = nz[np.argpartition(-scores[nz], keep)[:keep]]
        union.update(nz.tolist())
    idx = np.array(sorted(union), np.int32)
    if not per_term:
        return idx, np.zeros((0, len(idx)), np.float32)
    return idx, np.stack([scores[idx] for scores in per_term]).astype(np.float32)


MAX_TEXT_BYTES = 500_000


def every_text_file(cache: Any, inst: dict[str, Any]) -> list[tuple[str, str, int]]:
    """All files of the commit that read as text (tests, docs and configuration included, as
    Locate's whole-file index has them): [(path, blob sha, size)]."""
    out = cache._git(inst["repo"], "ls-tree", "-r", "-l", "-z", inst["base_commit"])
    files = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, typ, sha, size = meta.split()
        if typ != b"blob" or mode == b"120000" or not size.isdigit():
            continue
        if int(size) > MAX_TEXT_BYTES:
            continue
        files.append((path.decode("utf-8", "replace"), sha.decode(), int(size)))
    return files


def collect_one(
    inst: dict[str, Any], cache: Any, keep: int, all_files: bool = False
) -> dict[str, Any]:
    import bm25s

    root = cache.checkout(inst["repo"], inst["base_commit"])
    files = every_text_file(cache, inst) if all_files else cache.files_for(inst)
    snap = lb.RepoSnapshot(root, files, inst.get("language"))
    if all_files:  # binary files out: a NUL byte in the first 8 KB
        keep_i = [i for i, t in enumerate(snap.texts) if "\0" not in t[:8192]]
        snap.paths = [snap.paths[i] for i in keep_i]
        snap.shas = [snap.shas[i] for i in keep_i]
        snap.texts = [snap.texts[i] for i in keep_i]
    toks, ftoks, funcs = _documents(snap)
    fidx = bm25s.BM25()
    fidx.index(toks, show_progress=False)
    gidx = None
    if ftoks:
        gidx = bm25s.BM25()
        gidx.index(ftoks, show_progress=False)
    question = inst["problem_statement"]
    qtoks = lb.tokenize(question)
    terms = list(dict.fromkeys(qtoks))
    qtf = defaultdict(int)
    for t in qtoks:
        qtf[t] += 1
    n_files, n_funcs = max(len(toks), 1), max(len(ftoks), 1)
    df: dict[str, int] = defaultdict(int)
    wanted = set(terms)
    for d in toks:
        for t in wanted.intersection(d):
            df[t] += 1
    fdf: dict[str, int] = defaultdict(int)
    for d in ftoks:
        for t in wanted.intersection(d):
            fdf[t] += 1
    python = lb.is_python_row(inst)
    fn_ids = [f"{snap.paths[i]}::{q}" for i, q, _, _ in funcs]
    gold_files = set(inst["gold_files"])
    gold_fns = inst.get("gold_functions") or []
    gold_file_terms: set[str] = set()
    for i, p in enumerate(snap.paths):
        if p in gold_files:
            gold_file_terms.update(toks[i])
    gold_fn_terms: set[str] = set()
    for j, fid in enumerate(fn_ids):
        if any(fid == g if python else lb.func_match(fid, g) for g in gold_fns):
            gold_fn_terms.update(ftoks[j])
    path_names = {part for p in snap.paths for part in lb.tokenize(p.replace("/", " "))}
    fn_names: set[str] = set()
    for _, q, _, _ in funcs:
        for part in q.replace("::", ".").split("."):
            fn_names.update(lb._word_tokens(part)[:1])
    segs = _segments(question)
    compounds, parts = _compound_terms(question)
    first = {}
    for i, t in enumerate(qtoks):
        first.setdefault(t, i)
    per_term_full = [fidx.get_scores([t]) if toks else np.zeros(0) for t in terms]
    plain = np.zeros(len(toks))
    for t, s in zip(terms, per_term_full, strict=True):
        plain += qtf[t] * s
    file_scores = _kept(per_term_full, keep)
    fn_scores = _kept([gidx.get_scores([t]) for t in terms] if gidx is not None else [], keep)
    top10 = np.argsort(-plain, kind="stable")[:10]
    rows = []
    for k, t in enumerate(terms):
        s = per_term_full[k]
        d = df[t]
        rows.append(
            [
                math.log((n_files - d + 0.5) / (d + 0.5) + 1.0),
                d / n_files,
                fdf[t] / n_funcs,
                math.log1p(qtf[t]),
                first[t] / max(len(qtoks), 1),
                float(t in segs["title"]),
                float(t in segs["code"]),
                float(t in segs["trace"]),
                float(t in segs["prose"]),
                float(t in compounds),
                float(t in parts),
                float(len(t)),
                float(t.isdigit()),
                float(t in path_names),
                float(t in fn_names),
                float(np.mean(s[top10] > 0)) if len(top10) else 0.0,
                float(s.max() / max(plain.max(), 1e-9)) if len(s) else 0.0,
                math.log1p(len(terms)),
                float(python),
            ]
        )
    return {
        "instance_id": inst["instance_id"],
        "repo": inst["repo"],
        "python": python,
        "terms": terms,
        "qtf": np.array([qtf[t] for t in terms], np.float32),
        "x": np.array(rows, np.float32).reshape(len(terms), len(FEATURES)),
        "y_file": np.array([t in gold_file_terms for t in terms], np.float32),
        "y_fn": np.array([t in gold_fn_terms for t in terms], np.float32),
        "paths": snap.paths,
        "fn_ids": fn_ids,
        "file_scores": file_scores,
        "fn_scores": fn_scores,
        "gold_files": sorted(gold_files),
        "gold_functions": list(gold_fns),
        "inst": {k: inst[k] for k in ("instance_id", "repo", "gold_files", "gold_functions")}
        | {"language": inst.get("language")},
    }


def cmd_collect(a: argparse.Namespace) -> None:
    insts = lb.load_split(a.split)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = lb.RepoCache(a.cache, a.mirror_root)
    t0 = time.perf_counter()
    for n, inst in enumerate(insts, 1):
        path = out / f"{inst['instance_id']}.pkl.gz"
        if path.exists():
            continue
        try:
            record = collect_one(inst, cache, a.keep, a.all_files)
        except Exception as error:  # one instance's failure is reported, not fatal
            print(f"{inst['instance_id']}: {error}", file=sys.stderr)
            continue
        path.write_bytes(gzip.compress(pickle.dumps(record), compresslevel=3))
        if n % 20 == 0:
            print(f"{n}/{len(insts)} {time.perf_counter() - t0:.0f}s", flush=True)


def _ranking(
    scores: tuple[np.ndarray, np.ndarray], weights: np.ndarray, names: list[str]
) -> list[str]:
    idx, matrix = scores
    if not len(idx) or not len(weights):
        return []
    total = weights.astype(np.float64) @ matrix.astype(np.float64)
    order = np.lexsort((idx, -total))
    return [names[idx[i]] for i in order[: 4 * lb.MAX_RANK] if total[i] > 0]


def _dedup(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def score(
    record: dict[str, Any], file_weights: np.ndarray, function_weights: np.ndarray
) -> dict[str, float]:
    """The harness's metrics of the files ranked by ``file_weights`` and the functions by
    ``function_weights`` (per query term; the term frequencies give the harness's BM25)."""
    files = _ranking(record["file_scores"], file_weights, record["paths"])[: lb.MAX_RANK]
    funcs = _ranking(record["fn_scores"], function_weights, record["fn_ids"])
    funcs = (funcs if record["python"] else _dedup(funcs))[: lb.MAX_RANK]
    inst = dict(record["inst"])
    if record["python"]:
        inst.pop("language", None)
    return lb.score_instance(inst, files, funcs)


def _weighted(record: dict[str, Any], m_file: Any, m_fn: Any) -> dict[str, dict[str, float]]:
    """Each variant's metrics for one record, with the term models' probabilities."""

    def p(model: Any) -> np.ndarray:
        return model.predict_proba(record["x"])[:, 1] if len(record["terms"]) else np.zeros(0)

    return {
        name: score(record, wf, wg)
        for name, (wf, wg) in _variants(record, p(m_file), p(m_fn)).items()
    }


def _load(directories: str) -> list[dict[str, Any]]:
    """The records of ``collect`` in one or more (comma-separated) directories."""
    return [
        pickle.loads(gzip.decompress(p.read_bytes()))
        for directory in directories.split(",")
        for p in sorted(Path(directory).glob("*.pkl.gz"))
    ]


# The trees of both experiments (fixed beforehand, not searched).
LIGHTGBM: dict[str, Any] = {
    "learning_rate": 0.05,
    "num_leaves": 15,
    "subsample": 0.8,
    "subsample_freq": 1,
    "colsample_bytree": 0.8,
    "verbose": -1,
}


def _fit(records: list[dict[str, Any]], target: str, seed: int = 0) -> Any:
    import lightgbm as lgb

    x = np.concatenate([r["x"] for r in records])
    y = np.concatenate([r[target] for r in records])
    model = lgb.LGBMClassifier(
        n_estimators=200, min_child_samples=50, random_state=seed, **LIGHTGBM
    )
    model.fit(x, y)
    return model


def _variants(
    record: dict[str, Any], p_file: np.ndarray, p_fn: np.ndarray
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(file weights, function weights) per variant; 'bm25' reproduces the harness."""
    q = record["qtf"]
    return {
        "bm25": (q, q),
        "qtf*p": (q * p_file, q * p_fn),
        "p": (p_file, p_fn),
        "qtf*p^2": (q * p_file**2, q * p_fn**2),
        "p>0.2": (q * (p_file > 0.2), q * (p_fn > 0.2)),
    }


def _table(rows: dict[str, list[dict[str, float]]], repos: list[str], python: list[bool]) -> str:
    out = [
        "| variant | n | File Acc@1 | @3 | @5 | @10 | MRR | n_fn | Func Acc@5 | @10 "
        "| fold means File@5 / Func@10 vs bm25 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    base = rows["bm25"]
    for name, ms in rows.items():
        n = len(ms)
        fn = [m for m in ms if "facc@5" in m]

        def mean(key: str, xs: list[dict[str, float]]) -> float:
            return 100 * sum(m[key] for m in xs) / max(len(xs), 1)

        by_repo_f5, by_repo_fn = defaultdict(list), defaultdict(list)
        for m, b, repo, py in zip(ms, base, repos, python, strict=True):
            if not py:
                continue
            by_repo_f5[repo].append(m["acc@5"] - b["acc@5"])
            if "facc@10" in m:
                by_repo_fn[repo].append(m["facc@10"] - b["facc@10"])
        f5 = (
            100 * np.mean([np.mean(v) for v in by_repo_f5.values()]) if by_repo_f5 else float("nan")
        )
        g10 = (
            100 * np.mean([np.mean(v) for v in by_repo_fn.values()]) if by_repo_fn else float("nan")
        )
        files = " | ".join(
            f"{mean(k, ms):.1f}" for k in ("acc@1", "acc@3", "acc@5", "acc@10", "mrr")
        )
        funcs = " | ".join(f"{mean(k, fn):.1f}" for k in ("facc@5", "facc@10"))
        out.append(f"| {name} | {n} | {files} | {len(fn)} | {funcs} | {f5:+.1f} / {g10:+.1f} |")
    return "\n".join(out)


def cmd_evaluate(a: argparse.Namespace) -> None:
    records = _load(a.rows)
    repos = sorted({r["repo"] for r in records})
    print(f"{len(records)} training rows, {len(repos)} repositories")
    results: dict[str, list[dict[str, float]]] = defaultdict(list)
    order_repos, order_py = [], []
    fold_of = {repo: n % a.folds for n, repo in enumerate(repos)}  # whole repositories
    for fold in range(a.folds):
        train = [r for r in records if fold_of[r["repo"]] != fold]
        test = [r for r in records if fold_of[r["repo"]] == fold]
        m_file, m_fn = _fit(train, "y_file"), _fit(train, "y_fn")
        for r in test:
            for name, metrics in _weighted(r, m_file, m_fn).items():
                results[name].append(metrics)
            order_repos.append(r["repo"])
            order_py.append(r["python"])
    print(f"{a.folds} folds of whole repositories, training rows")
    print(_table(results, order_repos, order_py))
    for lang_py in (True, False):
        idx = [i for i, py in enumerate(order_py) if py == lang_py]
        if idx:
            sub = {k: [v[i] for i in idx] for k, v in results.items()}
            print("python rows" if lang_py else "other languages")
            print(_table(sub, [order_repos[i] for i in idx], [True] * len(idx)))
    model_file = _fit(records, "y_file")
    imp = sorted(
        zip(FEATURES, model_file.booster_.feature_importance("gain"), strict=True),
        key=lambda x: -x[1],
    )
    print("gain importance (file model):", ", ".join(f"{k} {v:.0f}" for k, v in imp))
    if a.dev_rows:
        model_fn = _fit(records, "y_fn")
        dev = _load(a.dev_rows)
        dres: dict[str, list[dict[str, float]]] = defaultdict(list)
        for r in dev:
            for name, metrics in _weighted(r, model_file, model_fn).items():
                dres[name].append(metrics)
        print(f"dev rows ({a.dev_rows}, validation only)")
        print(_table(dres, [r["repo"] for r in dev], [r["python"] for r in dev]))


# ---- the same question split by where its terms stand, as document features (a ranker over them)
PARTS = {
    "all": lambda x: np.ones(len(x)),
    "title": lambda x: x[:, FEATURES.index("in_title")],
    "code": lambda x: x[:, FEATURES.index("in_code")],
    "trace": lambda x: x[:, FEATURES.index("in_traceback")],
    "prose_only": lambda x: (
        x[:, FEATURES.index("in_prose")] * (1 - x[:, FEATURES.index("in_code")])
    ),
    "compound": lambda x: x[:, FEATURES.index("compound")],
    "names_function": lambda x: x[:, FEATURES.index("names_function")],
    "names_path": lambda x: x[:, FEATURES.index("names_path")],
    "rare": lambda x: (x[:, FEATURES.index("df_share")] < 0.01).astype(float),
    "common": lambda x: (x[:, FEATURES.index("df_share")] > 0.1).astype(float),
    "early": lambda x: (x[:, FEATURES.index("first_position")] < 0.2).astype(float),
}


def _part_scores(record: dict[str, Any], matrix: np.ndarray) -> list[np.ndarray]:
    """Per part of the question, each document's BM25 over that part's terms alone and its
    share of the part's best (``matrix``: terms x the documents scored)."""
    cols = []
    for part in PARTS.values():
        s = (record["qtf"] * part(record["x"])) @ matrix
        cols += [s, s / max(s.max(), 1e-9)]
    return cols


def part_features(
    record: dict[str, Any], which: str, pool: int = 100
) -> tuple[list[str], np.ndarray]:
    """The ``pool`` best documents by plain BM25, with ``_part_scores`` among them and their
    rank."""
    idx, matrix = record["file_scores" if which == "file" else "fn_scores"]
    names = record["paths" if which == "file" else "fn_ids"]
    if not len(idx) or not len(record["terms"]):
        return [], np.zeros((0, 0))
    plain = record["qtf"].astype(np.float64) @ matrix
    order = np.lexsort((idx, -plain))[:pool]
    cols = [*_part_scores(record, matrix[:, order]), np.arange(len(order), dtype=float)]
    return [names[idx[i]] for i in order], np.stack(cols, axis=1)


def cmd_ltr(a: argparse.Namespace) -> None:
    import lightgbm as lgb

    records = _load(a.rows)
    data = []
    for r in records:
        files, fx = part_features(r, "file")
        funcs, gx = part_features(r, "fn")
        gold_f = set(r["gold_files"])
        gold_g = r["gold_functions"]
        yf = np.array([p in gold_f for p in files], float)
        if r["python"]:
            yg = np.array([f in set(gold_g) for f in funcs], float)
        else:
            yg = np.array([any(lb.func_match(f, g) for g in gold_g) for f in funcs], float)
        data.append((r, files, fx, yf, funcs, gx, yg))
    repos = sorted({r["repo"] for r in records})
    plain_rows, ltr_rows, py, rp = [], [], [], []

    def fit(rows: list[tuple], xi: int, yi: int) -> Any:
        rows = [d for d in rows if len(d[xi]) and d[yi].any()]
        model = lgb.LGBMRanker(n_estimators=300, min_child_samples=20, random_state=0, **LIGHTGBM)
        model.fit(
            np.concatenate([d[xi] for d in rows]),
            np.concatenate([d[yi] for d in rows]),
            group=[len(d[xi]) for d in rows],
        )
        return model

    fold_of = {repo: n % a.folds for n, repo in enumerate(repos)}
    for fold in range(a.folds):
        train = [d for d in data if fold_of[d[0]["repo"]] != fold]
        mf, mg = fit(train, 2, 3), fit(train, 5, 6)
        for r, files, fx, _, funcs, gx, _ in (d for d in data if fold_of[d[0]["repo"]] == fold):
            plain_rows.append(score(r, r["qtf"], r["qtf"]))
            fo = [files[i] for i in np.argsort(-mf.predict(fx), kind="stable")] if len(fx) else []
            go = [funcs[i] for i in np.argsort(-mg.predict(gx), kind="stable")] if len(gx) else []
            inst = dict(r["inst"])
            if r["python"]:
                inst.pop("language", None)
            ltr_rows.append(lb.score_instance(inst, fo, go if r["python"] else _dedup(go)))
            py.append(r["python"])
            rp.append(r["repo"])
    print(_table({"bm25": plain_rows, "parts ltr": ltr_rows}, rp, py))


TEXT_PARTS = ("title", "code", "trace", "prose_only", "compound", "early")


def part_columns(
    record: dict[str, Any], mode: str, target: str = "files"
) -> tuple[dict[str, np.ndarray], int]:
    """Per file of the harness's index, the ranker columns of ``loro``: per part of the question
    its BM25 and its share of the part's best, then the reciprocal of the file's plain BM25 rank
    (``mode`` noall: the plain BM25's three columns zeroed; eligible: only a 1 for "in the
    harness's index", the benchmark's own notion of a source file; text: noall, and only the
    parts the question's text gives, ``TEXT_PARTS``; title: those of them the model leaned on,
    the title and the first fifth)."""
    width = 2 * len(PARTS) + 1
    idx, matrix = record["file_scores" if target == "files" else "fn_scores"]
    if not len(idx) or not len(record["terms"]):
        return {}, width
    cols = _part_scores(record, matrix)
    rank = np.empty(len(idx))
    rank[np.lexsort((idx, -cols[0]))] = np.arange(len(idx))
    cols.append(1.0 / (1.0 + rank))
    rows = np.stack(cols, axis=1)
    if mode == "eligible":
        rows = np.zeros_like(rows)
        rows[:, 0] = 1.0
    if mode in ("noall", "text", "title"):
        rows[:, [0, 1, width - 1]] = 0.0
    if mode in ("text", "title"):  # only parts the question's text gives: no index statistics
        kept = TEXT_PARTS if mode == "text" else ("title", "early")
        for position, name in enumerate(PARTS):
            if name not in kept:
                rows[:, [2 * position, 2 * position + 1]] = 0.0
    names = record["paths" if target == "files" else "fn_ids"]
    return {names[i]: rows[j] for j, i in enumerate(idx)}, width


def cmd_loro(a: argparse.Namespace) -> None:
    """The shipped ranker's leave-one-repository-out run on the committed dumps, with the parts'
    columns appended to the file model's rows (``train.py``'s own functions)."""
    ranker = Path(__file__).resolve().parent
    sys.path.insert(0, str(ranker))
    import train as t

    names = (*(f"part_{n}_{k}" for n in PARTS for k in ("bm25", "share")), "part_rank")
    instances = []
    for split in ("train", "train-multilang"):
        instances += t.load_instances(ranker / "candidates" / split, BENCH / f"{split}.jsonl")
    if a.target == "files":
        t.FILE_FEATURES = (*t.FILE_FEATURES, *names)
    else:  # the function documents' parts, as columns of the symbol model
        t.SYMBOL_FEATURES = (*t.SYMBOL_FEATURES, *names)
    for instance in instances:
        split = "train" if instance.split == "train.jsonl" else "train-multilang"
        path = Path(a.rows) / split / f"{instance.instance_id}.pkl.gz"
        record = pickle.loads(gzip.decompress(path.read_bytes()))
        columns, width = part_columns(record, a.mode, a.target)
        if a.target == "files":
            extra = [columns.get(p, np.zeros(width)) for p in instance.file_paths]
            instance.file_rows = np.concatenate(
                [instance.file_rows, np.asarray(extra).reshape(len(extra), width)], axis=1
            )
        else:
            extra = [columns.get(i, np.zeros(width)) for i in instance.symbol_ids]
            instance.symbol_rows = np.concatenate(
                [instance.symbol_rows, np.asarray(extra).reshape(len(extra), width)], axis=1
            )
    dropped = tuple(t.VECTOR_SIMILARITY_FEATURES) + (names if a.mode == "none" else ())
    scored = t.leave_one_repository_out(instances, "trees", dropped, lb)
    summary = t.summarize(list(scored.values()), lb)
    print(a.mode, " / ".join(f"{k} {summary[k]:.1f}" for k in t.METRICS))
    harness = {}
    for split in ("train", "train-multilang"):
        for line in (ranker / "candidates" / f"{split}.bm25.jsonl").read_text().splitlines():
            row = json.loads(line)
            harness[row["instance_id"]] = row["m"]
    for split in ("train.jsonl", "train-multilang.jsonl"):
        folds: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
        for instance in instances:
            if instance.split != split:
                continue
            mine, bm25 = scored[instance.instance_id], harness[instance.instance_id]
            folds[instance.repo][0].append(mine["acc@5"] - bm25["acc@5"])
            if "facc@10" in mine:
                folds[instance.repo][1].append(mine["facc@10"] - bm25["facc@10"])
        f5 = 100 * np.mean([np.mean(v[0]) for v in folds.values()])
        g10 = 100 * np.mean([np.mean(v[1]) for v in folds.values() if v[1]])
        print(f"  fold means over BM25, {split}: File Acc@5 {f5:+.1f}, Func Acc@10 {g10:+.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--split", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--cache", default=os.path.join(".locbench", "repos"))
    c.add_argument("--mirror-root", default=os.environ.get("LOCBENCH_MIRROR_ROOT", "/work/.mirror"))
    c.add_argument("--keep", type=int, default=200)
    c.add_argument("--all-files", action="store_true", help="every text file, not the harness's")
    e = sub.add_parser("evaluate")
    e.add_argument("--rows", required=True)
    e.add_argument("--dev-rows", default="")
    e.add_argument("--folds", type=int, default=5, help="folds of whole repositories")
    r = sub.add_parser("ltr")
    r.add_argument("--rows", required=True)
    r.add_argument("--folds", type=int, default=5)
    o = sub.add_parser("loro")
    o.add_argument("--rows", required=True, help="collect's output: DIR/train, DIR/train-multilang")
    o.add_argument(
        "--mode", choices=("full", "noall", "text", "title", "eligible", "none"), default="full"
    )
    o.add_argument(
        "--target", choices=("files", "functions"), default="files", help="whose rows get them"
    )
    a = parser.parse_args()
    commands = {"collect": cmd_collect, "evaluate": cmd_evaluate, "ltr": cmd_ltr, "loro": cmd_loro}
    commands[a.command](a)


if __name__ == "__main__":
    main()
