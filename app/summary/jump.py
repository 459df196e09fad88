"""Moving the leaf the way Pi's `/tree` Enter does, and the one entry pitree appends to persist it.

- Target is a user message or custom_message: the new leaf is its parent (null for a root) and its text
  goes back to the editor; any other target becomes the leaf itself; the current leaf: nothing happens.
- What is left behind: old leaf up to (not incl.) the common ancestor of old leaf and target.
- Persisting: a `branch_summary` as Pi 1.6 writes it (fromId = the abandoned old leaf, or "root"; 0.73
  wrote the target by a bug) or, for "no summary" or nothing left behind, a `custom` entry of type
  `pitree.jump`, which Pi ignores in context and hides in its tree. Either way the appended line is the
  last one, so it is where `pi --session FILE` continues.
  In an oh-my-pi file the summary's fromId is the new leaf, as omp writes it; the title slot on line 1 is
  never touched (only whole lines are appended).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from pitree.session.content import text_of
from pitree.session.dialect_omp import OMP
from pitree.session.entries import Node
from pitree.session.tree import SessionTree
from pitree.summary.prepare import collect_for_summary

JUMP_CUSTOM_TYPE = "pitree.jump"


@dataclass
class JumpPlan:
    target: Node
    old_leaf: Node | None
    new_leaf: Node | None  # None: before the first entry (a re-edited root message)
    ancestor: Node | None
    to_summarize: list[Node]
    needs_editor_text: bool  # the target's text goes back to the editor

    @property
    def noop(self) -> bool:
        """Nothing to write: the target is the leaf, or the leaf would not move and nothing is left behind."""
        if self.old_leaf is not None and self.target is self.old_leaf:
            return True
        return self.new_leaf is self.old_leaf and not self.to_summarize

    @property
    def new_leaf_id(self) -> str | None:
        return self.new_leaf.id if self.new_leaf is not None else None


def plan_jump(tree: SessionTree, target: Node) -> JumpPlan:
    old_leaf = tree.leaf
    back_to_editor = (target.type == "message" and target.role == "user") or target.type == "custom_message"
    new_leaf = target.parent if back_to_editor else target
    to_summarize, ancestor = collect_for_summary(tree, old_leaf, target)
    if old_leaf is not None and target is old_leaf:
        to_summarize = []
    return JumpPlan(target, old_leaf, new_leaf, ancestor, to_summarize, back_to_editor)


def editor_text(entry: dict[str, Any]) -> str:
    """The text Pi puts back into the editor for a user message or custom_message target."""
    message = entry.get("message") if entry.get("type") == "message" else entry
    content = message.get("content") if isinstance(message, dict) else None
    return text_of(content, "", only_strings=True)


def new_entry_id(tree: SessionTree) -> str:
    """8 hex characters not used in the session (Pi's generateId)."""
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in tree.by_id:
            return candidate
    return secrets.token_hex(16)


def now_iso(now: float | None = None) -> str:
    t = time.time() if now is None else now
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1000):03d}Z"


def summary_entry(
    tree: SessionTree,
    plan: JumpPlan,
    summary: str,
    read_files: list[str],
    modified_files: list[str],
    now: float | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Pi 1.6's branchWithSummary entry, its keys in Pi's order; `usage` only when the model reported it."""
    entry: dict[str, Any] = {
        "type": "branch_summary",
        "id": new_entry_id(tree),
        "parentId": plan.new_leaf_id,
        "timestamp": now_iso(now),
        "fromId": _from_id(tree, plan),
        "summary": summary,
        "details": {"readFiles": read_files, "modifiedFiles": modified_files},
    }
    if usage is not None:
        entry["usage"] = usage
    entry["fromHook"] = False
    return entry


def _from_id(tree: SessionTree, plan: JumpPlan) -> str:
    """Pi 1.x reads fromId as the abandoned old leaf; oh-my-pi writes (and reads) the branch-from position,
    the new leaf (`branchWithSummary(newLeafId)`), "root" when there is none."""
    if tree.dialect == OMP:
        return plan.new_leaf_id or "root"
    return plan.old_leaf.id if plan.old_leaf is not None else "root"


def marker_entry(tree: SessionTree, plan: JumpPlan, reason: str, now: float | None = None) -> dict[str, Any]:
    """The `custom` entry that persists a jump without a summary."""
    return {
        "type": "custom",
        "customType": JUMP_CUSTOM_TYPE,
        "data": {
            "fromId": plan.old_leaf.id if plan.old_leaf is not None else None,
            "targetId": plan.target.id,
            "leafId": plan.new_leaf_id,
            "reason": reason,
        },
        "id": new_entry_id(tree),
        "parentId": plan.new_leaf_id,
        "timestamp": now_iso(now),
    }


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
