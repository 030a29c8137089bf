"""Python's `LanguageSpec`: module names from paths, relative imports and docstring literals."""

import inspect
import re
from pathlib import PurePosixPath

from locus.ast.domain.language_spec import NO_ROOT, LanguageSpec, SourceRoot

_SOURCE_SUFFIXES = (".py", ".pyi")
_SOURCE_ROOTS = ("src", "lib")
_PACKAGE_MODULE = "__init__"
# A string literal's prefix (r, b, u, f and combinations) followed by its opening quotes.
_LITERAL_OPENING = re.compile(r"""^[rRbBuUfF]{0,2}('''|\"\"\"|'|")""")


def _module_segments(relative_path: str, rooted: bool) -> list[str]:
    path = PurePosixPath(relative_path.replace("\\", "/"))
    segments = [segment for segment in path.parts if segment not in ("/", ".")]
    if not segments:
        return []
    last = segments[-1]
    for suffix in _SOURCE_SUFFIXES:
        if last.endswith(suffix):
            last = last.removesuffix(suffix)
            break
    segments[-1] = last
    if last == _PACKAGE_MODULE:
        segments.pop()
    if not rooted and len(segments) > 1 and segments[0] in _SOURCE_ROOTS:
        segments.pop(0)
    return segments


def python_module_name(relative_path: str, root: SourceRoot = NO_ROOT) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`. Below a detected source
    root (`libs/cli/src` holding the `locus` package) the path is taken from the root; without
    one a leading `src/` or `lib/` is dropped. A bare top-level `__init__.py` is `__init__`."""
    rooted = bool(root.directory) and root.relative(relative_path) != relative_path
    segments = _module_segments(root.relative(relative_path), rooted)
    return ".".join(segments) or _PACKAGE_MODULE


def is_python_package_path(relative_path: str) -> bool:
    name = PurePosixPath(relative_path.replace("\\", "/")).name
    return name in (f"{_PACKAGE_MODULE}{suffix}" for suffix in _SOURCE_SUFFIXES)


def resolve_python_import(written: str, module_name: str, is_package: bool) -> str | None:
    """Absolute name of an imported module; None when a relative import climbs past the root."""
    level = len(written) - len(written.lstrip("."))
    if level == 0:
        return written
    package = module_name.split(".") if is_package else module_name.split(".")[:-1]
    climb = level - 1
    if climb >= len(package):
        return None
    base = package[: len(package) - climb]
    remainder = written[level:]
    segments = [*base, remainder] if remainder else base
    return ".".join(segments) or None


def python_docstring(literal: str) -> str:
    """Strips the prefix and quotes of a string literal and dedents it like `inspect.cleandoc`."""
    literal = literal.replace("\r\n", "\n")
    opening = _LITERAL_OPENING.match(literal)
    if opening is None:
        return inspect.cleandoc(literal)
    quote = opening.group(1)
    body = literal[opening.end() :]
    body = body.removesuffix(quote)
    return inspect.cleandoc(body)


PYTHON = LanguageSpec(
    name="python",
    grammar="python",
    module_name_for_path=python_module_name,
    is_package_path=is_python_package_path,
    resolve_import=resolve_python_import,
    docstring_text=python_docstring,
    separator=".",
    instance_receivers=frozenset({"self", "cls"}),
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=frozenset({"string", "concatenated_string"}),
    signature_terminators=frozenset({":"}),
    indentation_blocks=True,
)
