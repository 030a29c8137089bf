"""Stack-trace frames in pasted error output, in every language the extractor reads: Python,
Java/Kotlin/Scala, C#, Go, Rust, JavaScript/TypeScript, PHP, Ruby and C/C++ (gdb, sanitizers).
The one definition of what a frame looks like: the question cues take each frame's path, line
and function from it, the digest of a long log asks it which lines belong to a trace."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from locus.codepaths import PathRole, classify_path

CODE_EXTENSIONS = frozenset(
    {
        "py", "pyi", "pyx", "go", "java", "kt", "kts", "scala", "groovy", "gradle", "js", "jsx",
        "mjs", "cjs", "ts", "tsx", "mts", "cts", "vue", "svelte", "c", "h", "cc", "cpp", "cxx",
        "hpp", "hh", "hxx", "cs", "fs", "rb", "rs", "php", "swift", "m", "mm", "sh", "bash",
        "zsh", "ps1", "sql", "proto", "graphql", "yaml", "yml", "toml", "json", "ini", "cfg",
        "conf", "xml", "html", "css", "scss", "less", "md", "rst", "lua", "pl", "pm", "r", "jl",
        "dart", "ex", "exs", "erl", "hrl", "hs", "ml", "mli", "clj", "cljs", "elm", "zig", "nim",
        "tf", "hcl", "cmake", "mk", "ipynb",
    }
)  # fmt: skip


@dataclass(frozen=True)
class StackFrame:
    path: str  # as the trace writes it, cleaned (`/` separators, no `./`); may be absolute
    line: int
    function: str = ""  # the function's own name: `Method`, `f`, `save` ("" when anonymous)
    # What encloses the function, '.'-joined, as the trace writes it: the package or namespace
    # and the type (`com.acme.OrderService`, `ns.Parser`, `orders.Service`, `App.Repo`).
    scope: str = ""

    @property
    def qualified_name(self) -> str:
        """`Container.function` with the innermost scope segment (`pkg.(*T).Method` → T.Method,
        `ns::f` → ns.f, `Cls->m` → Cls.m); "" without a function or a scope."""
        if not self.function or not self.scope:
            return ""
        return f"{self.scope.rsplit('.', 1)[-1]}.{self.function}"


# Python: File "src/app/x.py", line 12, in handle
_PYTHON = re.compile(
    r'File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in (?P<function><?[\w.]+>?))?'
)
# Java, Kotlin, Scala: at com.acme.OrderService.place(OrderService.java:42), maybe behind a
# module or class loader (at java.base/java.lang.Thread.run(...), at app//com.acme.X.y(...)).
_JVM = re.compile(
    r"\bat\s+(?:[\w.-]+(?:@[\w.-]+)?/+)?(?P<owner>[\w$.]+)\.(?P<function>[\w$<>]+)"
    r"\((?P<path>[\w$.-]+\.\w+):(?P<line>\d+)\)"
)
# C#: at Shop.Orders.OrderService.Place(Int32 id) in C:\src\Shop\OrderService.cs:line 42
_DOTNET = re.compile(
    r"\bat\s+(?P<owner>[\w.`<>+\[\],]+?)\.(?P<function>[\w<>`\[\],|]+)\([^)\n]*\)"
    r"\s+in\s+(?P<path>[^\n]+?):line\s+(?P<line>\d+)"
)
# JavaScript, TypeScript: at placeOrder (/srv/app/src/orders.js:10:5), at async Foo.bar
# (src/x.ts:3:7), at new Foo (...), at Foo.bar [as baz] (...), at /srv/app/index.js:3:1,
# a private method and an ES module's URL: at Ky.#retry (file:///app/source/core/Ky.ts:9:3)
_JAVASCRIPT = re.compile(
    r"\bat\s+(?:(?:async\s+)?(?:new\s+)?(?P<function>[\w$.<>\[\]#]+)(?:\s+\[as\s+[\w$.#]+\])?\s+\()?"
    r"(?:file://)?(?P<path>[^\s()]+\.\w+):(?P<line>\d+):\d+\)?"
)
# Go: the function line, then its location on the next, indented
#   github.com/acme/shop/orders.(*Service).Place(0x0, {0x4c1f20, 0x3})
#   	/home/dev/shop/orders/service.go:42 +0x1c
_GO = re.compile(
    r"^(?:created by\s+)?(?P<function>[^\s()]\S*?)(?:\([^()\n]*\))?(?:\s+in goroutine \d+)?"
    r"[ \t]*\r?\n[ \t]+(?P<path>\S+\.go):(?P<line>\d+)",
    re.M,
)
_GO_FUNCTION_LINE = re.compile(
    r"^(?:[\w./@-]+\.\S+\([^()]*\)|created by \S+(?: in goroutine \d+)?)$"
)
_GO_LOCATION_LINE = re.compile(r"^\s*\S+\.go:\d+(?:\s+\+0x[0-9a-f]+)?$")
# Rust panics: thread 'main' panicked at src/lib.rs:10:5:   (since 1.73; older: at 'msg', src/..)
_RUST_PANIC = re.compile(
    r"panicked at (?:'(?:[^'\n]|'(?!, ))*', )?(?P<path>(?:[A-Za-z]:)?[^\s:']+\.rs)"
    r":(?P<line>\d+)(?::\d+)?"
)
# Rust backtraces: the numbered function line, then `at <path>:<line>:<column>` on the next
#     4: myapp::parser::Parser::parse_expr
#               at ./src/parser.rs:88:14
_RUST_FRAME = re.compile(
    r"^[ \t]*\d+:[ \t]+(?:0x[0-9a-f]+ - )?(?P<function>[^\n]+?)[ \t]*\r?\n"
    r"[ \t]+at[ \t]+(?P<path>(?:[A-Za-z]:)?[^\s:]+\.rs):(?P<line>\d+)(?::\d+)?",
    re.M,
)
_RUST_FUNCTION_LINE = re.compile(r"^\s*\d+:\s+(?:0x[0-9a-f]+ - )?\S*::\S+")
_RUST_LOCATION_LINE = re.compile(r"^\s*at\s+\S+\.rs:\d+")
# Ruby: app/models/user.rb:12:in 'User#save'  (before 3.4: `save'), from lib/x.rb:3:in `<main>'
_RUBY = re.compile(
    r"(?P<path>[^\s:'\"`()]+\.(?:rb|rake|ru|erb|haml|slim|jbuilder)):(?P<line>\d+)"
    r":in\s+[`'](?P<function>[^'`\n]+)'"
)
# PHP: #0 /var/www/app/src/Service.php(17): App\Repo->find('x')   (at line 17 of Service.php,
# App\Repo->find was called: the function holding that line is the call of the next frame)
_PHP_FRAME = re.compile(
    r"^[ \t]*#(?P<index>\d+)[ \t]+(?P<path>[^\s(]+\.(?:php|phtml|inc))\((?P<line>\d+)\):"
    r"[ \t]*(?P<call>[\w\\]+(?:(?:->|::)\w+)?)?",
    re.M,
)
# PHP errors: PHP Fatal error:  Uncaught Exception: msg in /var/www/x.php:3, ... thrown in
# /var/www/x.php on line 3, PHP Warning:  ... in /x.php on line 3
_PHP_ERROR_AT = re.compile(
    r"\bin[ \t]+(?P<path>[^\s(]+\.(?:php|phtml|inc))"
    r"(?::(?P<line>\d+)|[ \t]+on[ \t]+line[ \t]+(?P<on_line>\d+))"
)
# C, C++ (gdb, AddressSanitizer and friends):
#   #0 0x4005d4 in ns::Parser::parse(std::string const&) /src/parser.cc:42:13
#   #1  0x0000000000400610 in main () at src/main.c:20
_NATIVE = re.compile(
    r"^[ \t]*#\d+[ \t]+(?:0x[0-9a-fA-F]+[ \t]+in[ \t]+)?(?P<function>[^\n]+?)[ \t]+"
    r"(?:\([^\n]*?\)[ \t]+)?(?:at[ \t]+)?(?P<path>(?:[A-Za-z]:)?[^\s():]+"
    r"\.(?:c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx|ipp|tpp|inl|m|mm|cu)):(?P<line>\d+)(?::\d+)?",
    re.M,
)
# Go, compilers, linters, test runners: path/to/file.go:123 (a code extension required); a
# file URL's path too (file:///srv/app/x.ts:3)
FILE_LINE = re.compile(
    r"(?:(?<![\w/.-])|(?<=file://))(?P<path>/?(?:[\w@+.-]+/)*[\w@+-][\w@+.-]*\.(?P<ext>\w+)):(?P<line>\d+)"
)
# Lines of a trace that are no frame of their own: headers, elisions, goroutine headers.
_TRACE_MARKER = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)|\.\.\. \d+ (?:more|common frames omitted)"
    r"|goroutine \d+ \[[^\]]*\]:|stack backtrace:|Stack trace:|Backtrace:|#\d+ \{main\}"
    r"|#\d+ \[internal function\])"
)


def find_frames(text: str) -> list[StackFrame]:
    """The frames of every trace in ``text``, in the order they are written; frames of the
    application before those of runtimes and dependencies (a long JVM or Go trace)."""
    found: list[tuple[int, StackFrame]] = []
    for pattern, frame_of in _PARSERS:
        for match in pattern.finditer(text):
            found.append((match.start(), frame_of(match)))
    found += _php_frames(text)
    found.sort(key=lambda item: item[0])
    # Two patterns may read one frame (Rust's `at src/x.rs:3:9` looks like a Node frame): a
    # location without a function is dropped when another frame there has one.
    named = {(frame.path, frame.line) for _, frame in found if frame.function}
    frames = list(dict.fromkeys(f for _, f in found if f.function or (f.path, f.line) not in named))
    return sorted(frames, key=is_library_frame)  # stable: the project's frames first, in order


def is_frame_line(line: str) -> bool:
    """Whether one line of a log belongs to a stack trace (a frame, half of a two-line Go or
    Rust frame, a trace header) or names a code file and line."""
    if any(pattern.search(line) for pattern in _LINE_PATTERNS):
        return True
    return next(code_locations(line), None) is not None


def code_locations(text: str) -> Iterator[re.Match[str]]:
    """`path:line` mentions (FILE_LINE matches) of files with a code extension."""
    return (m for m in FILE_LINE.finditer(text) if m.group("ext").lower() in CODE_EXTENSIONS)


def clean_path(path: str) -> str:
    """`.\\src\\x.py` → src/x.py, `file:///srv/x.js` → /srv/x.js, trailing punctuation gone."""
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if path.startswith("file:///"):
        path = path[len("file://") :]
    return path.rstrip("/.:,;")


def package_path(frame: StackFrame) -> str:
    """A JVM frame's file under its package (`com.acme.orders.OrderService` in
    OrderService.java → com/acme/orders/OrderService.java), "" for other frames."""
    if "/" in frame.path or not frame.path.endswith((".java", ".kt", ".scala", ".groovy")):
        return ""
    segments = [p for p in frame.scope.split(".") if p]
    package = segments[
        : next((i for i, p in enumerate(segments) if not p.islower()), len(segments))
    ]
    return "/".join([*package, frame.path]) if package else ""


# A dependency's or the runtime's frame: a vendored path, a toolchain's sources, a JVM platform
# class. Kept, but after the application's own frames when the cues are capped.
_LIBRARY_PATH_PARTS = (
    "/rustc/",
    "/.cargo/registry/",
    "/go/pkg/mod/",
    "/usr/local/go/src/",
    "/usr/lib/go",
    "/usr/include/",
    "/lib/python3",
)
_LIBRARY_SCOPES = re.compile(
    r"^(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|org\.junit|junit|System|Microsoft"
    r"|core|std|alloc|tokio|runtime|testing)\."
)


def is_library_frame(frame: StackFrame) -> bool:
    path = "/" + frame.path.lstrip("/")
    if path.startswith(("/node:", "/internal/", "/<")) or any(
        part in path for part in _LIBRARY_PATH_PARTS
    ):
        return True
    if classify_path(frame.path) == PathRole.VENDORED:
        return True
    return bool(_LIBRARY_SCOPES.match(frame.scope + "."))


def _frame(path: str, line: str, function: str = "", scope: str = "") -> StackFrame:
    return StackFrame(clean_path(path), int(line), function, scope)


def _python(match: re.Match[str]) -> StackFrame:
    scope, _, function = (match.group("function") or "").rpartition(".")
    return _frame(match.group("path"), match.group("line"), function, scope)


_JAVA_SYNTHETIC = re.compile(r"^(?:lambda|access)\$|\$(?:lambda|suspendImpl|default)\b.*$")


def _jvm(match: re.Match[str]) -> StackFrame:
    path, owner, function = match.group("path"), match.group("owner"), match.group("function")
    *package, type_name = owner.split(".")
    # Outer$Inner$1, OrderService$place$1 (a Kotlin lambda), Foo$Companion: the named types.
    types = [t for t in type_name.split("$") if t[:1].isupper() and t != "Companion"]
    if path.endswith(".scala") and type_name.endswith("$") and not types:
        types = [type_name.split("$")[0]]  # `os.read$`: a Scala object, lower-case or not
    if path.endswith(".kt") and types and types[-1].endswith("Kt"):
        types = []  # FooKt: the class of a Kotlin file's top-level functions
    if function == "<init>":
        function = types[-1] if types else ""
    elif function.startswith("<"):
        function = ""  # <clinit>
    else:
        parts = [p for p in _JAVA_SYNTHETIC.sub("", function).split("$") if p and not p.isdigit()]
        function = parts[0] if parts else ""
    return _frame(path, match.group("line"), function, ".".join([*package, *types]))


_DOTNET_GENERATED = re.compile(r"^<(?P<name>\w+)>\w__\w+$")


def _dotnet(match: re.Match[str]) -> StackFrame:
    owner = re.sub(r"`\d+|\[[^\]]*\]", "", match.group("owner")).replace("+", ".")
    function = re.sub(r"`\d+|\[[^\]]*\]", "", match.group("function"))
    segments = [s for s in owner.split(".") if s]
    if segments:
        # Shop.OrderService.<PlaceAsync>d__5.MoveNext: the async method PlaceAsync
        generated = _DOTNET_GENERATED.match(segments[-1])
        if generated:
            function, segments = generated.group("name"), segments[:-1]
    generated = _DOTNET_GENERATED.match(function)
    if generated:
        function = generated.group("name")  # <Place>b__0_0: a lambda inside Place
    segments = [s for s in segments if not s.startswith("<")]  # <>c: the lambdas' class
    if function in ("ctor", "cctor") and match.group("owner").endswith("."):
        # Shop.Order..ctor(): Order's constructor (`.cctor`: its static one), named as the type
        function = segments[-1] if segments else ""
    return _frame(match.group("path"), match.group("line"), function, ".".join(segments))


def _javascript(match: re.Match[str]) -> StackFrame:
    scope, _, function = (match.group("function") or "").rpartition(".")
    if function.startswith("<"):
        function = ""  # <anonymous>
    if scope in ("Object", "Module", "global"):
        scope = ""
    return _frame(match.group("path"), match.group("line"), function, scope)


_GO_RECEIVER = re.compile(r"^\(\*?(?P<type>\w+)(?:\[[^\]]*\])?\)\.(?P<method>\w+)")
_GO_CLOSURE = re.compile(r"(?:\.func\d+|\.gowrap\d+|\.\d+)+$")


def _go(match: re.Match[str]) -> StackFrame:
    written = match.group("function").rsplit("/", 1)[-1]  # github.com/acme/shop/orders.X → orders.X
    package, _, rest = written.partition(".")
    rest = _GO_CLOSURE.sub("", re.sub(r"\[[^\]]*\]", "", rest))
    receiver = _GO_RECEIVER.match(rest)
    if receiver:
        scope, function = receiver.group("type"), receiver.group("method")
    elif "." in rest:
        scope, _, function = rest.partition(".")  # a value receiver: orders.Service.Place
        function = function.split(".", 1)[0]
    else:
        scope, function = package, rest
    return _frame(match.group("path"), match.group("line"), function, scope)


def _rust_panic(match: re.Match[str]) -> StackFrame:
    return _frame(match.group("path"), match.group("line"))


_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
_RUST_TRAIT_IMPL = re.compile(r"<(?P<type>[^<>]+?)(?: as [^<>]+)?>::")


def _rust(match: re.Match[str]) -> StackFrame:
    written = _rust_qualified_self(_RUST_HASH.sub("", match.group("function").strip()))
    written = _RUST_TRAIT_IMPL.sub(lambda m: m.group("type") + "::", written)
    segments = [s for s in _without_brackets(written, "<", ">").split("::") if s]
    segments = [s for s in segments if not s.startswith("{{")]  # {{closure}}
    if not segments:
        return _frame(match.group("path"), match.group("line"))
    return _frame(match.group("path"), match.group("line"), segments[-1], ".".join(segments[:-1]))


def _rust_qualified_self(written: str) -> str:
    """`<walkdir::FilterEntry<walkdir::IntoIter,P> as core::iter::Iterator>::next` →
    walkdir::FilterEntry::next: the type of a trait method's `<Type as Trait>` prefix, its own
    generic arguments left out (the inner `<...>` of the type, not the whole prefix)."""
    if not written.startswith("<"):
        return written
    depth = 0
    for index, character in enumerate(written):
        depth += {"<": 1, ">": -1}.get(character, 0)
        if depth == 0:
            inner, rest = written[1:index], written[index + 1 :]
            break
    else:
        return written
    level, cut = 0, len(inner)
    for index, character in enumerate(inner):  # ` as ` outside the type's own brackets
        level += {"<": 1, ">": -1}.get(character, 0)
        if level == 0 and inner.startswith(" as ", index):
            cut = index
            break
    return _without_brackets(inner[:cut], "<", ">") + rest


_RUBY_BLOCK = re.compile(r"^(?:(?:block|rescue|ensure)(?: \(\d+ levels\))? in )+")


def _ruby(match: re.Match[str]) -> StackFrame:
    written = _RUBY_BLOCK.sub("", match.group("function"))
    if written.startswith("<"):
        written = ""  # <main>, <class:User>, <top (required)>
    scope, _, function = _split_ruby(written)
    return _frame(match.group("path"), match.group("line"), function, scope)


def _split_ruby(written: str) -> tuple[str, str, str]:
    """`Shop::User#save` → (Shop.User, #, save); `User.find` → (User, ., find); `save`."""
    for separator in ("#", "."):
        if separator in written:
            scope, _, function = written.rpartition(separator)
            return scope.replace("::", "."), separator, function
    return "", "", written


def _native(match: re.Match[str]) -> StackFrame:
    written = match.group("function").strip()
    written = written.replace("(anonymous namespace)::", "")
    if "operator()" in written:
        written = written[: written.index("operator()") + len("operator()")]
    else:
        written = written.split("(", 1)[0]
    for operator in ("operator<<", "operator>>", "operator<=", "operator>=", "operator<"):
        written = written.replace(operator, operator.replace("<", "\0l").replace(">", "\0g"))
    written = written.replace("operator>", "operator\0g").replace("->", "\0a")
    written = _without_brackets(written, "<", ">")
    written = written.replace("\0l", "<").replace("\0g", ">").replace("\0a", "->").strip()
    segments = [s.strip() for s in written.split("::") if s.strip()]
    if not segments or not re.match(r"^[~\w]", segments[-1]):
        return _frame(match.group("path"), match.group("line"))
    function = segments[-1].rsplit(" ", 1)[-1]  # a return type gdb printed before the name
    return _frame(match.group("path"), match.group("line"), function, ".".join(segments[:-1]))


def _php_frames(text: str) -> Iterator[tuple[int, StackFrame]]:
    frames = list(_PHP_FRAME.finditer(text))
    seen: set[tuple[str, int]] = set()
    for position, match in enumerate(frames):
        caller = frames[position + 1] if position + 1 < len(frames) else None
        holder = ""
        if caller is not None and int(caller.group("index")) == int(match.group("index")) + 1:
            holder = caller.group("call") or ""
        frame = _php_frame(match.group("path"), match.group("line"), holder)
        seen.add((frame.path, frame.line))
        yield match.start(), frame
    for match in _PHP_ERROR_AT.finditer(text):
        line = match.group("line") or match.group("on_line")
        # The error happened inside the function the trace's first frame calls.
        first = next(
            (f for f in frames if f.start() > match.start() and f.group("index") == "0"), None
        )
        frame = _php_frame(match.group("path"), line, (first and first.group("call")) or "")
        if (frame.path, frame.line) not in seen:
            seen.add((frame.path, frame.line))
            yield match.start(), frame


def _php_frame(path: str, line: str, call: str) -> StackFrame:
    """`App\\Repo->find` → scope App.Repo, function find (`::` for a static call alike)."""
    written = re.split(r"->|::", call)
    function = written[-1] if len(written) > 1 else call.rsplit("\\", 1)[-1]
    scope = written[0] if len(written) > 1 else call.rpartition("\\")[0]
    return _frame(path, line, function, scope.replace("\\", "."))


def _without_brackets(text: str, opening: str, closing: str) -> str:
    """`Vec<Option<T>>::push` → Vec::push: every bracketed group removed, nested ones too."""
    result: list[str] = []
    depth = 0
    for character in text:
        if character == opening:
            depth += 1
        elif character == closing and depth:
            depth -= 1
        elif not depth:
            result.append(character)
    return "".join(result)


_PARSERS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], StackFrame]], ...] = (
    (_PYTHON, _python),
    (_JVM, _jvm),
    (_DOTNET, _dotnet),
    (_JAVASCRIPT, _javascript),
    (_GO, _go),
    (_RUST_PANIC, _rust_panic),
    (_RUST_FRAME, _rust),
    (_RUBY, _ruby),
    (_NATIVE, _native),
)
_LINE_PATTERNS: tuple[re.Pattern[str], ...] = (
    *(pattern for pattern, _ in _PARSERS if pattern not in (_GO, _RUST_FRAME)),
    _GO_FUNCTION_LINE,
    _GO_LOCATION_LINE,
    _RUST_FUNCTION_LINE,
    _RUST_LOCATION_LINE,
    _PHP_FRAME,
    _PHP_ERROR_AT,
    _TRACE_MARKER,
)
