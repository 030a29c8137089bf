"""JavaScript, TypeScript and TSX through the generic extractor: the `minihttp` fixture (ES
classes, CommonJS prototypes, object literals of functions) and the `roster` fixture
(interfaces, enums, abstract classes, namespaces, a .d.ts file, React components); the
`workspace` fixture (two packages of a monorepo: names, entries, tsconfig path aliases)."""

from functools import cache
from importlib import resources
from pathlib import Path

import pytest
from language_fixtures import analyse_tree, detected_root, fixture_version, store_tree

from locus.ast.adapters.store import AstStore, FileIndex, ResolvedRelation
from locus.ast.adapters.tables import SymbolRow
from locus.ast.domain import FileAnalysis, Symbol
from locus.ast.domain.extraction import extract
from locus.ast.domain.language_spec import SourceRoot
from locus.ast.domain.languages import language_spec, module_name_for_path
from locus.ast.domain.specs.javascript import resolve_js_import, resolve_js_import_in_root
from locus.ingestion.domain.source_roots import detect_source_roots, layout_files_to_read

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).parent / "fixtures"
MINIHTTP = FIXTURES / "javascript"
ROSTER = FIXTURES / "typescript"


@cache
def minihttp() -> dict[str, FileAnalysis]:
    return analyse_tree(MINIHTTP, "javascript", suffixes=(".js",))


@cache
def roster() -> dict[str, FileAnalysis]:
    return {
        **analyse_tree(ROSTER, "typescript", suffixes=(".ts",)),
        **analyse_tree(ROSTER, "tsx", suffixes=(".tsx",)),
    }


def symbol(analysis: FileAnalysis, qualified_name: str) -> Symbol:
    found = [s for s in analysis.symbols if s.qualified_name == qualified_name]
    assert found, f"{qualified_name} not in {[s.qualified_name for s in analysis.symbols]}"
    return found[0]


def symbol_facts(analysis: FileAnalysis) -> set[tuple[str, str, str, int, int]]:
    return {
        (s.qualified_name, s.scope_name, s.kind, s.start_line, s.end_line)
        for s in analysis.symbols
        if s.kind != "module"
    }


def relations(analysis: FileAnalysis, kind: str) -> set[tuple[str, str, str | None]]:
    return {
        (r.source_qualified_name, r.target_name, r.target_qualified_name)
        for r in analysis.relations
        if r.kind == kind
    }


# ---- module names and import specifiers ----------------------------------------------------


@pytest.mark.parametrize(
    ("path", "language", "root", "expected"),
    [
        ("src/api/client.ts", "typescript", SourceRoot(), "src/api/client"),
        ("src/api/index.ts", "typescript", SourceRoot(), "src/api"),
        ("index.js", "javascript", SourceRoot(), "index"),
        ("src/types/env.d.ts", "typescript", SourceRoot(), "src/types/env"),
        ("src/user.service.ts", "typescript", SourceRoot(), "src/user.service"),
        ("lib/legacy/cache.cjs", "javascript", SourceRoot(), "lib/legacy/cache"),
        ("web/src/App.tsx", "tsx", SourceRoot("web"), "src/App"),
        ("packages/ui/src/index.jsx", "javascript", SourceRoot("packages/ui"), "src"),
        # A workspace package (named, below the project's top): its name, its entry the name.
        (
            "packages/ui/src/a.ts",
            "typescript",
            SourceRoot("packages/ui", "ui", "index.ts"),
            "ui/src/a",
        ),
        ("packages/ui/index.ts", "typescript", SourceRoot("packages/ui", "ui", "index.ts"), "ui"),
        (
            "packages/ui/index.ts",
            "typescript",
            SourceRoot("packages/ui", "ui", "src/x.ts"),
            "ui/index",
        ),
        # The project's own package keeps path modules.
        ("src/a.ts", "typescript", SourceRoot("", "dayjs", "src/index.ts"), "src/a"),
    ],
)
def test_module_name_is_the_path_below_the_root_without_extension_or_index(
    path: str, language: str, root: SourceRoot, expected: str
) -> None:
    assert module_name_for_path(path, language, root) == expected


@pytest.mark.parametrize(
    ("written", "importer", "is_index", "expected"),
    [
        ("./a", "src/b", False, "src/a"),
        ("./a.js", "src/b", False, "src/a"),
        ("../c/index.js", "src/x/y", False, "src/c"),
        ("./client", "src/api", True, "src/api/client"),
        ("..", "src/api/client", False, "src"),
        (".", "lib/index", False, "lib"),
        ("./styles.css", "src/App", False, "src/styles.css"),
        ("../../outside", "src/a", False, None),
        ("react", "src/App", False, "react"),
        ("@scope/pkg/sub", "src/App", False, "@scope/pkg/sub"),
    ],
)
def test_relative_specifiers_resolve_against_the_importing_directory(
    written: str, importer: str, is_index: bool, expected: str | None
) -> None:
    assert resolve_js_import(written, importer, is_index) == expected


UI = SourceRoot(
    "packages/ui",
    "ui",
    "src/index.ts",
    (
        ("@/*", ("src/*",)),
        ("#config", ("config/index.ts",)),
        ("~*", ("a/*",)),
        ("~lib/*", ("lib/*",)),
    ),
)

APP = SourceRoot(
    "",
    "app",
    "",
    (
        ("components/*", ("src/components/*",)),
        ("components", ("src/components",)),
        ("utils", ("src/utils.js",)),
    ),
)


@pytest.mark.parametrize(
    ("written", "importer", "is_index", "root", "expected"),
    [
        ("dayjs", "src/locale/af", False, SourceRoot("", "dayjs", "src/index.js"), "src"),
        ("../index", "ui/src/a", True, UI, "ui"),  # a/index.ts reaching the entry
        ("./button", "ui", True, UI, "ui/src/button"),  # from the entry itself
        # Out of the package: from the project's top (a shared directory), back in: its own.
        ("../../outside/x", "ui/src/a", False, UI, "packages/outside/x"),
        ("../../ui/src/theme", "ui/src/a", False, UI, "ui/src/theme"),
        ("../../x", "ui", True, UI, "packages/x"),  # from the entry, src/index.ts
        ("../../../../x", "ui/src/a", False, UI, None),  # out of the project
        ("../../x", "src/a", False, SourceRoot("", "dayjs", "src/index.js"), None),
        ("@/theme", "ui/src/a", False, UI, "ui/src/theme"),
        ("#config", "ui/src/a", False, UI, "ui/config"),
        ("~lib/x", "ui/src/a", False, UI, "ui/lib/x"),  # the longest prefix wins
        ("~other", "ui/src/a", False, UI, "ui/a/other"),
        ("react", "ui/src/a", False, UI, "react"),
        # What ingestion makes of `baseUrl: "src"` (a project's top package: path modules).
        ("components/button", "src/pages/home", False, APP, "src/components/button"),
        ("components", "src/pages/home", False, APP, "src/components"),
        ("utils", "src/components/button", False, APP, "src/utils"),
        ("utilities", "src/pages/home", False, APP, "utilities"),
    ],
)
def test_imports_resolve_in_the_importers_package(
    written: str, importer: str, is_index: bool, root: SourceRoot, expected: str | None
) -> None:
    assert resolve_js_import_in_root(written, importer, is_index, root) == expected


# ---- JavaScript ----------------------------------------------------------------------------


def test_es_class_members_with_constructor_field_arrow_and_static_method() -> None:
    client = minihttp()["lib/core/Client.js"]

    assert client.module_name == "lib/core/Client"
    assert symbol_facts(client) == {
        ("lib/core/Client.Client", "Client", "class", 6, 31),
        ("lib/core/Client.Client.constructor", "Client.constructor", "constructor", 7, 10),
        ("lib/core/Client.Client.request", "Client.request", "method", 17, 22),
        ("lib/core/Client.Client.handleError", "Client.handleError", "method", 24, 26),
        ("lib/core/Client.Client.isClient", "Client.isClient", "method", 28, 30),
    }
    request = symbol(client, "lib/core/Client.Client.request")
    assert request.signature == "async request(path, options = {})"
    assert request.docstring == "Sends one request.\n@param {string} path\n@param {object} options"
    # The doc comment sits above the `export default` wrapper.
    assert symbol(client, "lib/core/Client.Client").docstring == (
        "Sends requests and reports their outcome to listeners."
    )


def test_prototype_assignments_are_methods_and_exports_assignments_functions() -> None:
    cache_js = minihttp()["lib/legacy/cache.js"]

    assert symbol_facts(cache_js) == {
        ("lib/legacy/cache.ResponseCache", "ResponseCache", "function", 10, 13),
        ("lib/legacy/cache.ResponseCache.get", "ResponseCache.get", "method", 16, 18),
        ("lib/legacy/cache.ResponseCache.set", "ResponseCache.set", "method", 20, 25),
        ("lib/legacy/cache.ResponseCache.keyOf", "ResponseCache.keyOf", "method", 27, 29),
        ("lib/legacy/cache.createCache", "createCache", "function", 31, 33),
    }
    get = symbol(cache_js, "lib/legacy/cache.ResponseCache.get")
    assert get.parent_qualified_name == "lib/legacy/cache.ResponseCache"
    assert get.docstring == "Returns the cached response of a request, if any."
    calls = relations(cache_js, "calls")
    # `this` inside a prototype method is the constructor function's instance.
    assert (
        "lib/legacy/cache.ResponseCache.get",
        "this.keyOf",
        "lib/legacy/cache.ResponseCache.keyOf",
    ) in calls
    assert ("lib/legacy/cache.createCache", "ResponseCache", "lib/legacy/cache.ResponseCache") in (
        calls
    )
    # require() bindings: a whole module and a destructured name.
    assert (
        "lib/legacy/cache.ResponseCache.keyOf",
        "url.buildURL",
        "lib/helpers/url.buildURL",
    ) in calls
    assert (
        "lib/legacy/cache.ResponseCache.set",
        "normalize",
        "lib/helpers/headers.normalize",
    ) in calls
    assert not any(target == "require" for _, target, _ in calls)


def test_object_literal_of_functions_is_a_container_of_its_methods() -> None:
    retry = minihttp()["lib/helpers/retry.js"]

    facts = symbol_facts(retry)
    assert ("lib/helpers/retry.policy", "policy", "class", 1, 9) in facts
    assert ("lib/helpers/retry.policy.delay", "policy.delay", "method", 3, 5) in facts
    assert ("lib/helpers/retry.policy.shouldRetry", "policy.shouldRetry", "method", 6, 8) in facts
    assert ("lib/helpers/retry.withRetry", "withRetry", "function", 11, 24) in facts
    assert not any(s.name == "attempts" for s in retry.symbols)
    assert (
        "lib/helpers/retry.withRetry.client.request",
        "policy.delay",
        "lib/helpers/retry.policy.delay",
    ) in relations(retry, "calls")


def test_es_imports_bind_names_to_their_modules() -> None:
    client = minihttp()["lib/core/Client.js"]

    assert relations(client, "imports") == {
        ("lib/core/Client", "./Emitter.js.Emitter", "lib/core/Emitter.Emitter"),
        ("lib/core/Client", "../helpers/url.js.buildURL", "lib/helpers/url.buildURL"),
        ("lib/core/Client", "../helpers/headers.js", "lib/helpers/headers"),
    }
    assert relations(client, "inherits") == {
        ("lib/core/Client.Client", "Emitter", "lib/core/Emitter.Emitter")
    }
    calls = relations(client, "calls")
    assert ("lib/core/Client.Client.request", "makeURL", "lib/helpers/url.buildURL") in calls
    assert (
        "lib/core/Client.Client.request",
        "headers.normalize",
        "lib/helpers/headers.normalize",
    ) in calls
    assert ("lib/core/Client.Client", "isClient", "lib/core/Client.Client.isClient") in (
        relations(client, "contains")
    )
    assert [d.target_module for d in client.dependencies] == [
        "lib/core/Emitter",
        "lib/helpers/url",
        "lib/helpers/headers",
    ]
    index = minihttp()["lib/index.js"]
    assert index.module_name == "lib"
    # A re-export is an import of the re-exporting module.
    assert ("lib", "./helpers/url.js.buildURL", "lib/helpers/url.buildURL") in relations(
        index, "imports"
    )


def test_chunks_follow_the_class_and_its_methods() -> None:
    client = minihttp()["lib/core/Client.js"]
    chunks = {(c.kind, c.symbol_qualified_name): c for c in client.chunks}

    request = chunks[("method", "lib/core/Client.Client.request")]
    source = (MINIHTTP / "lib/core/Client.js").read_text().splitlines()
    assert (request.start_line, request.end_line) == (17, 22)
    assert request.text == "\n".join(source[16:22])
    field = chunks[("method", "lib/core/Client.Client.handleError")]
    assert (field.start_line, field.end_line) == (24, 26)
    outline = chunks[("class_header", "lib/core/Client.Client")].text
    assert outline.startswith("export default class Client extends Emitter {")
    assert "  async request(path, options = {}) ..." in outline
    assert "  handleError = (error) => ..." in outline
    assert "makeURL" not in outline
    prototype = [c for c in minihttp()["lib/legacy/cache.js"].chunks if c.kind == "method"]
    assert [(c.symbol_qualified_name, c.start_line, c.end_line) for c in prototype] == [
        ("lib/legacy/cache.ResponseCache.get", 16, 18),
        ("lib/legacy/cache.ResponseCache.set", 20, 25),
        ("lib/legacy/cache.ResponseCache.keyOf", 27, 29),
    ]


def _resolved_calls(index: FileIndex) -> dict[tuple[str, str], str]:
    return {
        (r.relation.source_qualified_name, r.relation.target_name): r.target_node_id
        for r in index.relations
        if r.relation.kind == "calls"
    }


async def test_javascript_calls_and_dependencies_resolve_across_files_in_the_store(
    sqlite_ast_store: AstStore,
) -> None:
    indexes = await store_tree(sqlite_ast_store, minihttp(), "javascript")

    url_file = fixture_version("lib/helpers/url.js", "javascript").file_id
    cache_calls = _resolved_calls(indexes["lib/legacy/cache.js"])
    assert cache_calls[("lib/legacy/cache.ResponseCache.keyOf", "url.buildURL")] != ""
    assert _resolved_calls(indexes["lib/index.js"])[("lib.createClient", "Client")] != ""
    assert _resolved_calls(indexes["lib/index.js"])[("lib.createClient", "withRetry")] != ""
    client_deps = {
        d.target_module: d.target_file_id for d in indexes["lib/core/Client.js"].dependencies
    }
    assert client_deps["lib/helpers/url"] == url_file
    assert (
        client_deps["lib/core/Emitter"]
        == fixture_version("lib/core/Emitter.js", "javascript").file_id
    )
    inherits = [r for r in indexes["lib/core/Client.js"].relations if r.relation.kind == "inherits"]
    assert [r.target_node_id != "" for r in inherits] == [True]

    await sqlite_ast_store.retract_file(fixture_version("lib/helpers/url.js", "javascript", seq=2))
    assert await sqlite_ast_store.file_index(url_file) is None
    cache_file = fixture_version("lib/legacy/cache.js", "javascript").file_id
    after = await sqlite_ast_store.file_index(cache_file)
    assert after is not None
    assert _resolved_calls(after)[("lib/legacy/cache.ResponseCache.keyOf", "url.buildURL")] == ""
    assert {d.target_module: d.target_file_id for d in after.dependencies}["lib/helpers/url"] == ""


# ---- TypeScript and TSX --------------------------------------------------------------------


def test_typescript_interfaces_enums_and_abstract_classes() -> None:
    repository = roster()["src/models/repository.ts"]
    assert symbol_facts(repository) == {
        ("src/models/repository.Entity", "Entity", "interface", 2, 4),
        ("src/models/repository.Repository", "Repository", "interface", 7, 10),
        ("src/models/repository.ListingRepository", "ListingRepository", "interface", 13, 15),
        ("src/models/repository.Status", "Status", "enum", 17, 20),
        # An interface's methods: signatures, no functions (the harness's and tsc's reading).
        ("src/models/repository.Repository.find", "Repository.find", "signature", 8, 8),
        ("src/models/repository.Repository.save", "Repository.save", "signature", 9, 9),
        (
            "src/models/repository.ListingRepository.all",
            "ListingRepository.all",
            "signature",
            14,
            14,
        ),
    }
    assert symbol(repository, "src/models/repository.Repository").docstring == (
        "Stores entities of one type."
    )
    assert relations(repository, "inherits") == {
        (
            "src/models/repository.ListingRepository",
            "Repository",
            "src/models/repository.Repository",
        )
    }

    memory = roster()["src/services/memoryRepository.ts"]
    names = {s.scope_name: s.kind for s in memory.symbols if s.kind != "module"}
    assert names == {
        "MemoryRepository": "class",
        "MemoryRepository.find": "method",
        "MemoryRepository.save": "method",
        "MemoryRepository.log": "method",
        "MemoryRepository.describe": "signature",  # abstract: no body
        "UserRepository": "class",
        "UserRepository.describe": "method",
        "UserRepository.rename": "method",
        "Queries": "namespace",
        "Queries.active": "function",  # a namespace's function is not a method
    }
    rename = symbol(memory, "src/services/memoryRepository.UserRepository.rename")
    assert (rename.start_line, rename.end_line) == (33, 41)
    assert rename.signature == "async rename(id: string, name: string): Promise<User | undefined>"
    assert rename.docstring == (
        "Renames a stored user.\n@returns the renamed user, or undefined when there is none"
    )
    assert relations(memory, "inherits") == {
        ("src/services/memoryRepository.MemoryRepository", "Repository", "src/models.Repository"),
        (
            "src/services/memoryRepository.UserRepository",
            "MemoryRepository",
            "src/services/memoryRepository.MemoryRepository",
        ),
    }
    assert (
        "src/services/memoryRepository.MemoryRepository.save",
        "this.log",
        "src/services/memoryRepository.MemoryRepository.log",
    ) in relations(memory, "calls")


def test_typescript_constructor_and_implements() -> None:
    user = roster()["src/models/user.ts"]
    constructor = symbol(user, "src/models/user.User.constructor")
    assert (constructor.kind, constructor.scope_name) == ("constructor", "User.constructor")
    assert (constructor.start_line, constructor.end_line) == (4, 8)
    assert relations(user, "inherits") == {
        ("src/models/user.User", "Entity", "src/models/repository.Entity")
    }


def test_declaration_files_declare_signatures_and_define_no_functions() -> None:
    env = roster()["src/types/env.d.ts"]
    assert env.module_name == "src/types/env"
    assert {(s.qualified_name, s.kind) for s in env.symbols} == {
        ("src/types/env", "module"),
        ("src/types/env.readEnv", "signature"),  # `declare function`: declared, no function
        ("src/types/env.Roster", "namespace"),
        ("src/types/env.Roster.Settings", "interface"),
        ("src/types/env.Roster.Settings.load", "signature"),
    }
    assert not [c for c in env.chunks if c.kind in {"function", "method"}]


def test_a_declared_classs_methods_are_signatures_and_overloads_fold_into_their_body() -> None:
    """`index.d.ts` beside a JavaScript library: its declared class's methods are signatures
    with their TSDoc; overload signatures before an implementation are not symbols of their
    own (the implementation is)."""
    source = b"""/** Headers of a request. */
declare class AxiosHeaders {
  constructor(headers?: object);
  /** Sets `header` to `value`. */
  set(header: string, value: string): AxiosHeaders;
  static from(thing: object): AxiosHeaders;
}

export function parse(text: string): object;
export function parse(text: string, strict: boolean): object;
export function parse(text: string, strict = false): object {
  return JSON.parse(text);
}
"""
    analysis = extract("index.d.ts", source, "typescript")
    kinds = {s.qualified_name: (s.kind, s.start_line) for s in analysis.symbols}
    assert kinds == {
        "index": ("module", 1),
        "index.AxiosHeaders": ("class", 2),
        "index.AxiosHeaders.constructor": ("signature", 3),
        "index.AxiosHeaders.set": ("signature", 5),
        "index.AxiosHeaders.from": ("signature", 6),
        "index.parse": ("function", 11),
    }
    symbols = {s.qualified_name: s for s in analysis.symbols}
    assert symbols["index.AxiosHeaders.set"].docstring == "Sets `header` to `value`."
    assert symbols["index.AxiosHeaders.set"].signature == (
        "set(header: string, value: string): AxiosHeaders"
    )


def test_tsx_components_are_functions_and_rendering_calls_them() -> None:
    card = roster()["src/components/UserCard.tsx"]
    assert card.language == "tsx"
    assert symbol_facts(card) == {
        ("src/components/UserCard.UserCardProps", "UserCardProps", "interface", 5, 7),
        ("src/components/UserCard.UserCard", "UserCard", "function", 10, 12),
        ("src/components/UserCard.UserList", "UserList", "function", 14, 22),
    }
    assert symbol(card, "src/components/UserCard.UserCard").docstring == "Shows one user."
    calls = relations(card, "calls")
    assert (
        "src/components/UserCard.UserList",
        "UserCard",
        "src/components/UserCard.UserCard",
    ) in calls
    assert (
        "src/components/UserCard.UserCard",
        "formatName",
        "src/components/format.formatName",
    ) in calls
    # A package's default import binds the package.
    assert ("src/components/UserCard", "react", "react") in relations(card, "imports")
    chunk = next(
        c for c in card.chunks if c.symbol_qualified_name == "src/components/UserCard.UserCard"
    )
    assert (chunk.kind, chunk.start_line, chunk.end_line) == ("function", 10, 12)


async def test_typescript_relations_resolve_across_files_in_the_store(
    sqlite_ast_store: AstStore,
) -> None:
    analyses = roster()
    typescript = {path: a for path, a in analyses.items() if a.language == "typescript"}
    tsx = {path: a for path, a in analyses.items() if a.language == "tsx"}
    indexes = {
        **await store_tree(sqlite_ast_store, typescript, "typescript"),
        **await store_tree(sqlite_ast_store, tsx, "tsx"),
    }

    service_calls = _resolved_calls(indexes["src/services/userService.ts"])
    assert service_calls[("src/services/userService.UserService.register", "User")] != ""
    assert service_calls[("src/services/userService.UserService.activeOf", "Queries.active")] != ""
    card_calls = _resolved_calls(indexes["src/components/UserCard.tsx"])
    assert card_calls[("src/components/UserCard.UserCard", "formatName")] != ""
    memory_deps = {
        d.target_module: d.target_file_id
        for d in indexes["src/services/memoryRepository.ts"].dependencies
    }
    # `../models` is the directory's index.ts.
    assert memory_deps["src/models"] == fixture_version("src/models/index.ts", "typescript").file_id
    user_inherits = [
        r for r in indexes["src/models/user.ts"].relations if r.relation.kind == "inherits"
    ]
    assert [r.target_node_id != "" for r in user_inherits] == [True]

    await sqlite_ast_store.retract_file(fixture_version("src/models/user.ts", "typescript", seq=2))
    after = await sqlite_ast_store.file_index(
        fixture_version("src/services/userService.ts", "typescript").file_id
    )
    assert after is not None
    assert _resolved_calls(after)[("src/services/userService.UserService.register", "User")] == ""
    assert (
        _resolved_calls(after)[("src/services/userService.UserService.activeOf", "Queries.active")]
        != ""
    )


def test_tsx_queries_are_the_typescript_queries_with_javascript_calls() -> None:
    queries = resources.files("locus.ast.domain").joinpath("queries")
    sources = language_spec("tsx").query_sources
    for name in ("definitions", "imports", "inheritance"):
        tsx = queries.joinpath(sources[name], f"{name}.scm").read_text()
        assert tsx == queries.joinpath("typescript", f"{name}.scm").read_text(), name
    tsx_calls = queries.joinpath(sources["calls"], "calls.scm").read_text()
    assert tsx_calls == queries.joinpath("javascript", "calls.scm").read_text()
    assert not queries.joinpath("tsx").is_dir()  # one copy of each query, no drift


# ---- a workspace of packages (package.json names and entries, tsconfig path aliases) -------

WORKSPACE = FIXTURES / "workspace"


@cache
def workspace() -> dict[str, FileAnalysis]:
    """The workspace fixture's TypeScript files, each under the root ingestion detects."""
    files = sorted(p.relative_to(WORKSPACE).as_posix() for p in WORKSPACE.rglob("*.*"))
    layout = {path: (WORKSPACE / path).read_text() for path in layout_files_to_read(files)}
    roots = detect_source_roots(files, layout)
    analyses = {}
    for path in files:
        if path.endswith(".ts"):
            found = roots.root_of(path, "typescript")
            analyses[path] = extract(
                path, (WORKSPACE / path).read_bytes(), "typescript", root=detected_root(found)
            )
    return analyses


def test_a_workspace_package_names_its_modules_and_its_entry_by_the_package_name() -> None:
    modules = {path: analysis.module_name for path, analysis in workspace().items()}

    assert modules == {
        "packages/app/src/main.ts": "@acme/app",  # package.json's main
        "packages/app/src/util.ts": "@acme/app/src/util",
        "packages/ui/src/button.ts": "@acme/ui/src/button",
        "packages/ui/src/index.ts": "@acme/ui",  # dist/index.js is built from it
        "packages/ui/src/theme.ts": "@acme/ui/src/theme",
        "packages/ui/src/util.ts": "@acme/ui/src/util",
    }
    button = workspace()["packages/ui/src/button.ts"]
    assert symbol(button, "@acme/ui/src/button.Button.render").kind == "method"


def test_bare_aliased_and_relative_imports_resolve_to_the_right_package() -> None:
    main = workspace()["packages/app/src/main.ts"]
    button = workspace()["packages/ui/src/button.ts"]

    assert [d.target_module for d in main.dependencies] == [
        "@acme/ui",
        "@acme/ui/src/theme",
        "@acme/app/src/util",  # its own util, not the design system's
    ]
    # `@/theme` through the package's tsconfig paths.
    assert [d.target_module for d in button.dependencies] == [
        "@acme/ui/src/theme",
        "@acme/ui/src/util",
    ]
    calls = relations(main, "calls")
    assert ("@acme/app.main", "format", "@acme/app/src/util.format") in calls
    assert ("@acme/app.main", "palette", "@acme/ui/src/theme.palette") in calls


async def test_workspace_imports_resolve_to_files_in_the_store(
    sqlite_ast_store: AstStore,
) -> None:
    indexes = await store_tree(sqlite_ast_store, workspace(), "typescript")

    def file_id(path: str) -> str:
        return fixture_version(path, "typescript").file_id

    dependencies = {
        d.target_module: d.target_file_id for d in indexes["packages/app/src/main.ts"].dependencies
    }
    assert dependencies == {
        "@acme/ui": file_id("packages/ui/src/index.ts"),
        "@acme/ui/src/theme": file_id("packages/ui/src/theme.ts"),
        "@acme/app/src/util": file_id("packages/app/src/util.ts"),
    }
    calls = _resolved_calls(indexes["packages/app/src/main.ts"])
    format_node = next(
        s.node_id
        for s in indexes["packages/app/src/util.ts"].symbols
        if s.qualified_name == "@acme/app/src/util.format"
    )
    assert calls[("@acme/app.main", "format")] == format_node
    assert calls[("@acme/app.main", "palette")] != ""


NX_FILES = {
    "package.json": '{"name": "myorg", "private": true}',
    # The root's base config: every project's tsconfig.json extends it.
    "tsconfig.base.json": '{\n  "compilerOptions": {\n    "baseUrl": ".",\n'
    '    "paths": {\n      "@myorg/ui": ["libs/ui/src/index.ts"],\n'
    '      "@myorg/util/*": ["libs/util/src/*"],\n    },\n  },\n}',
    "apps/web/tsconfig.json": '{"extends": "../../tsconfig.base.json", "include": ["src"]}',
    "apps/web/src/app.tsx": "import { Button } from '@myorg/ui';\n"
    "import { slug } from '@myorg/util/text';\n"
    "import React from 'react';\n\n"
    "export function App() {\n  return Button(slug('home'));\n}\n",
    "libs/ui/tsconfig.json": '{"extends": "../../tsconfig.base.json"}',
    "libs/ui/src/index.ts": "export { Button } from './button';\n",
    "libs/ui/src/button.ts": "export function Button(label: string): string {\n"
    "  return label;\n}\n",
    "libs/util/src/text.ts": "export function slug(text: string): string {\n"
    "  return text.toLowerCase();\n}\n",
}


def test_an_nx_workspace_resolves_project_imports_through_the_extended_base_config() -> None:
    """No package.json per project: one top-level root, and each project's tsconfig.json
    extends the root's tsconfig.base.json, where the `paths` are."""
    files = sorted(NX_FILES)
    roots = detect_source_roots(files, {p: NX_FILES[p] for p in layout_files_to_read(files)})
    found = roots.root_of("apps/web/src/app.tsx", "tsx")
    assert (found.directory, found.name) == ("", "myorg")
    root = detected_root(found)
    app = extract(
        "apps/web/src/app.tsx", NX_FILES["apps/web/src/app.tsx"].encode(), "tsx", root=root
    )

    assert app.module_name == "apps/web/src/app"
    assert [d.target_module for d in app.dependencies] == [
        "libs/ui/src",  # libs/ui/src/index.ts's module
        "libs/util/src/text",
        "react",
    ]
    assert ("apps/web/src/app.App", "slug", "libs/util/src/text.slug") in relations(app, "calls")
    # A file outside every tsconfig's directory gets no aliases (no tsconfig.json at the top).
    assert roots.root_of("tools/gen.js", "javascript").aliases == ()


SIBLINGS = {
    "packages/ui/package.json": '{"name": "@acme/ui", "main": "dist/index.js"}',
    "packages/ui/src/index.ts": "export { palette } from './theme';\n",
    "packages/ui/src/theme.ts": "export function palette(): string {\n  return 'blue';\n}\n",
    "packages/app/package.json": '{"name": "@acme/app"}',
    # The app compiles the design system from source: its aliases point into a sibling.
    "packages/app/tsconfig.json": '{"compilerOptions": {"paths": {'
    '"@acme/ui": ["../ui/src/index.ts"], "@acme/ui/*": ["../ui/src/*"], "~/*": ["./src/*"]}}}',
    "packages/app/src/main.ts": "import { palette } from '@acme/ui';\n"
    "import { palette as tone } from '@acme/ui/theme';\n"
    "import { boot } from '~/boot';\n\n"
    "export function main(): string {\n  boot();\n  return palette() + tone();\n}\n",
    "packages/app/src/boot.ts": "export function boot(): void {}\n",
}


def test_aliases_into_a_sibling_package_name_its_modules_as_that_package_does() -> None:
    files = sorted(SIBLINGS)
    roots = detect_source_roots(files, {p: SIBLINGS[p] for p in layout_files_to_read(files)})
    found = roots.root_of("packages/app/src/main.ts", "typescript")
    root = detected_root(found)
    main = extract(
        "packages/app/src/main.ts",
        SIBLINGS["packages/app/src/main.ts"].encode(),
        "typescript",
        root=root,
    )

    assert [d.target_module for d in main.dependencies] == [
        "@acme/ui",  # the sibling's entry
        "@acme/ui/src/theme",  # `@acme/ui/*` -> `../ui/src/*`: the sibling's own module name
        "@acme/app/src/boot",
    ]
    calls = relations(main, "calls")
    assert ("@acme/app/src/main.main", "tone", "@acme/ui/src/theme.palette") in calls


def test_a_call_on_a_typed_variable_is_a_method_of_its_class() -> None:
    typescript = b"""import { ApiClient } from './client';
import * as api from './api';

export function send(client: ApiClient, opts?: api.Options, ids: string[]) {
  const server = new Server();
  let tokens: Tokenizer = make();
  client.request();
  opts.merge();
  server.start();
  tokens.next();
  ids.join();
}

class Server { start() {} }
class Tokenizer { next() {} }
"""
    analysis = extract("src/send.ts", typescript, "typescript")
    calls = {(written, target) for _, written, target in relations(analysis, "calls")}
    assert ("client.request", "src/client.ApiClient.request") in calls
    assert ("opts.merge", "src/api.Options.merge") in calls
    assert ("server.start", "src/send.Server.start") in calls
    assert ("tokens.next", "src/send.Tokenizer.next") in calls
    assert ("ids.join", None) in calls  # an array: no method of a project's type
    javascript = b"const s = new Server();\ns.start();\nclass Server { start() {} }\n"
    plain = extract("lib/run.js", javascript, "javascript")
    assert ("s.start", "lib/run.Server.start") in {
        (written, target) for _, written, target in relations(plain, "calls")
    }


BARREL = {
    "packages/ui/package.json": '{"name": "@acme/ui", "main": "src/index.ts"}',
    # The package's public surface re-exports its modules, as most TypeScript libraries do.
    "packages/ui/src/index.ts": "export * from './button';\nexport * from './cards';\n",
    "packages/ui/src/cards/index.ts": "export { Card } from './card';\n",
    "packages/ui/src/cards/card.ts": "export class Card {\n  render(): string {\n"
    "    return 'card';\n  }\n}\n",
    "packages/ui/src/button.ts": "export function Button(label: string): string {\n"
    "  return label;\n}\n",
    "packages/app/package.json": '{"name": "@acme/app", "main": "src/main.ts"}',
    "packages/app/src/main.ts": "import { Button, Card, Missing } from '@acme/ui';\n\n"
    "export function main(): string {\n  const card: Card = new Card();\n  Missing();\n"
    "  return Button('Pay') + card.render();\n}\n",
}


def barrel_tree() -> dict[str, FileAnalysis]:
    files = sorted(BARREL)
    roots = detect_source_roots(files, {p: BARREL[p] for p in layout_files_to_read(files)})
    return {
        path: extract(
            path,
            BARREL[path].encode(),
            "typescript",
            root=detected_root(roots.root_of(path, "typescript")),
        )
        for path in files
        if path.endswith(".ts")
    }


async def test_names_a_barrel_re_exports_resolve_to_their_definitions_both_ways(
    sqlite_ast_store: AstStore,
) -> None:
    analyses = barrel_tree()
    main = analyses["packages/app/src/main.ts"]
    calls = relations(main, "calls")
    # What the importing file alone can tell: the names as the package exports them.
    assert ("@acme/app.main", "Button", "@acme/ui.Button") in calls
    assert ("@acme/app.main", "card.render", "@acme/ui.Card.render") in calls

    indexes = await store_tree(sqlite_ast_store, analyses, "typescript")

    def node(path: str, qualified_name: str) -> SymbolRow:
        return next(s for s in indexes[path].symbols if s.qualified_name == qualified_name)

    button = node("packages/ui/src/button.ts", "@acme/ui/src/button.Button")
    render = node("packages/ui/src/cards/card.ts", "@acme/ui/src/cards/card.Card.render")
    caller = node("packages/app/src/main.ts", "@acme/app.main")
    # Callees: through `export *` (button) and `export *` then `export { Card }` (render).
    resolved = _resolved_calls(indexes["packages/app/src/main.ts"])
    assert resolved[("@acme/app.main", "Button")] == button.node_id
    assert resolved[("@acme/app.main", "card.render")] == render.node_id

    # Callers: the definition's incoming relations include the calls written with the
    # package's names, one by one and in a batch.
    def callers(incoming: list[ResolvedRelation]) -> list[str]:
        return [r.relation.source_node_id for r in incoming if r.relation.kind == "calls"]

    for symbol in (button, render):
        assert callers(await sqlite_ast_store.incoming(symbol, 10)) == [caller.node_id]
        batched = await sqlite_ast_store.relations_of([symbol], 10)
        assert callers(batched[symbol.node_id][1]) == [caller.node_id]
    # The app's import of `Button` from the package names the definition too.
    importers = {
        r.relation.file_id
        for r in await sqlite_ast_store.incoming(button, 10)
        if r.relation.kind == "imports"
    }
    assert fixture_version("packages/app/src/main.ts", "typescript").file_id in importers
    # A name none of the re-exported modules defines stays unresolved.
    assert resolved[("@acme/app.main", "Missing")] == ""
