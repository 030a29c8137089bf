"""A symbol name as developers of each language write it, read as Locus stores it.

Stored qualified names join containers with the language's separator (`.`, `::`, `\\`). People
paste names in other forms too: a Go method expression or panic frame
(`(*ClientConn).Invoke`, `google.golang.org/grpc.(*ClientConn).Invoke`), a Javadoc or KDoc
link (`XmlMapper#readValue`), a JVM binary name (`FromXmlParser$Feature`, `Outer$1`). Each is
rewritten to the stored form before a symbol search; anything else is left as written.
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


def stored_symbol_name(written: str) -> str:
    """``written`` with its Go receiver expressions, doc-link `#` and JVM binary `$` read as
    the stored qualified names write them."""
    name = _GO_RECEIVER.sub(r"\1", written)
    name = _DOC_MEMBER.sub(".", name)
    return _BINARY_NESTED.sub(".", name)
