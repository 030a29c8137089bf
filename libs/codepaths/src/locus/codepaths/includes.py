"""Which file of a project a C or C++ `#include` names when no file sits where it points.

A compiler looks for `#include "fmt/format.h"` beside the including file, then in the include
directories the build passes (`-I include`); `#include <nlohmann/json.hpp>` in those directories
only. The ast service names a quoted include's module by the first rule (the path joined to the
includer's directory) and an angle include's by its path in brackets. The build's include
directories are not known to Locus, so when that path is no file, every directory of the project
counts as one: the files whose path ends with the path as written are the candidates, and of
those the ones nearest the includer (the most leading directories in common) are taken. Several
equally near are all kept: an impact answer would rather name one header too many than miss one.
An angle include of the C and C++ standard libraries' headers or the common system ones
(`<stddef.h>`, `<vector>`, `<sys/types.h>`) is the compiler's (``is_system_header``; the ast
service does not record it): a project's shim of the same name (a kernel test harness's
`include/linux/stddef.h`) is not what it names.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable

# The languages whose imports are includes (as ingestion and ast name them).
INCLUDE_LANGUAGES = frozenset({"c", "cpp"})

_C_STANDARD = """
assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal
stdalign stdarg stdatomic stdbit stdbool stdckdint stddef stdint stdio stdlib stdnoreturn
string tgmath threads time uchar wchar wctype
"""
_CPP_STANDARD = """
algorithm any array atomic barrier bit bitset cassert ccomplex cctype cerrno cfenv cfloat
charconv chrono cinttypes ciso646 climits clocale cmath codecvt compare complex concepts
condition_variable coroutine csetjmp csignal cstdalign cstdarg cstdbool cstddef cstdint
cstdio cstdlib cstring ctgmath ctime cuchar cwchar cwctype deque exception execution
expected filesystem flat_map flat_set format forward_list fstream functional future
generator initializer_list iomanip ios iosfwd iostream istream iterator latch limits list
locale map mdspan memory memory_resource mutex new numbers numeric optional ostream print
queue random ranges ratio regex scoped_allocator semaphore set shared_mutex
source_location span spanstream sstream stack stacktrace stdexcept stdfloat stop_token
streambuf string string_view strstream syncstream system_error thread tuple type_traits
typeindex typeinfo unordered_map unordered_set utility valarray variant vector version
"""
_SYSTEM = """
unistd fcntl pthread dirent dlfcn poll sched semaphore strings syslog termios utime netdb
pwd grp regex glob libgen malloc memory alloca windows io direct process winsock2 ws2tcpip
intrin immintrin emmintrin xmmintrin pmmintrin tmmintrin smmintrin nmmintrin wmmintrin
arm_neon endian byteswap execinfo signal spawn wordexp fnmatch ftw iconv langinfo nl_types
search ucontext
"""
# What an include with one of these names names is the compiler's or the system's.
SYSTEM_HEADERS = frozenset(
    [f"{name}.h" for name in (_C_STANDARD + " " + _SYSTEM).split()] + _CPP_STANDARD.split()
)
# Directories of system headers (`<sys/stat.h>`, `<netinet/in.h>`).
_SYSTEM_DIRECTORIES = ("sys/", "arpa/", "netinet/", "bits/")


def written_include(target_module: str, includer_path: str) -> str:
    """The path an include was written with, from the module the ast service gave it:
    `bench/dom/simdjson.h` included by `bench/dom/parse.cpp` was written `simdjson.h`; an angle
    include's module is its path in brackets (`<fmt/core.h>` -> `fmt/core.h`). An include that
    climbed out of its directory (`../x.h`) keeps its module."""
    if target_module.startswith("<") and target_module.endswith(">"):
        return target_module[1:-1]
    directory = posixpath.dirname(includer_path)
    if directory and target_module.startswith(directory + "/"):
        return target_module[len(directory) + 1 :]
    return target_module


class IncludeDirectories:
    """The files of one project, by file name, to resolve includes through any directory."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            self._by_name[posixpath.basename(path)].append(path)

    def targets(self, target_module: str, includer_path: str) -> list[str]:
        """The paths an include with ``target_module`` in ``includer_path`` names through an
        include directory: the nearest to the includer (sorted by path among equals); [] when
        none."""
        written = written_include(target_module, includer_path)
        if not written:
            return []
        suffix = "/" + written
        matches = [
            path
            for path in self._by_name.get(posixpath.basename(written), ())
            if (path == written or path.endswith(suffix)) and path != includer_path
        ]
        if not matches:
            return []
        nearness = {path: _shared_directories(path, includer_path) for path in matches}
        nearest = max(nearness.values())
        return sorted(path for path in matches if nearness[path] == nearest)


def is_system_header(written: str) -> bool:
    """Whether an angle include written ``written`` names a header of the compiler or the
    system."""
    return written in SYSTEM_HEADERS or written.startswith(_SYSTEM_DIRECTORIES)


def _shared_directories(path: str, other: str) -> int:
    """How many leading directories two file paths have in common."""
    first, second = path.split("/")[:-1], other.split("/")[:-1]
    shared = 0
    while shared < min(len(first), len(second)) and first[shared] == second[shared]:
        shared += 1
    return shared
