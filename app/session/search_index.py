"""What search matches, for a whole tree at once: every entry's search text in one UTF-8 buffer.

Pi's search is "every whitespace-separated token, lower-cased, is a substring". An entry's text is the row
as shown, the `[toolName]` of a tool result, its role, its tool calls and its summary, each lower-cased and
joined by spaces; entries are separated by a newline. A token holds no whitespace, so it can never match
across two parts or two entries, and finding it in the buffer finds exactly the entries whose own text has
it (UTF-8 is self-synchronizing: a byte match is a character match). Labels change after the fact (a label
entry names an older entry), so they are not in the buffer: they are matched at query time.

The buffer costs its bytes and one int an entry (where it starts), well under a string per entry. A search
is `bytes.find` over the buffer, then one lookup of the owning entry per hit. What matched is one byte per
entry (`Hits`): a set of ints would cost far more for a common word, which matches most entries.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from itertools import compress
from typing import TYPE_CHECKING

from pitree.session.text import js_string

if TYPE_CHECKING:
    from pitree.session.entries import Node
    from pitree.session.tree import SessionTree

BLOCK = 2048  # entries per block of the buffer
CHECK_EACH_BELOW = 2048  # candidates left: later tokens are checked entry by entry, not over the whole buffer


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


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

    The buffer is cut in blocks of `BLOCK` entries, each an immutable `bytes`: one growing buffer would be
    copied as it grows and leave its old copies as holes in the heap."""

    def __init__(self, tree: SessionTree) -> None:
        self.tree = tree
        self._blocks: list[bytes] = []  # block b holds entries b * BLOCK ... (b + 1) * BLOCK - 1
        self._starts: list[array[int]] = []  # for each block, where each of its entries starts in it
        self._open: list[bytes] = []  # the last block's texts while it is not full (it is made again from them)
        self._count = 0
        self._lock = threading.Lock()  # the explorer prepares it in a worker while the UI may search

    def __len__(self) -> int:
        return self._count

    def update(self) -> None:
        """Index the entries the tree gained since the last call (all of them the first time)."""
        with self._lock:
            tree = self.tree
            nodes = tree.nodes
            if self._count == len(nodes):
                return
            parts = self._open
            if parts:  # the last block is not full: it is made again with the new entries
                self._blocks.pop()
                self._starts.pop()
            for i in range(self._count, len(nodes)):
                parts.append(_utf8(entry_text(tree, nodes[i])))
                if len(parts) == BLOCK:
                    self._close(parts)
                    parts = []
            if parts:
                self._close(parts)
            self._open = parts
            self._count = len(nodes)

    def _close(self, parts: list[bytes]) -> None:
        starts = array("i")
        pos = 0
        for part in parts:
            starts.append(pos)
            pos += len(part) + 1
        self._blocks.append(b"\n".join(parts) + b"\n")
        self._starts.append(starts)

    def matching(self, tokens: list[str]) -> Hits:
        """The entries (by `Node.idx`, duplicates' losers included) that hold every token (lower-case)."""
        self.update()
        with self._lock:
            size = self._count
            found: Hits | None = None
            for token in tokens:
                if found is not None and len(found) < CHECK_EACH_BELOW:
                    found = Hits.of(size, (i for i in found if self._has(i, token)))
                else:
                    hits = self._scan(token)
                    found = hits if found is None else found & hits
                if not found:
                    break
            return found if found is not None else Hits(bytearray(size))

    def _scan(self, token: str) -> Hits:
        """Entries whose text or label holds `token`: `find` over each block, one hit per entry."""
        needle = _utf8(token)
        flags = bytearray(self._count)
        for b, (blob, starts) in enumerate(zip(self._blocks, self._starts, strict=True)):
            base, last = b * BLOCK, len(starts) - 1
            find = blob.find
            pos = find(needle)
            while pos >= 0:
                i = bisect_right(starts, pos) - 1
                flags[base + i] = 1
                if i >= last:
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
        blob, starts = self._blocks[b], self._starts[b]
        end = starts[j + 1] if j + 1 < len(starts) else len(blob)
        if blob.find(_utf8(token), starts[j], end) >= 0:
            return True
        node = self.tree.nodes[i]
        label = self.tree.labels.get(node.id)
        return label is not None and token in label.lower()
