"""Turning session bytes into a `SessionTree`: header, versions, in-memory migration, incremental feeding.

`SessionBuilder.feed(data, offset, line)` accepts the whole file or, later, just the complete lines the
tailer found appended; `load_bytes` is the one-shot form. Pure: no file access here.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

from pitree.session import dialect_omp
from pitree.session import segment as segment_columns
from pitree.session.entries import (
    SYNTHETIC_ID,
    Node,
    node_class,
    parse_timestamp,
)
from pitree.session.fill import fill_node
from pitree.session.gcpause import BIG, gc_paused
from pitree.session.parse import BOM, iter_lines
from pitree.session.segment import Segment, line_id
from pitree.session.tree import Problem, SessionTree, Skipped

CURRENT_VERSION = 3


def _version_of(header: dict[str, Any] | None) -> float:
    """Pi's `header?.version ?? 1`, compared as JavaScript would (non-numbers never compare true)."""
    if header is None:
        return 1
    value = header.get("version")
    if value is None:
        return 1
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return float("nan")
    return float("nan")


def stable_id(session_id: str, ordinal: int, taken: set[str]) -> str:
    """An 8-hex id derived from the session id and the entry's position: same bytes, same ids."""
    salt = 0
    while True:
        digest = hashlib.blake2b(f"{session_id}:{ordinal}:{salt}".encode(), digest_size=4).hexdigest()
        if digest not in taken:
            return digest
        salt += 1


class SessionBuilder:
    """Feeds parsed lines into a `SessionTree`, applying Pi's v1/v2 migrations in memory.

    `texts_apart`: the tree keeps its entries' texts in its columns (`Columns.texts`, out of memory when big)
    rather than on each entry. A tree that stays open (the explorer, the live tail) wants that; a one-shot
    command that reads every text once and exits is faster with them on the entries."""

    def __init__(self, texts_apart: bool = True) -> None:
        self.tree = SessionTree()
        self.texts_apart = texts_apart
        self.size = 0  # bytes consumed so far (offset of the next line)
        # The bytes consumed, as CRC-32s of consecutive spans: (end offset, crc of the bytes since the span
        # before). A feed extends the last; the tree cache keeps them to check a file's prefix is still what
        # was read. None: not known (segments adopted, until their reader says what they covered).
        self.spans: list[tuple[int, int]] | None = [(0, 0)]
        self.next_line = 1
        self._seen_header = False
        self._no_header_reported = False
        self._migrate_v1 = False
        self._migrate_v2 = False
        self._v1_ids: set[str] = set()
        self._v1_prev: str | None = None
        self._v1_parsed: list[Node | None] = []  # Pi's parsed-entries array, for firstKeptEntryIndex
        self._pending_first_kept: list[tuple[Node, Any]] = []

    # The header decides the version, so the first object is handled before any entry.
    def _take_header(self, obj: dict[str, Any], line: int) -> bool:
        tree = self.tree
        self._seen_header = True
        if obj.get("type") == "session" and isinstance(obj.get("id"), str):
            tree.header = obj
            tree.version = _version_of(obj)
            if dialect_omp.header_is_omp(obj) or tree.title_slot is not None:
                tree.dialect = dialect_omp.OMP
                tree.name = dialect_omp.session_name(obj, tree.title_slot, tree.title_changed)
            self._start_migration()
            return True
        tree.problems.append(
            Problem(
                line,
                "no session header on the first line: Pi treats this file as empty (and would overwrite it)",
            )
        )
        tree.header = None
        has_ids = isinstance(obj.get("id"), str)
        tree.version = CURRENT_VERSION if has_ids else 1
        self._start_migration()
        return False

    def _start_migration(self) -> None:
        version = self.tree.version
        self._migrate_v1 = version < 2
        self._migrate_v2 = version < 3 or self._migrate_v1

    def feed(self, data: bytes, final: bool = True) -> list[Node]:
        """Consume `data`, which starts at byte `self.size`. Returns the nodes added to the tree."""
        with gc_paused(big=len(data) > BIG):
            return self._feed(data, final)

    def _feed(self, data: bytes, final: bool) -> list[Node]:
        new = self._parse(data, final)
        tree = self.tree
        added = tree.add(new)
        if self._pending_first_kept:
            self._resolve_first_kept()
        if final:
            tree.finish_orphans()
        return added

    def _parse(self, data: bytes, final: bool, sent: bool = False) -> list[Node]:
        """Nodes for the entry lines of `data` (skips and notes go to the tree); the tree is not linked. With
        `texts_apart`, their texts go to the tree's columns, unless the nodes are only `sent` (as a segment)."""
        tree = self.tree
        if self.size == 0 and data.startswith(BOM):
            tree.problems.append(Problem(1, "file starts with a UTF-8 byte-order mark (Pi cannot read this header)"))
        new: list[Node] = []
        base_idx = len(tree.nodes)
        slot_end = 0  # the end of oh-my-pi's title slot, when this read it
        for line, offset, length, obj, note in iter_lines(data, self.size, self.next_line, final):
            self.next_line = line + 1
            if obj is None:
                tree.skipped.append(Skipped(line, note or "unparseable"))
                continue
            if note:
                tree.problems.append(Problem(line, note))
            if not self._seen_header:
                if line == 1 and offset == 0 and obj.get("type") == dialect_omp.SLOT_TYPE:
                    slot = dialect_omp.title_slot(obj, length)
                    if slot is not None:  # oh-my-pi's title slot: the header is the next line
                        tree.set_title_slot(slot)
                        slot_end = length + 1
                        continue
                if self._take_header(obj, line):
                    if self._migrate_v1:
                        self._v1_parsed.append(None)
                    continue
            elif obj.get("type") == "session":
                tree.skipped.append(Skipped(line, "another session header (Pi ignores it as an entry)"))
                if self._migrate_v1:
                    self._v1_parsed.append(None)
                continue
            node = self._make_node(obj, base_idx + len(new), line, offset, length)
            new.append(node)
        end = self._end_of(data, final)
        spans = self.spans
        if spans is not None:
            start = 0
            if slot_end and slot_end <= end and spans == [(0, 0)]:
                # a span of its own: omp rewrites the slot in place, so a check of the rest can leave it out
                spans[0] = (slot_end, zlib.crc32(memoryview(data)[:slot_end]))
                spans.append((slot_end, 0))
                start = slot_end
            crc = zlib.crc32(data if start == 0 and end == len(data) else memoryview(data)[start:end], spans[-1][1])
            spans[-1] = (self.size + end, crc)
        self.size += end
        if self.texts_apart and not sent:
            tree.at.take_texts(new)
        return new

    def restore_header(self, header: dict[str, Any] | None, version: float) -> None:
        """Start from a known header (a cached tree): the next lines are entries."""
        self.tree.header, self.tree.version = header, version
        if header is not None and dialect_omp.header_is_omp(header):
            self.tree.dialect = dialect_omp.OMP
            self.tree.name = dialect_omp.session_name(header, self.tree.title_slot, self.tree.title_changed)
        self._seen_header = True
        self._start_migration()

    # ---- parallel loading: a second process parses the back half of a big file ---------------------------

    def continuation(self, offset: int) -> SessionBuilder:
        """A builder for the lines from `offset` on (line numbers relative, from 1), same version rules. It keeps
        the texts on its entries: its segments carry them (`parse_segment`), and putting them apart would encode each
        only to decode it again."""
        other = SessionBuilder(texts_apart=False)
        other.tree.header, other.tree.version = self.tree.header, self.tree.version
        other.tree.dialect = self.tree.dialect
        other._seen_header = True
        other._migrate_v1, other._migrate_v2 = self._migrate_v1, self._migrate_v2
        other.size = offset
        other.spans = None  # the child keeps one CRC over all its chunks (`parse_child`)
        return other

    def parse_segment(self, data: bytes) -> Segment:
        """Parse complete lines into a segment's columns (`segment.py`, marshal-able); skips and notes collect in
        `self.tree`.

        The child that parses a big file's back half calls it once per chunk, each on a fresh `continuation`,
        and sends the segment with `segment_tail` as one frame: no process holds the half's entries at once."""
        return segment_columns.pack(self._parse(data, final=False, sent=True))

    def segment_tail(self, start: int) -> tuple[list[tuple[int, str]], list[tuple[int, str]], int, int, str]:
        """(skips, notes, lines, bytes, dialect) since this builder started at byte `start`, for `adopt_segment`:
        an entry only oh-my-pi writes makes the rest of the file read as its."""
        tree = self.tree
        return (
            [(s.line, s.reason) for s in tree.skipped],
            [(p.line, p.message) for p in tree.problems],
            self.next_line - 1,
            self.size - start,
            tree.dialect,
        )

    def adopt_segment(
        self,
        segment: Segment,
        skipped: list[tuple[int, str]],
        problems: list[tuple[int, str]],
        lines: int,
        size: int,
        dialect: str,
    ) -> list[Node]:
        """Add what `parse_segment` produced for the bytes right after this builder's, in file order."""
        if dialect == dialect_omp.OMP:
            self.tree.dialect = dialect
        with gc_paused(big=size > BIG):
            return self._adopt_segment(segment, skipped, problems, lines, size)

    def _adopt_segment(
        self,
        segment: Segment,
        skipped: list[tuple[int, str]],
        problems: list[tuple[int, str]],
        lines: int,
        size: int,
    ) -> list[Node]:
        tree = self.tree
        shift = self.next_line - 1
        nodes = segment_columns.unpack(segment, tree.at, len(tree.nodes), shift)
        if self.texts_apart:
            tree.at.take_texts(nodes)
        tree.skipped.extend(Skipped(line + shift, reason) for line, reason in skipped)
        tree.problems.extend(Problem(line + shift, shifted_note(message, line, shift)) for line, message in problems)
        self.next_line += lines
        self.size += size
        self.spans = None  # until the adopter says what the bytes were (`tree_cache`, `session_file`)
        return tree.add(nodes)

    @staticmethod
    def _end_of(data: bytes, final: bool) -> int:
        if final:
            return len(data)
        last = data.rfind(b"\n")
        return last + 1

    def _make_node(self, obj: dict[str, Any], idx: int, line: int, offset: int, length: int) -> Node:
        at = self.tree.at
        node = (at.node_type or node_class(at))()
        node.idx = idx
        at.put(idx, line, offset, length, parse_timestamp(obj.get("timestamp")))
        if self._migrate_v2:
            message = obj.get("message")
            if obj.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
                obj = {**obj, "message": {**message, "role": "custom"}}
        fill_node(node, obj)
        if dialect_omp.fill_omp(node, obj, self.tree.dialect == dialect_omp.OMP):
            self.tree.dialect = dialect_omp.OMP
        if self._migrate_v1:
            header = self.tree.header
            sid = header.get("id") if header else "no-header"
            node.id = stable_id(str(sid), idx, self._v1_ids)
            node.flags |= SYNTHETIC_ID
            self._v1_ids.add(node.id)
            node.parent_id = self._v1_prev
            self._v1_prev = node.id
            self._v1_parsed.append(node)
            if node.type == "compaction":
                index = obj.get("firstKeptEntryIndex")
                # Pi assigns ids in file order while it migrates, so an index pointing after the compaction
                # names an entry that has no id yet: Pi leaves firstKeptEntryId unset, and so does pitree.
                if isinstance(index, int | float) and not isinstance(index, bool) and index < len(self._v1_parsed):
                    self._pending_first_kept.append((node, index))
            return node
        entry_id, parent_id = obj.get("id"), obj.get("parentId")
        if isinstance(entry_id, str) and entry_id:
            node.id = entry_id
        else:
            node.id = line_id(line)
            node.flags |= SYNTHETIC_ID
            self.tree.problems.append(
                Problem(line, f"entry has no usable id ({_kind(entry_id)}): pitree calls it {node.id}")
            )
        if parent_id is None or isinstance(parent_id, str):
            node.parent_id = parent_id
        else:
            node.parent_id = None
            self.tree.problems.append(Problem(line, f"parentId is {_kind(parent_id)}: shown as a root"))
        return node

    def _resolve_first_kept(self) -> None:
        still: list[tuple[Node, Any]] = []
        for node, index in self._pending_first_kept:
            i = int(index) if float(index).is_integer() else -1
            if 0 <= i < len(self._v1_parsed):
                target = self._v1_parsed[i]
                if node.meta is not None:
                    node.meta["firstKeptEntryId"] = target.id if target is not None else None
            else:
                still.append((node, index))
        self._pending_first_kept = still


def shifted_note(message: str, line: int, shift: int) -> str:
    """A note made in a segment counted from line 1 that ends with its entry's `line_id`, for the real line (and
    with a negative `shift`, a real line's note as a segment counts it)."""
    old = line_id(line)
    if shift and message.endswith(" " + old):
        return message[: -len(old)] + line_id(line + shift)
    return message


def _kind(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, str):
        return "an empty string"
    return f"a {type(value).__name__}"


def load_bytes(data: bytes) -> SessionTree:
    """Parse a whole session file's bytes into a tree."""
    builder = SessionBuilder()
    builder.feed(data, final=True)
    return builder.tree


def migrate_entry(obj: dict[str, Any], node: Node, tree: SessionTree) -> dict[str, Any]:
    """The entry as Pi holds it after migration: ids, parentId, firstKeptEntryId and role rename applied."""
    out = dict(obj)
    if tree.version < 2 or node.flags & SYNTHETIC_ID:
        out["id"] = node.id
        out["parentId"] = node.parent_id
        if node.type == "compaction" and node.meta is not None and "firstKeptEntryIndex" in out:
            out.pop("firstKeptEntryIndex", None)
            if node.meta.get("firstKeptEntryId") is not None:
                out["firstKeptEntryId"] = node.meta["firstKeptEntryId"]
    if tree.version < 3:
        message = out.get("message")
        if out.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            out["message"] = {**message, "role": "custom"}
    return out
