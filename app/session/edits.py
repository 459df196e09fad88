"""Which `context_edit` entries are in effect on a path, by Pi 1.6's rules (`buildContextEntries`,
`buildSessionProjection`): for each target, the last edit among the entries the projection selects.

`path_edits(path, read)` takes the path as compact `Node`s and a function that reads entries' JSON (the
entry pane's reader); it reads only the last compaction and the path's `context_edit` entries, so a
100,000-entry path costs one walk and a few reads. Pure: no file is opened here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pitree.session.entries import Node

if TYPE_CHECKING:
    from pitree.session.tree import SessionTree

_MISSING = object()
EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})  # what a replacement changes


@dataclass(frozen=True, slots=True)
class Edit:
    """One `context_edit` entry: its id, target and replacement (None: omit; `_MISSING`: not there)."""

    id: str
    target: Any
    replacement: Any

    @property
    def kind(self) -> str:
        """`omit`, `replace`, or `invalid` (no replacement, or one that is not null or an object: Pi's
        projection fails on a missing one and gives undefined content for a non-object)."""
        if self.replacement is None:
            return "omit"
        if isinstance(self.replacement, dict):
            return "replace"
        return "invalid"


@dataclass(frozen=True, slots=True)
class TargetEdit:
    """The edit in effect for one target entry on the path, and whether the target is in the context."""

    edit: Edit
    selected: bool  # the target is among the selected entries (not before the last compaction's kept range)


@dataclass(slots=True)
class PathEdits:
    """The edits of one path (root → leaf): by target, and what each edit entry on the path does."""

    leaf_id: str | None = None
    by_target: dict[str, TargetEdit] = field(default_factory=dict)
    # context_edit entry id -> ("effect" | "superseded" | "no-target" | "unselected", the id it refers to)
    status: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    compaction_id: str | None = None  # the last compaction on the path, when there is one

    def target_edit(self, entry_id: str) -> TargetEdit | None:
        """The edit in effect on `entry_id` (only targets on the path are kept)."""
        return self.by_target.get(entry_id)


def _is_system(node: Node) -> bool:
    return node.type == "message" and node.role == "system"


def selected_flags(path: Sequence[Node], first_kept: Any) -> list[bool]:
    """Pi's `buildContextEntries` as a flag per path entry: all of it without a compaction; else the last
    compaction, the entries before it from `first_kept` on (system messages skipped), and all after it."""
    last = -1
    for i, node in enumerate(path):
        if node.type == "compaction":
            last = i
    if last < 0:
        return [True] * len(path)
    flags = [False] * len(path)
    found = False
    for i in range(last):
        if path[i].id == first_kept:
            found = True
        if found and not _is_system(path[i]):
            flags[i] = True
    for i in range(last, len(path)):
        flags[i] = True
    return flags


def leaf_edits(tree: SessionTree, read: Callable[[list[Node]], list[dict[str, Any]]]) -> PathEdits:
    """`path_edits` of the tree's active path, without making that path when it holds no edit (most sessions:
    at a million entries the path alone is 8 MB, and the explorer asks as soon as it opens)."""
    leaf = node = tree.leaf
    while node is not None and node.type != "context_edit":
        node = node.parent
    if node is None:
        return PathEdits(leaf_id=leaf.id if leaf is not None else None)
    return path_edits(tree.active_path(), read)


def path_edits(path: Sequence[Node], read: Callable[[list[Node]], list[dict[str, Any]]]) -> PathEdits:
    """The edits in effect on `path` (root first), reading the last compaction and the edit entries."""
    out = PathEdits(leaf_id=path[-1].id if path else None)
    compaction = next((n for n in reversed(path) if n.type == "compaction"), None)
    edit_nodes = [n for n in path if n.type == "context_edit"]
    if not edit_nodes:
        return out
    wanted = ([compaction] if compaction is not None else []) + edit_nodes
    entries = dict(zip((id(n) for n in wanted), read(wanted), strict=True))
    first_kept: Any = _MISSING
    if compaction is not None:
        out.compaction_id = compaction.id
        first_kept = entries[id(compaction)].get("firstKeptEntryId", _MISSING)
    flags = selected_flags(path, first_kept)
    position = {id(n): i for i, n in enumerate(path) if n.type == "context_edit"}
    last: dict[str, Edit] = {}
    edits: list[tuple[Edit, bool]] = []
    for node in edit_nodes:
        entry = entries[id(node)]
        edit = Edit(node.id, entry.get("targetId"), entry.get("replacement", _MISSING))
        selected = flags[position[id(node)]]
        edits.append((edit, selected))
        if selected and isinstance(edit.target, str):
            last[edit.target] = edit  # Pi's Map.set: the last one among the selected entries wins
    where = {n.id: i for i, n in enumerate(path) if n.id in last}
    for target, edit in last.items():
        i = where.get(target)
        if i is not None:
            out.by_target[target] = TargetEdit(edit, selected=flags[i])
    for edit, selected in edits:
        if not selected:
            out.status[edit.id] = ("unselected", out.compaction_id)
            continue
        winner = last.get(edit.target) if isinstance(edit.target, str) else None
        if winner is None:
            out.status[edit.id] = ("no-target", None)
        elif winner is not edit:
            out.status[edit.id] = ("superseded", winner.id)
        elif edit.target not in out.by_target or not out.by_target[edit.target].selected:
            out.status[edit.id] = ("no-target", None)
        else:
            out.status[edit.id] = ("effect", None)
    return out


def edit_effect(edit: Edit, node: Node) -> str:
    """What `edit` does to the target entry `node` in Pi's projection, in words for the entry pane."""
    kind = edit.kind
    if kind == "omit":
        return "omitted from context by edit"
    if kind == "invalid":
        return "targeted by a malformed edit (its replacement is neither null nor an object)"
    if node.type == "custom_message" or (node.type == "message" and node.role in EDITABLE_ROLES):
        return "content replaced by edit"
    return "targeted by edit (a replacement leaves this kind of entry unchanged)"
