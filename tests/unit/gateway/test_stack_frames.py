"""Stack traces in every language: each frame's path, line, function and scope (and the
`Type.method` name the ranking matches symbols with); a long log's digest keeps them."""

from __future__ import annotations

import pytest

from locus.gateway.domain.question_cues import extract_cues
from locus.gateway.domain.question_digest import DIGEST_CHARS, digest_question
from locus.gateway.domain.stack_frames import (
    StackFrame,
    code_locations,
    find_frames,
    is_frame_line,
    package_path,
)

pytestmark = pytest.mark.unit

JAVA = """\
Exception in thread "main" java.lang.IllegalStateException: order 42 has no lines
\tat com.acme.orders.OrderService.place(OrderService.java:42)
\tat com.acme.orders.OrderService$Validator.check(OrderService.java:118)
\tat com.acme.orders.OrderService.lambda$submit$0(OrderService.java:77)
\tat com.acme.orders.Order.<init>(Order.java:15)
\tat java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.sql.SQLException: connection refused
\tat com.acme.db.Pool.acquire(Pool.java:88)
\t... 12 more"""

KOTLIN = """\
kotlin.KotlinNullPointerException
\tat com.acme.billing.InvoicesKt.total(Invoices.kt:21)
\tat com.acme.billing.InvoiceService$render$1.invoke(InvoiceService.kt:40)"""

GO = """\
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a5b2c]

goroutine 1 [running]:
github.com/acme/shop/orders.(*Service).Place(0x0, {0x4c1f20, 0x3})
\t/home/dev/shop/orders/service.go:42 +0x1c
github.com/acme/shop/orders.validate(...)
\t/home/dev/shop/orders/validate.go:17
github.com/acme/shop/orders.Handler.func1()
\t/home/dev/shop/orders/http.go:88 +0x45
main.main()
\t/home/dev/shop/main.go:15 +0x45
created by net/http.(*Server).Serve in goroutine 1
\t/usr/local/go/src/net/http/server.go:3086 +0x5cb
exit status 2"""

RUST = """\
thread 'main' panicked at src/parser.rs:88:14:
called `Option::unwrap()` on a `None` value
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:645:5
   1: core::panicking::panic_fmt
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/panicking.rs:72:14
   4: myapp::parser::Parser::parse_expr
             at ./src/parser.rs:88:14
   5: <myapp::ast::Expr as core::fmt::Display>::fmt
             at ./src/ast.rs:10:5
   6: myapp::main::{{closure}}
             at ./src/main.rs:7:9
   7: myapp::run::h0123456789abcdef
             at ./src/lib.rs:30:5"""

RUST_OLD_PANIC = (
    "thread 'main' panicked at 'index out of bounds: the len is 3 but the index is 5', "
    "src/buffer.rs:3:9"
)

NODE = """\
TypeError: Cannot read properties of undefined (reading 'id')
    at placeOrder (/srv/app/src/orders.ts:10:5)
    at async OrderController.create (/srv/app/src/controllers/order.controller.ts:31:7)
    at Object.<anonymous> (/srv/app/src/index.js:1:2)
    at new Cart (/srv/app/src/cart.js:4:11)
    at Router.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)
    at processTicksAndRejections (node:internal/process/task_queues:95:5)"""

DOTNET = """\
System.NullReferenceException: Object reference not set to an instance of an object.
   at Shop.Orders.OrderService.Place(Int32 id) in C:\\src\\Shop\\Orders\\OrderService.cs:line 42
   at Shop.Orders.OrderService.<SubmitAsync>d__5.MoveNext() in /src/Shop/OrderService.cs:line 77
   at Shop.Api.Program+<>c.<Main>b__0_0(String x) in C:\\src\\Shop\\Api\\Program.cs:line 12
   at Shop.Orders.Order..ctor(Int32 id) in /_/src/Shop/Order.cs:line 9
   at Shop.Orders.Order..cctor() in /_/src/Shop/Order.cs:line 3"""

PHP = """\
PHP Fatal error:  Uncaught InvalidArgumentException: Bad id in /var/www/app/src/Repo.php:42
Stack trace:
#0 /var/www/app/src/Service.php(17): App\\Repo->find('x')
#1 /var/www/app/public/index.php(9): App\\Service::handle()
#2 {main}
  thrown in /var/www/app/src/Repo.php on line 42"""

PHP_FATAL = "PHP Fatal error:  Call to undefined function helper() in /var/www/x.php on line 3"

RUBY = """\
app/models/user.rb:12:in 'User#save': undefined method 'name' for nil (NoMethodError)
\tfrom app/services/signup.rb:30:in `block in Accounts::Signup.call'
\tfrom app/services/signup.rb:28:in `each'
\tfrom bin/run.rb:3:in `<main>'"""

NATIVE = """\
==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010
READ of size 4 at 0x602000000010 thread T0
    #0 0x4f4e0a in ns::Parser::parse(std::string const&) /home/dev/proj/src/parser.cc:42:13
    #1 0x4f5b21 in main /home/dev/proj/src/main.c:5:3
    #2 0x7f1c2 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21bf6)"""

GDB = """\
Program received signal SIGSEGV, Segmentation fault.
#0  0x00000000004005d4 in ns::f (x=1) at src/x.cc:12
#1  0x0000000000400610 in fmt::v10::detail::write<char, fmt::appender>(fmt::appender, int) \
() at include/fmt/format.h:2120
#2  0x0000000000400700 in main () at src/main.c:20"""


def frames_of(text: str) -> list[tuple[str, int, str, str]]:
    return [(f.path, f.line, f.function, f.scope) for f in find_frames(text)]


def test_java_frames_name_class_and_method() -> None:
    frames = frames_of(JAVA)
    assert frames[:5] == [
        ("OrderService.java", 42, "place", "com.acme.orders.OrderService"),
        ("OrderService.java", 118, "check", "com.acme.orders.OrderService.Validator"),
        ("OrderService.java", 77, "submit", "com.acme.orders.OrderService"),
        ("Order.java", 15, "Order", "com.acme.orders.Order"),  # a constructor: Order.Order
        ("Pool.java", 88, "acquire", "com.acme.db.Pool"),
    ]
    # The platform's frames come after the application's.
    assert frames[-1] == ("Thread.java", 833, "run", "java.lang.Thread")
    first = find_frames(JAVA)[0]
    assert first.qualified_name == "OrderService.place"
    assert package_path(first) == "com/acme/orders/OrderService.java"


def test_scala_objects_lower_case_or_not() -> None:
    trace = """java.nio.file.NoSuchFileException: /tmp/x
\tat os.read$.apply(ReadWriteOps.scala:234)
\tat fansi.Str$.apply(Fansi.scala:12)"""
    assert frames_of(trace) == [
        ("ReadWriteOps.scala", 234, "apply", "os.read"),
        ("Fansi.scala", 12, "apply", "fansi.Str"),
    ]
    assert find_frames(trace)[0].qualified_name == "read.apply"


def test_kotlin_file_facades_and_lambda_classes() -> None:
    assert frames_of(KOTLIN) == [
        ("Invoices.kt", 21, "total", "com.acme.billing"),
        ("InvoiceService.kt", 40, "invoke", "com.acme.billing.InvoiceService"),
    ]
    assert package_path(find_frames(KOTLIN)[0]) == "com/acme/billing/Invoices.kt"


def test_go_frames_name_receiver_and_method() -> None:
    frames = find_frames(GO)
    assert [(f.path, f.line, f.qualified_name) for f in frames] == [
        ("/home/dev/shop/orders/service.go", 42, "Service.Place"),
        ("/home/dev/shop/orders/validate.go", 17, "orders.validate"),
        ("/home/dev/shop/orders/http.go", 88, "orders.Handler"),  # its closure func1
        ("/home/dev/shop/main.go", 15, "main.main"),
        ("/usr/local/go/src/net/http/server.go", 3086, "Server.Serve"),
    ]
    assert frames[0].function == "Place"


def test_rust_panic_and_backtrace_frames() -> None:
    frames = frames_of(RUST)
    # The panic's location is the first application frame's.
    assert frames[:4] == [
        ("src/parser.rs", 88, "parse_expr", "myapp.parser.Parser"),
        ("src/ast.rs", 10, "fmt", "myapp.ast.Expr"),
        ("src/main.rs", 7, "main", "myapp"),
        ("src/lib.rs", 30, "run", "myapp"),
    ]
    assert (
        "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs",
        645,
    ) in [(f[0], f[1]) for f in frames[4:]]
    assert frames_of(RUST_OLD_PANIC) == [("src/buffer.rs", 3, "", "")]


def test_a_rust_trait_methods_frame_names_its_generic_type() -> None:
    # walkdir: the type's own generic arguments hold another type; the frame is FilterEntry's.
    trace = """stack backtrace:
   5: <walkdir::FilterEntry<walkdir::IntoIter,P> as core::iter::traits::iterator::Iterator>::next
             at ./src/lib.rs:1073:25
   6: <T as core::convert::Into<U>>::into
             at ./src/convert.rs:3:5"""
    assert frames_of(trace) == [
        ("src/lib.rs", 1073, "next", "walkdir.FilterEntry"),
        ("src/convert.rs", 3, "into", "T"),
    ]


def test_javascript_and_typescript_frames() -> None:
    frames = frames_of(NODE)
    assert frames == [
        ("/srv/app/src/orders.ts", 10, "placeOrder", ""),
        ("/srv/app/src/controllers/order.controller.ts", 31, "create", "OrderController"),
        ("/srv/app/src/index.js", 1, "", ""),
        ("/srv/app/src/cart.js", 4, "Cart", ""),
        ("/srv/app/node_modules/express/lib/router/layer.js", 95, "handle", "Router"),
    ]


def test_node_es_module_frames_with_private_methods() -> None:
    # Node prints an ES module's files as file:// URLs; `#name` is a class's private method.
    trace = """\
HTTPError: Request failed with status code 500 Internal Server Error
    at Ky.#throwProcessedError (file:///app/source/core/Ky.ts:590:10)
    at async Ky.#retry (file:///app/source/core/Ky.ts:412:14)
    at file:///app/source/index.ts:3:1"""
    assert frames_of(trace) == [
        ("/app/source/core/Ky.ts", 590, "#throwProcessedError", "Ky"),
        ("/app/source/core/Ky.ts", 412, "#retry", "Ky"),
        ("/app/source/index.ts", 3, "", ""),
    ]
    assert [m.group("path") for m in code_locations("see file:///app/source/ky.ts:12")] == [
        "/app/source/ky.ts"
    ]


def test_dotnet_frames_with_windows_paths_async_and_lambdas() -> None:
    assert frames_of(DOTNET) == [
        ("C:/src/Shop/Orders/OrderService.cs", 42, "Place", "Shop.Orders.OrderService"),
        ("/src/Shop/OrderService.cs", 77, "SubmitAsync", "Shop.Orders.OrderService"),
        ("C:/src/Shop/Api/Program.cs", 12, "Main", "Shop.Api.Program"),
        # constructors, named as the type (their symbols' name)
        ("/_/src/Shop/Order.cs", 9, "Order", "Shop.Orders.Order"),
        ("/_/src/Shop/Order.cs", 3, "Order", "Shop.Orders.Order"),
    ]


def test_php_frames_name_the_function_that_holds_each_line() -> None:
    # Service.php:17 calls Repo->find: the line is inside Service::handle, the next frame's call;
    # the error location is inside the function the first frame calls.
    assert frames_of(PHP) == [
        ("/var/www/app/src/Repo.php", 42, "find", "App.Repo"),
        ("/var/www/app/src/Service.php", 17, "handle", "App.Service"),
        ("/var/www/app/public/index.php", 9, "", ""),
    ]
    assert frames_of(PHP_FATAL) == [("/var/www/x.php", 3, "", "")]


def test_ruby_frames_in_both_quote_styles() -> None:
    assert frames_of(RUBY) == [
        ("app/models/user.rb", 12, "save", "User"),
        ("app/services/signup.rb", 30, "call", "Accounts.Signup"),
        ("app/services/signup.rb", 28, "each", ""),
        ("bin/run.rb", 3, "", ""),
    ]


def test_native_frames_from_sanitizers_and_gdb() -> None:
    assert frames_of(NATIVE) == [
        ("/home/dev/proj/src/parser.cc", 42, "parse", "ns.Parser"),
        ("/home/dev/proj/src/main.c", 5, "main", ""),
    ]
    assert frames_of(GDB) == [
        ("src/x.cc", 12, "f", "ns"),
        ("include/fmt/format.h", 2120, "write", "fmt.v10.detail"),
        ("src/main.c", 20, "main", ""),
    ]


def test_frames_become_cues_paths_dotted_names_and_lookups() -> None:
    cues = extract_cues(f"Placing an order crashes:\n```\n{GO}\n```")
    assert StackFrame("/home/dev/shop/orders/service.go", 42, "Place", "Service") in cues.frames
    assert "/home/dev/shop/orders/service.go" in cues.paths
    assert "Service.Place" in cues.dotted_names
    assert "Place" in cues.lookup_names(8)
    java = extract_cues(JAVA)
    assert "com/acme/orders/OrderService.java" in java.paths
    assert "OrderService.place" in java.dotted_names
    php = extract_cues(PHP)
    assert "Repo.find" in php.dotted_names


@pytest.mark.parametrize(
    "line",
    [
        "\tat com.acme.orders.OrderService.place(OrderService.java:42)",
        "\t... 12 more",
        "goroutine 1 [running]:",
        "github.com/acme/shop/orders.(*Service).Place(0x0, {0x4c1f20, 0x3})",
        "/home/dev/shop/orders/service.go:42 +0x1c",
        "4: myapp::parser::Parser::parse_expr",
        "at ./src/parser.rs:88:14",
        "at async OrderController.create (/srv/app/src/controllers/order.controller.ts:31:7)",
        r"at Shop.Orders.OrderService.Place(Int32 id) in C:\src\Shop\OrderService.cs:line 42",
        "#0 /var/www/app/src/Service.php(17): App\\Repo->find('x')",
        "#2 {main}",
        "thrown in /var/www/app/src/Repo.php on line 42",
        "from app/services/signup.rb:30:in `block in Accounts::Signup.call'",
        "#0 0x4005d4 in ns::f(int) src/x.cc:12",
    ],
)
def test_trace_lines_are_recognised(line: str) -> None:
    assert is_frame_line(line.strip())


@pytest.mark.parametrize(
    "line",
    [
        "2024-05-01 12:00:01 INFO worker-3 processed batch 17 in 4 ms",
        "I expected the exporter to skip the empty column.",
        "#12 was closed as a duplicate",
    ],
)
def test_other_lines_are_not_frames(line: str) -> None:
    assert not is_frame_line(line)


@pytest.mark.parametrize(
    ("trace", "function"),
    [
        (JAVA, "place"),
        (KOTLIN, "total"),
        (GO, "Place"),
        (RUST, "parse_expr"),
        (NODE, "placeOrder"),
        (DOTNET, "Place"),
        (PHP, "find"),
        (RUBY, "save"),
        (NATIVE, "parse"),
        (GDB, "f"),
    ],
)
def test_a_long_log_keeps_the_trace_and_its_error_lines(trace: str, function: str) -> None:
    noise = "\n".join(
        f"2024-05-01 12:{i % 60:02d}:{i % 57:02d} INFO worker-{i % 7} processed batch {i} "
        f"in {i % 13} ms"
        for i in range(3000)
    )
    question = f"The service crashes on startup\n\n{noise}\n{trace}\n{noise}\n"
    digest = digest_question(question)
    assert len(digest) <= DIGEST_CHARS < len(question)
    for line in trace.splitlines():
        assert line in digest
    assert function in {f.function for f in extract_cues(digest).frames}
