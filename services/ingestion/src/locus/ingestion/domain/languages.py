"""Language detection for source files: well-known file names, then extensions, then shebangs.

Language names are lowercase identifiers shared with the parsing service (tree-sitter naming
where a grammar exists).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

FILENAME_LANGUAGES: dict[str, str] = {
    "Dockerfile": "dockerfile",
    "Containerfile": "dockerfile",
    "Makefile": "make",
    "makefile": "make",
    "GNUmakefile": "make",
    "CMakeLists.txt": "cmake",
    "Gemfile": "ruby",
    "Rakefile": "ruby",
    "Vagrantfile": "ruby",
    "Podfile": "ruby",
    "Jenkinsfile": "groovy",
    "BUILD": "starlark",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
    "WORKSPACE.bazel": "starlark",
    "Pipfile": "toml",
    ".bashrc": "shell",
    ".bash_profile": "shell",
    ".zshrc": "shell",
    ".profile": "shell",
    ".editorconfig": "ini",
    "go.mod": "gomod",
}

EXTENSION_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".sc": "scala",
    ".swift": "swift",
    ".m": "objective-c",
    ".mm": "objective-cpp",
    ".dart": "dart",
    ".lua": "lua",
    ".pl": "perl",
    ".pm": "perl",
    ".r": "r",
    ".jl": "julia",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".cljc": "clojure",
    ".fs": "fsharp",
    ".fsx": "fsharp",
    ".zig": "zig",
    ".nim": "nim",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".elm": "elm",
    ".vue": "vue",
    ".svelte": "svelte",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".ksh": "shell",
    ".fish": "fish",
    ".ps1": "powershell",
    ".psm1": "powershell",
    ".bat": "batch",
    ".cmd": "batch",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "restructuredtext",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".tex": "latex",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".jsonc": "json",
    ".json5": "json",
    ".ini": "ini",
    ".cfg": "ini",
    ".xml": "xml",
    ".xsd": "xml",
    ".svg": "xml",
    ".sql": "sql",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".sass": "sass",
    ".less": "less",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".tf": "hcl",
    ".tfvars": "hcl",
    ".hcl": "hcl",
    ".bzl": "starlark",
    ".star": "starlark",
    ".cmake": "cmake",
    ".mk": "make",
    ".dockerfile": "dockerfile",
    ".ipynb": "jupyter",
}

INTERPRETER_LANGUAGES: dict[str, str] = {
    "python": "python",
    "pypy": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "bun": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
    "tsx": "typescript",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
    "ksh": "shell",
    "dash": "shell",
    "ash": "shell",
    "fish": "fish",
    "ruby": "ruby",
    "perl": "perl",
    "php": "php",
    "lua": "lua",
    "rscript": "r",
    "julia": "julia",
    "elixir": "elixir",
    "escript": "erlang",
    "runghc": "haskell",
    "swift": "swift",
    "kotlin": "kotlin",
    "scala": "scala",
    "groovy": "groovy",
    "pwsh": "powershell",
}

# Trailing version numbers on interpreter names: python3, python3.11, perl5, lua5.4.
_INTERPRETER_VERSION = re.compile(r"[\d.]+$")


def detect_language(relative_path: str, head: bytes) -> str | None:
    """The language of a file from its path and the first bytes of its content, or None."""
    name = PurePosixPath(relative_path).name
    if name in FILENAME_LANGUAGES:
        return FILENAME_LANGUAGES[name]
    if name.startswith("Dockerfile.") or name.endswith(".Dockerfile"):
        return "dockerfile"
    suffix = PurePosixPath(name.lower()).suffix
    if suffix in EXTENSION_LANGUAGES:
        return EXTENSION_LANGUAGES[suffix]
    return language_from_shebang(head)


def language_from_shebang(head: bytes) -> str | None:
    """The language named by a `#!` line such as `#!/usr/bin/env python3`, or None."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if not head.startswith(b"#!"):
        return None
    first_line = head[2:].split(b"\n", 1)[0].decode("utf-8", errors="replace")
    words = first_line.split()
    if not words:
        return None
    interpreter = words[0].rsplit("/", 1)[-1]
    if interpreter == "env":
        # `env` may carry options (`-S`) and variable assignments before the command.
        arguments = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if not arguments:
            return None
        interpreter = arguments[0].rsplit("/", 1)[-1]
    interpreter = _INTERPRETER_VERSION.sub("", interpreter.lower())
    return INTERPRETER_LANGUAGES.get(interpreter)
