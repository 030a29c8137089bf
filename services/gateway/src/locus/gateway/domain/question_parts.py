"""The parts of a question searched on their own: its title (the first non-empty line, which
names the problem) and its opening (the first fifth of its words, before the steps, logs and
versions dilute it). Each part ranks whole files by itself; where a file stands in each part's
list is a column of the learned ranking (bench/RESULTS.md, session 17: the title's share was
the file model's strongest text column)."""

from __future__ import annotations

QUESTION_PARTS = ("title", "opening")
OPENING_SHARE = 5  # the opening is the first 1/OPENING_SHARE of the question's words
MAX_PART_CHARS = 2_000  # a title line can be a pasted payload: cut it


def question_parts(question: str) -> dict[str, str]:
    """Each part's text, in ``QUESTION_PARTS`` order; a part with no text is left out."""
    title = next((line.strip() for line in question.splitlines() if line.strip()), "")
    words = question.split()
    opening = " ".join(words[: -(-len(words) // OPENING_SHARE)])  # at least one word
    texts = {"title": title, "opening": opening}
    return {name: texts[name][:MAX_PART_CHARS] for name in QUESTION_PARTS if texts[name]}
