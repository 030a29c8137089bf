"""Which paths under a source root are ignored: built-in excludes, `.gitignore` and `.locusignore`.

Rules follow git: a file's patterns apply to its own directory subtree, deeper files override
shallower ones, the last matching pattern in a file wins and `!pattern` re-includes. At the same
level `.locusignore` is consulted after `.gitignore`, so it can re-include what git ignores.
As in git, `.gitignore` and `.git/info/exclude` never hide a file git tracks (one added before
the pattern, or with `git add -f`); `.locusignore` and the built-in excludes still do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

IGNORE_FILE_NAMES = (".gitignore", ".locusignore")
# Patterns from these only concern files git does not track.
_UNTRACKED_ONLY = (".gitignore", ".git/info/exclude")

# Never indexed and cannot be re-included: version-control metadata and Locus's own state.
ALWAYS_EXCLUDED_NAMES = frozenset({".git", ".hg", ".svn", ".bzr", ".locus"})

# Excluded by default; a `!pattern` in a .gitignore or .locusignore re-includes them.
DEFAULT_EXCLUDE_PATTERNS = (
    "node_modules/",
    "bower_components/",
    "__pycache__/",
    ".venv/",
    "venv/",
    ".tox/",
    ".nox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".eggs/",
    "*.egg-info/",
    "dist/",
    "build/",
    "htmlcov/",
    ".gradle/",
    ".idea/",
    ".next/",
    ".nuxt/",
    ".terraform/",
    ".direnv/",
    ".DS_Store",
)


@dataclass(frozen=True, slots=True)
class IgnoreLayer:
    """The patterns of one ignore file, anchored at `base` (POSIX, relative; "" is the root)."""

    base: str
    origin: str
    spec: GitIgnoreSpec

    @property
    def untracked_only(self) -> bool:
        """Whether these are git's own rules, which never hide what git tracks."""
        return self.origin.endswith(_UNTRACKED_ONLY)

    def decide(self, relative_path: str, *, is_dir: bool) -> bool | None:
        """True if this layer ignores the path, False if it re-includes it, None if silent."""
        if self.base:
            prefix = self.base + "/"
            if not relative_path.startswith(prefix):
                return None
            relative_path = relative_path[len(prefix) :]
        # A trailing slash lets directory-only patterns such as `build/` match.
        candidate = relative_path + "/" if is_dir else relative_path
        decision = None
        for pattern in self.spec.patterns:
            if pattern.include is None or pattern.regex is None:
                continue
            match = pattern.regex.match(candidate)
            if match is not None and not _through_parent(match, candidate):
                decision = pattern.include  # the last pattern that matches the entry wins
        return decision


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """An immutable stack of ignore layers, lowest precedence first."""

    layers: tuple[IgnoreLayer, ...]

    @classmethod
    def defaults(cls) -> IgnoreRules:
        """Rules holding only the built-in default excludes."""
        spec = GitIgnoreSpec.from_lines(DEFAULT_EXCLUDE_PATTERNS)
        return cls((IgnoreLayer("", "built-in excludes", spec),))

    def with_patterns(self, base: str, origin: str, lines: Iterable[str]) -> IgnoreRules:
        """Rules where `lines` (gitignore syntax) govern the subtree `base`, over earlier layers."""
        spec = _compile(list(lines))
        if not spec.patterns or all(pattern.include is None for pattern in spec.patterns):
            return self
        return IgnoreRules((*self.layers, IgnoreLayer(base, origin, spec)))

    def with_directory_files(self, root: Path, directory: str) -> IgnoreRules:
        """Rules extended with the `.gitignore` and `.locusignore` found in `root/directory`.

        An ignore file that cannot be read, or that is a symlink leading outside `root`, is
        disregarded.
        """
        rules = self
        directory_path = root / directory if directory else root
        for name in IGNORE_FILE_NAMES:
            text = _read_ignore_file(root, directory_path / name)
            if text is not None:
                origin = f"{directory}/{name}" if directory else name
                rules = rules.with_patterns(directory, origin, text.splitlines())
        return rules

    def is_excluded_entry(self, relative_path: str, *, is_dir: bool, tracked: bool = False) -> bool:
        """Whether this entry itself is ignored, assuming none of its parent directories is.

        ``tracked``: git tracks the file (or, for a directory, a file under it), so git's own
        ignore files do not apply. The scanner prunes ignored directories, so it only needs
        this check per entry.
        """
        name = relative_path.rsplit("/", 1)[-1]
        if name in ALWAYS_EXCLUDED_NAMES:
            return True
        for layer in reversed(self.layers):
            if tracked and layer.untracked_only:
                continue
            decision = layer.decide(relative_path, is_dir=is_dir)
            if decision is not None:
                return decision
        return False

    def is_ignored(self, relative_path: str, *, is_dir: bool) -> bool:
        """Whether the path is ignored, either itself or because a parent directory is.

        As in git, a file cannot be re-included while one of its parent directories is ignored.
        """
        parts = relative_path.strip("/").split("/")
        for depth in range(1, len(parts)):
            if self.is_excluded_entry("/".join(parts[:depth]), is_dir=True):
                return True
        return self.is_excluded_entry("/".join(parts), is_dir=is_dir)


def load_root_rules(root: Path) -> IgnoreRules:
    """The rules in force at `root`: defaults, `.git/info/exclude`, then the root's ignore files."""
    rules = IgnoreRules.defaults()
    exclude_text = _read_ignore_file(root, root / ".git" / "info" / "exclude")
    if exclude_text is not None:
        rules = rules.with_patterns("", ".git/info/exclude", exclude_text.splitlines())
    return rules.with_directory_files(root, "")


def _through_parent(match: re.Match[str], candidate: str) -> bool:
    """Whether a pattern matched only a parent directory of the entry (``lib/`` against
    ``lib/x.py``). Such a match is the parent's business: the scanner never descends into an
    ignored directory, and git does not let it decide for an entry inside a directory it
    re-included. pathspec's own ``check_file`` also ranks a directory entry's own match below
    such parent matches, so ``*`` then ``!lib/`` kept ``lib/`` ignored (a whitelist .gitignore
    hid every sub-directory)."""
    groups = match.re.groupindex
    if "ps_d" not in groups or match.group("ps_d") is None:
        return False
    return match.end("ps_d") < len(candidate)


def _compile(lines: list[str]) -> GitIgnoreSpec:
    """Compile gitignore lines, dropping invalid ones (such as a lone `!`) as git does."""
    try:
        return GitIgnoreSpec.from_lines(lines)
    except ValueError:
        return GitIgnoreSpec.from_lines([line for line in lines if _is_valid_pattern(line)])


def _is_valid_pattern(line: str) -> bool:
    try:
        GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def _read_ignore_file(root: Path, path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        if path.is_symlink():
            real_root = Path(os.path.realpath(root))
            if not Path(os.path.realpath(path)).is_relative_to(real_root):
                return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
