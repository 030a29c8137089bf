"""A symbol name as developers of each language write it, read as Locus stores it.

Stored qualified names join containers with the language's separator (`.`, `::`, `\\`). People
paste names in other forms too: a Go method expression or panic frame
(`(*ClientConn).Invoke`, `google.golang.org/grpc.(*ClientConn).Invoke`), a Javadoc or KDoc
link (`XmlMapper#readValue`), a JVM binary name (`FromXmlParser$Feature`, `Outer$1`), a .NET
constructor (`LoggerConfiguration..ctor`), a PHP name as a call writes it
(`\\GuzzleHttp\\Client->request()`), a Ruby method as its docs write it (`Rack::Request#host`,
`Rack::Utils.parse_query`). Each is rewritten to the stored form before a symbol search;
anything else is left as written.
"""

from __future__ import annotations

import re

# `(*T).M`, `(T).M`, `pkg.(*T[K]).M` -> `T.M`, `pkg.T.M`.
_GO_RECEIVER = re.compile(r"\(\*?([A-Za-z_]\w*)(?:\[[^\]]*\])?\)(?=\.)")
# `Type#member` (Javadoc, KDoc, Rust doc links use `::`): the member of the type.
_DOC_MEMBER = re.compile(r"(?<=\w)#(?=[A-Za-z_])")
# `Outer$Inner`, `Outer$1`: a JVM nested or anonymous class. A `$` inside a JavaScript or PHP
# name (`$http`, `a$b`) is before a lower-case letter or at the start, and stays.
_BINARY_NESTED = re.compile(r"(?<=\w)\$(?=[A-Z0-9])")


# `Type..ctor`, `Type..cctor`: a .NET (static) constructor, stored under the type's name.
_DOTNET_CONSTRUCTOR = re.compile(r"(?:^|(?<=\.))([A-Za-z_]\w*)\.\.c?ctor$")
# A member written after `::` containers with `.` (Ruby's singleton methods, `Rack::Utils.x`).
_DOT_AFTER_COLONS = re.compile(r"(?<=\w)\.(?=[A-Za-z_])")


def stored_symbol_name(written: str) -> str:
    """``written`` with its Go receiver expressions, doc-link `#`, JVM binary `$`, .NET
    constructor, PHP call syntax and Ruby member forms read as the stored qualified names
    write them."""
    name = written.removesuffix("()")
    if name.startswith("\\") and len(name) > 1:
        name = name[1:]  # a fully qualified PHP name
    name = name.replace("->", "::")
    name = _GO_RECEIVER.sub(r"\1", name)
    name = _DOTNET_CONSTRUCTOR.sub(r"\1.\1", name)
    member = "::" if "::" in name else "."  # Ruby, PHP, C++ and Rust containers join with `::`
    name = _DOC_MEMBER.sub(member, name)
    if member == "::" and "\\" not in name:
        name = _DOT_AFTER_COLONS.sub("::", name)
    return _BINARY_NESTED.sub(".", name)


def searched_symbol_name(written: str, *, whole_name: bool) -> str:
    """What a symbol search looks for: ``written`` as stored (``stored_symbol_name``), and a
    Rust path's `crate::` left out unless the whole qualified name must match — the crate's
    own name stands there in the stored names (`walkdir::IntoIter::next`), so the rest is a
    substring or a qualified name's end."""
    name = stored_symbol_name(written)
    if not whole_name and name.startswith("crate::"):
        return name.removeprefix("crate::")
    return name
