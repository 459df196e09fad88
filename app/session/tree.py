"""`SessionTree`: the id/parentId forest of one session, built incrementally, with Pi's rules.

- roots: `parentId` null, missing parent, or parent equal to the entry's own id; roots stay in file order.
- children sort by timestamp, ties in file order (entries without a valid timestamp sort after the rest).
- the leaf is the last entry in the file; the active path is root -> leaf.
- duplicate ids: the later line wins, the earlier one leaves the tree (reported).
- parent cycles (Pi loops forever on them) are broken at their earliest entry in file order (reported).
No recursion anywhere: a 200,000-deep chain is an ordinary input.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pitree.session.dialect_omp import OMP, session_name
from pitree.session.entries import Columns, Node
from pitree.session.search_index import SearchIndex, entry_text


@dataclass(frozen=True, slots=True)
class Problem:
    """Something pitree noticed about a line that it still read (or a tree repair it made)."""

    line: int
    message: str


@dataclass(slots=True)
class Skipped:
    """A line that is not an entry, and why."""

    line: int
    reason: str


def _same(values: tuple[Any, ...], value: Any) -> Any:
    """The item of `values` equal to `value` (that very object), else `value`."""
    return values[values.index(value)] if value in values else value


def _remove_child(parent: Node, child: Node) -> None:
    kids = parent._kids
    if kids is child:
        parent._kids = None
    elif type(kids) is list:
        kids.remove(child)
        if len(kids) == 1:
            parent._kids = kids[0]


_APPLIED = frozenset({"label", "session_info", "title_change"})  # the entries whose meta `add` applies


def _sort_key(node: Node) -> tuple[float, int]:
    ts = node.ts
    return (math.inf if ts != ts else ts, node.idx)


@dataclass
class SessionTree:
    """The forest of entries of one session file. Built by `load.SessionBuilder`."""

    header: dict[str, Any] | None = None
    version: float = 3
    nodes: list[Node] = field(default_factory=list)  # every entry line in file order (duplicates included)
    at: Columns = field(default_factory=Columns)  # where each of `nodes` is in the file, its text..., by `Node.idx`
    by_id: dict[str, Node] = field(default_factory=dict)
    roots: list[Node] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    label_times: dict[str, float] = field(default_factory=dict)
    name: str | None = None
    dialect: str = "pi"  # who wrote the file: "pi" or "omp" (oh-my-pi; `dialect_omp` decides)
    title_slot: dict[str, Any] | None = None  # oh-my-pi's line-1 title slot, as last read
    title_changed: str | None = None  # oh-my-pi: the latest title_change's title (its name without slot or header)
    skipped: list[Skipped] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # toolCall id -> the call (the last one read, as Pi's map keeps it): its (id, text) pair when the texts are
    # on the entries, else the assistant turn that made it (`Node.call_text`)
    calls: dict[str, tuple[str, str] | Node] = field(default_factory=dict)
    _waiting: dict[str, list[Node]] = field(default_factory=dict)  # missing parent id -> orphans
    _dropped: set[int] = field(default_factory=set)  # idx of duplicate losers
    _orphans_reported: set[int] = field(default_factory=set)
    generation: int = 0  # bumped on every change, for caches
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # such caches, dying with the tree
    _search: SearchIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._search = SearchIndex(self)

    # ---- reading -------------------------------------------------------------------------------------------

    @property
    def leaf(self) -> Node | None:
        """The last entry in the file, which is where Pi continues."""
        return next((node for node in reversed(self.nodes) if node.idx not in self._dropped), None)

    @property
    def entry_count(self) -> int:
        return len(self.nodes)

    def get(self, entry_id: str | None) -> Node | None:
        return self.by_id.get(entry_id) if entry_id is not None else None

    def resolve(self, id_or_prefix: str) -> Node:
        """The entry with this id, or the only one whose id starts with it; ValueError otherwise."""
        node = self.by_id.get(id_or_prefix)
        if node is not None:
            return node
        if id_or_prefix:
            # The ids copied at once (one call, under the interpreter lock): the explorer looks in a thread while
            # live appends may add ids.
            keys = [key for key in list(self.by_id) if key.startswith(id_or_prefix)]
            matches = [n for n in map(self.by_id.get, keys) if n is not None]
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                shown = ", ".join(sorted(m.id for m in matches[:5]))
                raise ValueError(f"id prefix {id_or_prefix!r} is ambiguous ({len(matches)} entries: {shown}…)")
        raise ValueError(f"no entry with id {id_or_prefix!r} in this session")

    def branch(self, node: Node | None, after: Node | None = None) -> list[Node]:
        """Pi's getBranch: root -> node, inclusive; with `after` (an ancestor of `node`), only the entries below it."""
        # Made at its final size: a list grown by appends left its outgrown copies' space taken (~30 MB at 1M).
        size, walk = 0, node
        while walk is not None and walk is not after:
            size, walk = size + 1, walk.parent
        path: list[Node] = [None] * size  # type: ignore[list-item]
        for i in range(size - 1, -1, -1):
            path[i] = node  # type: ignore[assignment]
            node = node.parent  # type: ignore[union-attr]
        return path

    def active_path(self) -> list[Node]:
        return self.branch(self.leaf)

    def active_ids(self) -> set[str]:
        return {n.id for n in self.active_path()}

    def common_ancestor(self, a: Node | None, b: Node | None) -> Node | None:
        """The deepest entry on both root paths (Pi's collectEntriesForBranchSummary rule). Both ends are brought to
        the same depth, then walked up together: a million-deep path costs two walks, not a million-entry set."""
        if a is None or b is None:
            return None
        da, db = self.depth(a), self.depth(b)
        x: Node | None = a
        y: Node | None = b
        for _ in range(da - db):
            x = x.parent if x is not None else None
        for _ in range(db - da):
            y = y.parent if y is not None else None
        while x is not None and y is not None and x is not y:
            x, y = x.parent, y.parent
        return x if x is y else None

    def leaves(self) -> list[Node]:
        """Entries without children (the tips of every branch), in file order."""
        return [n for n in self.iter_tree() if not n.children]

    def leaf_count(self) -> int:
        """`len(self.leaves())` in one pass over the nodes, without walking the tree (the status bar's count)."""
        return sum(1 for n in self.nodes if n._kids is None and n.idx not in self._dropped)

    def iter_tree(self) -> Iterator[Node]:
        """Every node in the tree (duplicate losers excluded), pre-order, children in Pi's order."""
        stack = list(reversed(self.roots))
        while stack:
            node = stack.pop()
            yield node
            if node.children:
                stack.extend(reversed(node.children))

    def depth(self, node: Node) -> int:
        d = 0
        while node.parent is not None:
            node, d = node.parent, d + 1
        return d

    def is_dropped(self, node: Node) -> bool:
        return node.idx in self._dropped

    @property
    def dropped_count(self) -> int:
        """How many entries a later duplicate id has replaced so far."""
        return len(self._dropped)

    def call_text(self, call_id: Any) -> str | None:
        """Pi's formatted text of the tool call with this id, when an assistant turn made it."""
        known = self.calls.get(call_id) if isinstance(call_id, str) else None  # any JSON value can be there
        if known is None:
            return None
        return known[1] if isinstance(known, tuple) else known.call_text(call_id)

    def row_text(self, node: Node) -> str:
        """Pi's row text; a tool result shows the call it answers when that call is known."""
        if node.role == "toolResult":
            call = self.call_text(node.call_id)
            if call is not None:
                return call
        return node.text

    def context_text(self, node: Node) -> str:
        """The row text, except that an assistant turn holding only tool calls names them: Pi's row says
        `assistant: (no content)` (and `/tree` hides such turns), which tells nothing in a list of what
        the model was sent (the context view)."""
        calls = node.calls
        if calls and node.role == "assistant" and node.text == "assistant: (no content)":
            return "assistant: " + " ".join(text for _, text in calls)
        return self.row_text(node)

    def search_text(self, node: Node) -> str:
        """Lower-case text that search matches: the row as shown, label, role, tool calls, summaries."""
        text = entry_text(self, node)
        label = self.labels.get(node.id)
        return f"{text} {label.lower()}" if label else text

    @property
    def search_index(self) -> SearchIndex:
        """Every entry's search text in one buffer (`search_index.SearchIndex`), filled on first use."""
        return self._search

    # ---- building ------------------------------------------------------------------------------------------

    def add(self, new_nodes: Iterable[Node]) -> list[Node]:
        """Link new entries (in file order) into the tree. Returns the nodes that joined the tree."""
        added: list[Node] = []
        keep, by_id, waiting, tool_calls = self.nodes.append, self.by_id, self._waiting, self.calls
        prev: Node | None = None  # the entry added last, which is `by_id`'s for its id (the later line wins)
        for node in new_nodes:
            keep(node)
            nid = node.id
            old = by_id.setdefault(nid, node)
            if old is not node:
                self._drop_duplicate(old, node)
                by_id[nid] = node
            pid = node.parent_id
            # Most entries' parent is the entry written just before: found without a lookup among all the ids.
            parent = prev if prev is not None and prev.id == pid else by_id.get(pid) if pid is not None else None
            prev = node
            # `_link`'s commonest case inline (an only child of a known parent): it is most entries of a session
            if parent is not None and pid != nid and parent._kids is None:
                node.parent = parent
                node.parent_id = parent.id  # the same string object as the parent's id: one copy in memory
                parent._kids = node
            else:
                self._link(node)
            if waiting:
                orphans = waiting.pop(nid, None)
                if orphans:
                    self._adopt(node, orphans)
            calls = node._calls  # `calls`, or a tool result's `call_id`
            if calls is None:
                pass
            elif node._tag[1] == "toolResult":  # `role`: one copy of the id string, the call's
                above = node.parent._calls if node.parent is not None else None
                if type(above) is str and above == calls:  # the entry above's: the turn's one call (most results)
                    node._calls = above
                elif isinstance(calls, str) and (known := tool_calls.get(calls)) is not None:
                    if isinstance(known, tuple):
                        node._calls = known[0]
                    else:
                        ids = known._calls
                        node._calls = ids if type(ids) is str else _same(ids, calls)  # its call ids
            elif type(calls) is str:  # one call, its text in `at.call_texts`: most turns
                tool_calls[calls] = node
            elif type(calls[0]) is tuple:  # (id, text) pairs: the texts on the entry
                for pair in calls:
                    if isinstance(pair[0], str):
                        tool_calls[pair[0]] = pair
            else:
                for call_id in calls:
                    if isinstance(call_id, str):
                        tool_calls[call_id] = node
            meta = node.meta if node.type in _APPLIED else None  # a lookup only for the few that need it
            if meta is not None:
                if node.type == "label":
                    self._apply_label(node, meta)
                elif node.type == "session_info":
                    name = meta.get("name")
                    # Pi's getSessionName: the latest session_info decides, an empty name clears it.
                    self.name = name.strip() or None if isinstance(name, str) else None
                elif node.type == "title_change":
                    self._title_change(meta.get("title"))
            added.append(node)
        self.generation += 1
        return added

    def _title_change(self, title: Any) -> None:
        if isinstance(title, str) and title.strip():
            self.title_changed = title.strip()
        self.dialect = OMP
        self.name = session_name(self.header, self.title_slot, self.title_changed)

    def set_title_slot(self, slot: dict[str, Any]) -> None:
        """oh-my-pi's title slot (read at load, or rewritten in place since): it names the session."""
        self.title_slot = slot
        self.dialect = OMP
        self.name = session_name(self.header, slot, self.title_changed)
        self.generation += 1

    def _apply_label(self, node: Node, meta: dict[str, Any]) -> None:
        if not self.apply_label(meta.get("targetId"), meta.get("label"), node.ts):
            self.problems.append(Problem(node.line, "label entry without a string targetId"))

    def apply_label(self, target: Any, label: Any, ts: float | None) -> bool:
        """A label entry's effect, as Pi's: a label names `target`, an empty one clears it (False: no string
        target, nothing done)."""
        if not isinstance(target, str):
            return False
        if label:
            self.labels[target] = label if isinstance(label, str) else str(label)
            self.label_times[target] = ts if ts is not None else math.nan
        else:
            self.labels.pop(target, None)
            self.label_times.pop(target, None)
        return True

    def _link(self, node: Node) -> None:
        pid = node.parent_id
        parent = self.by_id.get(pid) if pid is not None else None
        if pid is None or pid == node.id or parent is None:
            if pid is not None and pid == node.id:
                self.problems.append(Problem(node.line, f"entry {node.id} is its own parent (shown as a root)"))
            elif pid is not None:
                self._waiting.setdefault(pid, []).append(node)
            node.parent = None
            self.roots.append(node)
            return
        node.parent = parent
        node.parent_id = parent.id  # the same string object as the parent's id: one copy in memory
        self._insert_child(parent, node)

    def _insert_child(self, parent: Node, node: Node) -> None:
        children = parent._kids
        if children is None:
            parent._kids = node
            return
        if type(children) is not list:
            children = parent._kids = [children]  # type: ignore[list-item]
        key = _sort_key(node)
        if key >= _sort_key(children[-1]):
            children.append(node)
        else:
            bisect.insort(children, node, key=_sort_key)

    def _adopt(self, parent: Node, orphans: list[Node]) -> None:
        """Entries that named `parent` before it appeared in the file move from the roots under it."""
        ancestors = {id(n) for n in self.branch(parent)}
        moved = False
        for orphan in orphans:
            if id(orphan) in ancestors:
                self.problems.append(
                    Problem(orphan.line, f"parent cycle through {orphan.id} broken: it is shown as a root")
                )
                continue
            self.roots.remove(orphan)
            orphan.parent = parent
            self._insert_child(parent, orphan)
            moved = True
        if moved:
            self.roots.sort(key=lambda n: n.idx)

    def _drop_duplicate(self, old: Node, new: Node) -> None:
        self.problems.append(Problem(new.line, f"duplicate id {new.id} (also on line {old.line}): the later line wins"))
        self._dropped.add(old.idx)
        if old.parent is not None:
            _remove_child(old.parent, old)
        elif old in self.roots:
            self.roots.remove(old)
        else:
            for orphans in self._waiting.values():
                if old in orphans:
                    orphans.remove(old)
        # Children of the old entry name the id, which now means the new entry.
        if old.children:
            children = list(old.children)
            for child in children:
                child.parent = None
            self._waiting.setdefault(new.id, []).extend(children)
            self.roots.extend(children)
            old._kids = None
        if old.parent_id is not None:
            waiting = self._waiting.get(old.parent_id)
            if waiting and old in waiting:
                waiting.remove(old)

    def finish_orphans(self) -> None:
        """Report entries whose parent never appeared (after a full load); every note then in file order."""
        for pid, orphans in self._waiting.items():
            for orphan in orphans:
                if orphan.idx in self._orphans_reported:
                    continue
                self._orphans_reported.add(orphan.idx)
                self.problems.append(
                    Problem(orphan.line, f"parent {pid} of {orphan.id} is not in the file (shown as a root)")
                )
        self.problems.sort(key=lambda p: p.line)  # however the file was read: whole, in pieces, in two processes
