"""A file's decoded text with the line and byte arithmetic that tree-sitter nodes need."""

import bisect

from tree_sitter import Node

from locus.ast.domain.errors import UndecodableSource

_BYTE_ORDER_MARK = "\ufeff"


class SourceText:
    """UTF-8 source split into lines exactly as tree-sitter counts them (on `\\n` only)."""

    def __init__(self, relative_path: str, data: bytes) -> None:
        try:
            decoded = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise UndecodableSource(relative_path, str(error)) from error
        lines = decoded.removeprefix(_BYTE_ORDER_MARK).split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        self.data = data
        self.lines: tuple[str, ...] = tuple(lines)
        self.line_count = len(lines)
        starts = [0]
        position = data.find(b"\n")
        while position != -1:
            starts.append(position + 1)
            position = data.find(b"\n", position + 1)
        self._line_start_bytes = starts

    def decode(self, start_byte: int, end_byte: int) -> str:
        text = self.data[start_byte:end_byte].decode("utf-8")
        return text.removeprefix(_BYTE_ORDER_MARK) if start_byte == 0 else text

    def line_of_byte(self, byte: int) -> int:
        return bisect.bisect_right(self._line_start_bytes, byte)

    def line_start_byte(self, line: int) -> int:
        return self._line_start_bytes[line - 1]

    def line_range_text(self, start_line: int, end_line: int) -> str:
        return "\n".join(self.lines[start_line - 1 : end_line])

    def start_line(self, node: Node) -> int:
        return node.start_point.row + 1

    def end_line(self, node: Node) -> int:
        """Last line holding part of the node; a node ending at column 0 ends on the line before."""
        row, column = node.end_point.row, node.end_point.column
        last = row if column == 0 and row > node.start_point.row else row + 1
        return max(self.start_line(node), min(last, self.line_count))


def leaf_tokens(
    node: Node, stop_byte: int, skip: frozenset[str], atomic: frozenset[str]
) -> list[Node]:
    """Leaves of `node` that start before `stop_byte`, in order, without `skip`-typed subtrees;
    `atomic`-typed nodes count as one leaf."""
    tokens: list[Node] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if current.start_byte >= stop_byte or current.type in skip:
            continue
        if current.child_count == 0 or current.type in atomic:
            tokens.append(current)
        else:
            pending.extend(reversed(current.children))
    return tokens


_OPENING_BRACKETS = frozenset({"(", "[", "{"})
_CLOSING_BRACKETS = frozenset({")", "]", "}"})


def normalized_tokens_text(tokens: list[Node], source: SourceText) -> str:
    """Joins tokens with single spaces where the source had any whitespace, but none inside
    brackets' edges or before commas, and drops a trailing comma followed by a line break."""
    parts: list[str] = []
    previous: Node | None = None
    for token in tokens:
        text = source.decode(token.start_byte, token.end_byte)
        if previous is not None:
            gap = source.data[previous.end_byte : token.start_byte]
            if text in _CLOSING_BRACKETS and parts and parts[-1] == "," and b"\n" in gap:
                parts.pop()
            elif (
                gap
                and parts
                and parts[-1] not in _OPENING_BRACKETS
                and text not in _CLOSING_BRACKETS
                and text != ","
            ):
                parts.append(" ")
        parts.append(text)
        previous = token
    return "".join(parts)
