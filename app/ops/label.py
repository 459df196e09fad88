"""Setting or clearing an entry's label: one `label` entry appended under the current leaf, as Pi's
appendLabelChange writes it. Clearing a label that is not there is refused (it would still move Pi's leaf)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pitree.ops.errors import OpError
from pitree.ops.write import check_writable, new_entry_id, now_iso
from pitree.session.entries import Node
from pitree.session.tree import SessionTree


def label_entry(tree: SessionTree, target: Node, label: str | None, now: float | None = None) -> dict[str, Any]:
    """Pi's appendLabelChange: a `label` entry under the current leaf; no label clears it."""
    leaf = tree.leaf
    entry: dict[str, Any] = {
        "type": "label",
        "id": new_entry_id(tree),
        "parentId": leaf.id if leaf is not None else None,
        "timestamp": now_iso(now),
        "targetId": target.id,
    }
    if label:
        entry["label"] = label
    return entry


def check_clear(tree: SessionTree, target: Node) -> None:
    """A clear on an unlabelled entry would still append a line and move Pi's leaf: refused."""
    if target.id not in tree.labels:
        raise OpError(f"entry {target.id} has no label to clear; nothing was written")


def plan_label(tree: SessionTree, path: Path, target: Node, text: str | None) -> dict[str, Any]:
    """The entry that sets `text` (stripped) on `target`, or clears its label for None; OpError if refused."""
    check_writable(tree, path)
    if text is None:
        check_clear(tree, target)
        return label_entry(tree, target, None)
    label = text.strip()
    if not label:
        raise OpError("the label is empty; use --clear to remove a label")
    return label_entry(tree, target, label)
