"""Moving the leaf the way Pi's `/tree` Enter does, and the one entry pitree appends to persist it; the CLI's
`branch` and the TUI's jump dialog take the same steps: `plan_jump`, `prepare_job` (the abandoned branch read
and budgeted once per summary), `offline_summary` or `model_summary`, then `summary_entry` (or `marker_entry`
for none), then `ops.write.append_entry`.

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pitree.ops.write import new_entry_id, now_iso
from pitree.session.content import text_of
from pitree.session.dialect_omp import OMP
from pitree.session.entries import Node
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from pitree.summary.prepare import collect_for_summary, prepare_branch_tail, token_budget
from pitree.summary.run import (
    DEFAULT_RESERVE,
    SummaryJob,
    extractive_summary,
    finish_model_summary,
    no_content,
    stream_model_summary,
)

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

    @property
    def marker_reason(self) -> str:
        """Why a jump is persisted without a summary: the user chose none, or nothing was left behind."""
        return "no summary requested" if self.to_summarize else "nothing to summarize"


def plan_jump(tree: SessionTree, target: Node) -> JumpPlan:
    old_leaf = tree.leaf
    back_to_editor = (target.type == "message" and target.role == "user") or target.type == "custom_message"
    new_leaf = target.parent if back_to_editor else target
    to_summarize, ancestor = collect_for_summary(tree, old_leaf, target)
    if old_leaf is not None and target is old_leaf:
        to_summarize = []
    return JumpPlan(target, old_leaf, new_leaf, ancestor, to_summarize, back_to_editor)


def prepare_job(
    tree: SessionTree,
    reader: EntryReader,
    plan: JumpPlan,
    context_window: int = 128000,
    reserve: int = DEFAULT_RESERVE,
) -> SummaryJob:
    """The abandoned entries read from the file and budgeted as Pi's prepareBranchEntries does: done once per
    summary, and what both the offline and the model summary read. Only the entries the budget lets in are read
    (with the branch summaries and context edits Pi takes from the whole branch): a branch left at the end of
    a million-entry session is most of its file."""
    entries, prepared = prepare_branch_tail(plan.to_summarize, reader.entries, token_budget(context_window, reserve))
    return SummaryJob(entries, prepared)


@dataclass
class Summary:
    """A branch summary ready for `summary_entry`: Pi's text with its file lists, and the model's usage."""

    text: str
    read_files: list[str]
    modified_files: list[str]
    usage: dict[str, Any] | None = None


def offline_summary(job: SummaryJob) -> Summary:
    """The extractive summary (Pi's literal "No content to summarize" when nothing survived preparation)."""
    return Summary(*extractive_summary(job))


async def model_summary(
    job: SummaryJob,
    choice: Any,
    instructions: str | None,
    on_text: Callable[[str], None] | None = None,
    on_retry: Callable[[str], None] | None = None,
) -> Summary:
    """The model's summary of the prepared branch (`choice`: a `summary.choose.Choice` with a backend),
    `on_text` told the answer so far as it streams. Nothing left to send: Pi's literal, no model call.
    Raises `BackendError` when the model fails."""
    if job.empty:
        return Summary(*no_content())
    parts: list[str] = []
    deltas = stream_model_summary(job, choice.backend, instructions, choice.reserve_tokens, choice.max_tokens, on_retry)
    async for delta in deltas:
        parts.append(delta)
        if on_text is not None:
            on_text("".join(parts))
    text, read, modified = finish_model_summary(job, "".join(parts))
    return Summary(text, read, modified, getattr(choice.backend, "usage", None))


def editor_text(entry: dict[str, Any]) -> str:
    """The text Pi puts back into the editor for a user message or custom_message target."""
    message = entry.get("message") if entry.get("type") == "message" else entry
    content = message.get("content") if isinstance(message, dict) else None
    return text_of(content, "", only_strings=True)


def summary_entry(tree: SessionTree, plan: JumpPlan, summary: Summary, now: float | None = None) -> dict[str, Any]:
    """Pi 1.6's branchWithSummary entry, its keys in Pi's order; `usage` only when the model reported it."""
    entry: dict[str, Any] = {
        "type": "branch_summary",
        "id": new_entry_id(tree),
        "parentId": plan.new_leaf_id,
        "timestamp": now_iso(now),
        "fromId": _from_id(tree, plan),
        "summary": summary.text,
        "details": {"readFiles": summary.read_files, "modifiedFiles": summary.modified_files},
    }
    if summary.usage is not None:
        entry["usage"] = summary.usage
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
