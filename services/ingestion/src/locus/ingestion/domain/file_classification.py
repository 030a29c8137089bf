"""Whether a file is worth indexing, and if not, which skip reason applies.

Checks run cheapest first: the path alone (binary extensions, generated or lock-file names,
credentials files), then the size alone (so huge files are never read), then the content.

Credentials never reach an index or a store (a search would serve them to every reader of the
project): files named as credentials are (`.env` and `.env.production`, not `.env.example`;
private keys and key stores; `.netrc`, `.pgpass`, `.git-credentials`, `.htpasswd`, `.pypirc`;
Terraform state), and so is a file whose content opens with a private key (`-----BEGIN RSA
PRIVATE KEY-----`, a PuTTY key) whatever its name. No ignore file re-includes them. A key
written inside code (a test's PEM string) is code and stays; so do certificates and public keys.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from locus.ingestion.domain.model import SkipDecision, SkipReason

BINARY_SNIFF_BYTES = 8 * 1024
HEADER_LINES = 5
# Minified code: a long file whose lines are, on average, far longer than anything hand-written.
MINIFIED_MIN_CHARS = 2_000
MINIFIED_AVERAGE_LINE_CHARS = 1_000

BINARY_EXTENSIONS = frozenset(
    {
        # images
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".icns", ".webp", ".tif", ".tiff",
        ".psd", ".heic", ".avif",
        # documents
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp",
        # archives and packages
        ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".tar", ".jar", ".war",
        ".ear", ".whl", ".egg", ".deb", ".rpm", ".apk", ".dmg", ".iso", ".nupkg", ".gem",
        # compiled code and libraries
        ".exe", ".dll", ".so", ".dylib", ".a", ".lib", ".o", ".obj", ".class", ".pyc", ".pyo",
        ".pyd", ".wasm", ".bin",
        # fonts
        ".woff", ".woff2", ".ttf", ".otf", ".eot",
        # audio and video
        ".mp3", ".mp4", ".m4a", ".wav", ".ogg", ".flac", ".avi", ".mov", ".mkv", ".webm",
        # data stores, serialised arrays and model weights
        ".sqlite", ".sqlite3", ".db", ".parquet", ".avro", ".npy", ".npz", ".pkl", ".pickle",
        ".onnx", ".pt", ".pth", ".safetensors", ".h5", ".hdf5", ".tflite",
    }
)  # fmt: skip

LOCK_FILE_NAMES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "Pipfile.lock",
        "pdm.lock",
        "uv.lock",
        "Cargo.lock",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
        "mix.lock",
        "flake.lock",
        "Podfile.lock",
        "packages.lock.json",
        "pubspec.lock",
        "gradle.lockfile",
    }
)

# File-name patterns of generated code: protobuf/gRPC stubs, minified bundles, source maps.
GENERATED_NAME = re.compile(
    r"""(
        _pb2\.pyi? | _pb2_grpc\.pyi? | \.pb\.(go|cc|h) | _grpc\.pb\.go | _pb\.(js|d\.ts)
        | \.min\.(js|css|mjs) | \.(js|css)\.map
    )$""",
    re.VERBOSE,
)

# Marker lines that tools put at the top of files they write. "Automatically generated" counts
# only where it opens the comment or follows "this file is/was", so prose such as "ops can be
# automatically generated" in a hand-written docstring does not.
GENERATED_HEADER = re.compile(
    r"""
    @generated
    | \bgenerated\b.*\bdo\ not\ edit\b
    | \bdo\ not\ edit\b.*\bgenerated\b
    | ^\W*(automatically|auto)[\s-]?generated\b
    | \b(file|code|module|source)\s+(is|was|has\s+been)\s+(automatically\s+|auto[\s-]?)generated\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


# Files that hold credentials by their name (compared lower-cased).
SECRET_FILE_NAMES = frozenset(
    {
        ".env",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".git-credentials",
        ".htpasswd",
        ".pypirc",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
    }
)
SECRET_EXTENSIONS = frozenset(
    {".env", ".key", ".ppk", ".p12", ".pfx", ".jks", ".keystore", ".tfstate", ".kdbx"}
)
# `.env.<stage>` holds a stage's values; these stages document the variables instead.
_ENV_DOCUMENTATION = frozenset(
    {"example", "examples", "sample", "template", "tmpl", "dist", "defaults", "default", "schema"}
)
# The first line of a private key file: PEM (PKCS#1, #8, SEC1, OpenSSH, encrypted, PGP) or PuTTY.
_PRIVATE_KEY_OPENING = re.compile(
    rb"\A\s*(?:-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:)"
)


def classify(relative_path: str, data: bytes, max_bytes: int) -> SkipReason | None:
    """The reason to skip a file with this path and content, or None if it is indexable."""
    decision = classify_with_detail(relative_path, data, max_bytes)
    return decision.reason if decision is not None else None


def classify_with_detail(relative_path: str, data: bytes, max_bytes: int) -> SkipDecision | None:
    """Like `classify`, with a sentence explaining the decision."""
    return (
        classify_path(relative_path)
        or classify_size(len(data), max_bytes)
        or classify_content(data)
    )


def classify_path(relative_path: str) -> SkipDecision | None:
    """Skip decisions that need only the path: binary extensions and generated file names."""
    name = PurePosixPath(relative_path).name
    suffix = PurePosixPath(name.lower()).suffix
    if suffix in BINARY_EXTENSIONS:
        return SkipDecision(SkipReason.BINARY, f"the extension {suffix} denotes a binary format")
    if name in LOCK_FILE_NAMES:
        return SkipDecision(SkipReason.GENERATED, f"{name} is a dependency lock file")
    if GENERATED_NAME.search(name):
        return SkipDecision(
            SkipReason.GENERATED, f"{name} is named like generated code (stub, bundle or map)"
        )
    if _holds_credentials(name.lower()):
        return SkipDecision(
            SkipReason.SECRET,
            f"{name} is named like a credentials file (environment values, a private key or "
            "key store, passwords); Locus never indexes credentials",
        )
    return None


def _holds_credentials(name: str) -> bool:
    if name in SECRET_FILE_NAMES:
        return True
    if name.startswith(".env."):
        return not set(name.split(".")[2:]) & _ENV_DOCUMENTATION
    if name.endswith(".tfstate.backup"):
        return True
    return PurePosixPath(name).suffix in SECRET_EXTENSIONS


def classify_size(size_bytes: int, max_bytes: int) -> SkipDecision | None:
    """OVERSIZE when `size_bytes` exceeds `max_bytes`; callers can check before reading."""
    if size_bytes > max_bytes:
        return SkipDecision(
            SkipReason.OVERSIZE,
            f"the file is {size_bytes:,} bytes, over the {max_bytes:,}-byte limit per file",
        )
    return None


def classify_content(data: bytes) -> SkipDecision | None:
    """Skip decisions that need the content: a private key, binary, undecodable, generated or
    minified."""
    if _PRIVATE_KEY_OPENING.match(data, 0, 4096):
        return SkipDecision(
            SkipReason.SECRET, "the file is a private key; Locus never indexes credentials"
        )
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return SkipDecision(
            SkipReason.BINARY, f"a NUL byte occurs in the first {BINARY_SNIFF_BYTES:,} bytes"
        )
    try:
        # utf-8-sig accepts (and drops) a leading byte-order mark.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return SkipDecision(
            SkipReason.UNDECODABLE, f"the content is not valid UTF-8 (byte offset {error.start})"
        )
    for line_number, line in enumerate(text.splitlines()[:HEADER_LINES], start=1):
        if GENERATED_HEADER.search(line):
            return SkipDecision(
                SkipReason.GENERATED,
                f"line {line_number} marks the file as generated: {line.strip()[:120]!r}",
            )
    if len(text) >= MINIFIED_MIN_CHARS:
        average_line_chars = len(text) / max(1, text.count("\n") + 1)
        if average_line_chars > MINIFIED_AVERAGE_LINE_CHARS:
            return SkipDecision(
                SkipReason.GENERATED,
                f"lines average {average_line_chars:,.0f} characters, which looks minified",
            )
    return None
