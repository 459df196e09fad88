"""What search matches, for a whole tree at once: every entry's search text in one UTF-8 buffer.

Pi's search is "every whitespace-separated token, lower-cased, is a substring". An entry's text is the row
as shown, the `[toolName]` of a tool result, its role, its tool calls and its summary, each lower-cased and
joined by spaces; entries are separated by a newline (a newline in a text is stored as a space). A token
holds no whitespace, so it can never match across two parts or two entries, and finding it in the buffer
finds exactly the entries whose own text has it (UTF-8 is self-synchronizing: a byte match is a character
match). Labels change after the fact (a label entry names an older entry), so they are not in the buffer: they
are matched at query time.

The buffer costs its bytes and one int an entry (where it starts), well under a string per entry. A search
is `bytes.find` over each block of the buffer and one lookup of the owning entry per hit; a block where the
token is common is marked in C instead (`_marked`: each hit and the rest of its line become one byte, the
lines then one byte each), so a common word costs a pass over the block, not a Python step per entry. What
matched is one byte per entry (`Hits`): a set of ints would cost far more for a common word, which matches most
entries.
"""

from __future__ import annotations

import re
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from itertools import compress
from typing import TYPE_CHECKING, overload

from pitree.cache_paths import cache_root
from pitree.session.spill import Spill
from pitree.session.text import js_string

if TYPE_CHECKING:
    from pitree.session.entries import Node
    from pitree.session.tree import SessionTree

BLOCK = 2048  # entries per block of the buffer
MARK_FROM = 32  # hits in a block after which the rest of it is marked in C (`_marked`), not found one by one,
MARK_GAIN = 64  # when at the pace so far this many more are to come (marking costs a pass over the rest)
_HIT = b"\x01"  # what `_marked` turns a hit into: a block holding this byte is searched hit by hit
_NOT_MARKS = bytes(b for b in range(256) if b not in (0x01, 0x0A))  # all but the hit byte and the newline
_MARKS_TO_FLAGS = bytes.maketrans(b"\n", b"\0")
CHECK_EACH_BELOW = 2048  # candidates left: later tokens are checked entry by entry, not over the whole buffer


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _marked(block: bytes, pattern: re.Pattern[bytes]) -> bytes | None:
    """One byte per line of `block` (every line ends in a newline): 1 where the line has `pattern`'s token, else
    0; None when the block holds the hit byte itself. `pattern` is the token and the rest of its line, so
    each line that has the token becomes one hit byte and its newline, whatever the number of hits in it."""
    if _HIT in block:
        return None
    lines = pattern.sub(_HIT, block).translate(None, _NOT_MARKS)
    return lines.replace(_HIT + b"\n", _HIT).translate(_MARKS_TO_FLAGS)


def entry_text(tree: SessionTree, node: Node) -> str:
    """The lower-case search text of one entry, without its label."""
    row = tree.row_text(node)
    parts = [row]
    if row is not node.text and node.role == "toolResult":
        parts.append(node.text)  # `[toolName]`
    if node.role:
        parts.append(node.role)
    if node.calls:
        parts.extend(text for _, text in node.calls)
    meta = node.meta
    if meta:
        summary = meta.get("summary")
        if summary is not None:
            parts.append(summary if isinstance(summary, str) else str(summary))
        if node.type == "compaction":
            parts.append("compaction")
        elif node.type == "context_edit":  # Pi 1.6: `context edit omit|replace <targetId>`
            target = meta.get("targetId")
            parts.append(f"context edit {'omit' if meta.get('omit') else 'replace'} {js_string(target)}")
    return " ".join(parts).lower()


class Hits:
    """The entries a search matched, by `Node.idx`: `flags[idx]` is 1 for a match, 0 otherwise (entries added
    to the tree after the search are not in it). Tests membership, counts and iterates like a set of ints."""

    __slots__ = ("flags",)

    def __init__(self, flags: bytearray) -> None:
        self.flags = flags

    @classmethod
    def of(cls, size: int, indices: Iterable[int]) -> Hits:
        flags = bytearray(size)
        for i in indices:
            flags[i] = 1
        return cls(flags)

    def __contains__(self, idx: object) -> bool:
        return isinstance(idx, int) and 0 <= idx < len(self.flags) and self.flags[idx] == 1

    def __len__(self) -> int:
        return self.flags.count(1)

    def __bool__(self) -> bool:
        return 1 in self.flags

    def __iter__(self) -> Iterator[int]:
        """Matched entries in file order."""
        return compress(range(len(self.flags)), self.flags)

    def __and__(self, other: Hits) -> Hits:
        size = len(self.flags)
        both = int.from_bytes(self.flags, "little") & int.from_bytes(other.flags, "little")
        return Hits(bytearray(both.to_bytes(size, "little")))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Hits):
            return self.flags.rstrip(b"\0") == other.flags.rstrip(b"\0")
        if isinstance(other, set | frozenset):
            return set(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Hits({sorted(self)!r})"


class SearchIndex:
    """The search texts of `tree.nodes`, by file position (`Node.idx`); `update` takes in entries added since.

    The buffer is cut in blocks of `BLOCK` entries. A full block is written to a `Spill` (a file with no name:
    at 1,000,000 entries the buffer is ~100 MB, which a search reads in whole and nothing else reads); only the
    last block, while it is not full, stays in memory, made again from its texts as entries arrive."""

    def __init__(self, tree: SessionTree, spill: Spill | None = None) -> None:
        self.tree = tree
        self._spill = spill if spill is not None else Spill(cache_root())
        self._keys: list[int] = []  # the spill's key of each full block: block b holds entries b * BLOCK ...
        self._starts: list[array[int]] = []  # for each block (the open one last), where each entry starts in it
        self._open: list[bytes] = []  # the last block's texts while it is not full
        self._tail = b""  # those texts joined
        self._count = 0
        self._lock = threading.Lock()  # the explorer prepares it in a worker while the UI may search

    def __len__(self) -> int:
        return self._count

    def update(self, pace: Callable[[], None] | None = None) -> None:
        """Index the entries the tree gained since the last call (all of them the first time); `pace()`, when
        given, is called after each block (a background build waits there while the user types)."""
        with self._lock:
            tree = self.tree
            nodes = tree.nodes
            if self._count == len(nodes):
                return
            parts = self._open
            if parts:  # the last block is not full: it is made again with the new entries
                self._starts.pop()
            for i in range(self._count, len(nodes)):
                parts.append(_utf8(entry_text(tree, nodes[i])).replace(b"\n", b" "))
                if len(parts) == BLOCK:
                    self._keys.append(self._spill.put(self._join(parts)))
                    parts = []
                    if pace is not None:
                        pace()
            self._tail = self._join(parts) if parts else b""
            self._open = parts
            self._count = len(nodes)

    def _join(self, parts: list[bytes]) -> bytes:
        starts = array("i")
        pos = 0
        for part in parts:
            starts.append(pos)
            pos += len(part) + 1
        self._starts.append(starts)
        return b"\n".join(parts) + b"\n"

    def _block(self, b: int, start: int = 0, end: int | None = None) -> bytes:
        """Block b's bytes, or `start:end` of them."""
        if b < len(self._keys):
            return self._spill.get(self._keys[b], start, end)
        return self._tail[start:end] if start or end is not None else self._tail

    @overload
    def matching(self, tokens: list[str]) -> Hits: ...

    @overload
    def matching(self, tokens: list[str], cancelled: Callable[[], bool]) -> Hits | None: ...

    def matching(self, tokens: list[str], cancelled: Callable[[], bool] | None = None) -> Hits | None:
        """The entries (by `Node.idx`, duplicates' losers included) that hold every token (lower-case); None
        when `cancelled()` turned true (it is checked between blocks)."""
        self.update()
        with self._lock:
            size = self._count
            found: Hits | None = None
            for token in tokens:
                if found is not None and len(found) < CHECK_EACH_BELOW:
                    found = Hits.of(size, (i for i in found if self._has(i, token)))
                else:
                    hits = self._scan(token, cancelled)
                    if hits is None:
                        return None
                    found = hits if found is None else found & hits
                if not found:
                    break
            return found if found is not None else Hits(bytearray(size))

    def _scan(self, token: str, cancelled: Callable[[], bool] | None = None) -> Hits | None:
        """Entries whose text or label holds `token`: `find` over each block, one hit per entry; the rest of a
        block with many hits is marked at once (`_marked`)."""
        needle = _utf8(token)
        pattern = None if _HIT in needle or b"\n" in needle else re.compile(re.escape(needle) + rb"[^\n]*")
        flags = bytearray(self._count)
        for b, starts in enumerate(self._starts):
            if cancelled is not None and cancelled():
                return None
            base, last = b * BLOCK, len(starts) - 1
            block = self._block(b)
            find = block.find
            pos, found = find(needle), 0
            while pos >= 0:
                i = bisect_right(starts, pos) - 1
                flags[base + i] = 1
                if i >= last:
                    break
                found += 1
                if found == MARK_FROM and pattern is not None and (len(block) - pos) * found > pos * MARK_GAIN:
                    marks = _marked(block[starts[i + 1] :], pattern)
                    if marks is not None and len(marks) == last - i:
                        flags[base + i + 1 : base + last + 1] = marks
                        break
                pos = find(needle, starts[i + 1])  # on from the next entry
        tree = self.tree
        for target, label in tree.labels.items():
            if token in label.lower():
                node = tree.by_id.get(target)
                if node is not None and node.idx < len(flags):
                    flags[node.idx] = 1
        return Hits(flags)

    def _has(self, i: int, token: str) -> bool:
        b, j = divmod(i, BLOCK)
        starts = self._starts[b]
        end = starts[j + 1] if j + 1 < len(starts) else None
        if _utf8(token) in self._block(b, starts[j], end):
            return True
        node = self.tree.nodes[i]
        label = self.tree.labels.get(node.id)
        return label is not None and token in label.lower()
