"""A minimal CHM (ITSF) writer for tests: every file stored uncompressed in content section 0.

The layout 7-Zip and other readers expect: the ITSF header (version 3), header section 0 (the file
size), the directory (an ITSP header and one PMGL listing chunk of ENCINT-coded entries) and the
content, which holds ``::DataSpace/NameList`` (section names: only ``Uncompressed``) and the files.
"""

from __future__ import annotations

import struct
import uuid

_ITSF_GUID_1 = uuid.UUID("7C01FD10-7BAA-11D0-9E0C-00A0C922E6EC").bytes_le
_ITSF_GUID_2 = uuid.UUID("7C01FD11-7BAA-11D0-9E0C-00A0C922E6EC").bytes_le
_ITSP_GUID = uuid.UUID("5D02926A-212E-11D0-9DF9-00A0C922E6EC").bytes_le
_ITSF_HEADER_BYTES = 0x60
_SECTION0_BYTES = 0x18
_ITSP_HEADER_BYTES = 0x54
_PMGL_HEADER_BYTES = 20
_LANGUAGE = 0x0409


def encint(value: int) -> bytes:
    """CHM's variable-length integer: 7 bits a byte, most significant first, high bit = more."""
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(groups))


def _name_list() -> bytes:
    names = ["Uncompressed"]
    body = struct.pack("<H", len(names))
    for name in names:
        body += struct.pack("<H", len(name)) + name.encode("utf-16-le") + b"\0\0"
    words = (len(body) + 2) // 2
    return struct.pack("<H", words) + body


def write_chm(files: dict[str, bytes]) -> bytes:
    """A CHM holding ``files`` (paths like ``index.hhc`` or ``docs/page.html``)."""
    stored: dict[str, bytes] = {"::DataSpace/NameList": _name_list()}
    for path, data in files.items():
        stored["/" + path.lstrip("/")] = data
    content = b""
    entries = b""
    for name in sorted(stored, key=str.lower):
        data = stored[name]
        encoded = name.encode("utf-8")
        entries += encint(len(encoded)) + encoded + encint(0) + encint(len(content))
        entries += encint(len(data))
        content += data
    chunk_size = 0x1000
    while _PMGL_HEADER_BYTES + len(entries) + 2 > chunk_size:
        chunk_size *= 2
    free_space = chunk_size - _PMGL_HEADER_BYTES - len(entries)
    chunk = b"PMGL" + struct.pack("<IIii", free_space, 0, -1, -1) + entries
    chunk += b"\0" * (free_space - 2) + struct.pack("<H", len(stored))
    directory = (
        b"ITSP"
        + struct.pack(
            "<IIIIIiiiiiII",
            1,  # version
            _ITSP_HEADER_BYTES,
            0x0A,
            chunk_size,
            2,  # quickref density
            1,  # index depth: 1 = no index chunks
            -1,  # root index chunk: none
            0,  # first PMGL chunk
            0,  # last PMGL chunk
            -1,
            1,  # directory chunks
            _LANGUAGE,
        )
        + _ITSP_GUID
        + struct.pack("<Iiii", _ITSP_HEADER_BYTES, -1, -1, -1)
        + chunk
    )
    section0_offset = _ITSF_HEADER_BYTES
    directory_offset = section0_offset + _SECTION0_BYTES
    content_offset = directory_offset + len(directory)
    total = content_offset + len(content)
    header = (
        b"ITSF"
        + struct.pack("<IIIII", 3, _ITSF_HEADER_BYTES, 1, 0, _LANGUAGE)
        + _ITSF_GUID_1
        + _ITSF_GUID_2
        + struct.pack(
            "<QQQQQ",
            section0_offset,
            _SECTION0_BYTES,
            directory_offset,
            len(directory),
            content_offset,
        )
    )
    section0 = struct.pack("<IIQII", 0x01FE, 0, total, 0, 0)
    result = header + section0 + directory + content
    assert len(header) == _ITSF_HEADER_BYTES
    assert len(result) == total
    return result


def sitemap(entries: list[tuple[int, str, str]]) -> bytes:
    """An ``.hhc`` table of contents from (depth starting at 1, name, local path) entries in
    order, nested with ``<UL>`` lists as HTML Help Workshop writes them."""
    lines = ["<HTML><HEAD></HEAD><BODY>", '<OBJECT type="text/site properties"></OBJECT>']
    depth = 0
    for level, name, local in entries:
        while depth < level:
            lines.append("<UL>")
            depth += 1
        while depth > level:
            lines.append("</UL>")
            depth -= 1
        lines.append(
            f'<LI> <OBJECT type="text/sitemap"><param name="Name" value="{name}">'
            f'<param name="Local" value="{local}"></OBJECT>'
        )
    lines.extend(["</UL>"] * depth)
    lines.append("</BODY></HTML>")
    return "\n".join(lines).encode()
