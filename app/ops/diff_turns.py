"""One side of a branch comparison: the entries from the fork to an end, cut into turns, with its figures.

A turn starts at each user message (entries before the first one form a turn without a request). Everything here
comes from the compact nodes (row texts, tool calls, error flags, usage, timestamps), so a side of 900,000
entries is one walk; only `turns_max` turns are kept for showing, and only their replies are re-read for the
files they read and modified (through a `read` function: no file is opened here).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from pitree.session.entries import IS_ERROR, Node
from pitree.summary.prepare import FileOps, extract_file_ops

TURNS_MAX = 500  # turns kept per side for showing; the figures cover the whole side
EVENT_TYPES = frozenset({"compaction", "branch_summary", "model_change", "thinking_level_change", "context_edit"})

ReadEntries = Callable[[list[Node]], Iterable[dict[str, Any]]]


@dataclass(slots=True)
class Call:
    """A tool call of a reply and what became of it."""

    entry_id: str  # the assistant reply that made it
    text: str  # Pi's formatted call, e.g. `[read: src/app.py]`
    result_id: str | None = None
    error: bool = False

    def as_dict(self) -> dict[str, Any]:
        outcome = "none" if self.result_id is None else "error" if self.error else "ok"
        return {"entryId": self.entry_id, "call": self.text, "resultId": self.result_id, "outcome": outcome}


@dataclass(slots=True)
class Turn:
    """A user request and what followed it, up to the next request."""

    index: int
    first_id: str
    request: str | None = None
    request_id: str | None = None
    answers: list[tuple[str, str]] = field(default_factory=list)  # (reply id, row text without "assistant: ")
    calls: list[Call] = field(default_factory=list)
    events: list[tuple[str, str]] = field(default_factory=list)  # compactions, summaries, model changes: (id, row)
    errors: int = 0  # errored replies, tool results and bash runs
    entries: int = 0
    tokens: float = 0
    cost: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "firstId": self.first_id,
            "request": self.request,
            "requestId": self.request_id,
            "answers": [{"entryId": i, "text": t} for i, t in self.answers],
            "toolCalls": [c.as_dict() for c in self.calls],
            "events": [{"entryId": i, "text": t} for i, t in self.events],
            "errors": self.errors,
            "entries": self.entries,
            "tokens": _num(self.tokens),
            "cost": round(self.cost, 6),
        }


@dataclass
class Side:
    """What one branch did after the fork."""

    tip: Node
    entries: int = 0
    turns: list[Turn] = field(default_factory=list)  # the first `turns_max`
    turn_count: int = 0
    tokens: float = 0
    cost: float = 0.0
    start_ms: float = math.nan
    end_ms: float = math.nan
    calls: int = 0
    errors: int = 0
    compactions: list[tuple[str, str]] = field(default_factory=list)
    summaries: list[tuple[str, str]] = field(default_factory=list)
    files: FileOps = field(default_factory=FileOps)
    files_complete: bool = True  # False: only the kept turns' replies were read (or no reader was given)
    last_answer: tuple[str, str] | None = None  # (reply id, its row text; the full text once read)

    @property
    def duration_ms(self) -> float | None:
        span = self.end_ms - self.start_ms
        return span if span == span else None

    @property
    def truncated(self) -> bool:
        return self.turn_count > len(self.turns)


def _num(v: float) -> int | float:
    return int(v) if math.isfinite(v) and abs(v) < 2**63 and v == int(v) else v


def _strip(text: str, prefix: str) -> str:
    return text[len(prefix) :] if text.startswith(prefix) else text


def _tally(side: Side, node: Node) -> None:
    """The side's own figures from one entry (every entry of the side passes here)."""
    ts = node.ts
    if ts == ts:
        if side.start_ms != side.start_ms:
            side.start_ms = ts
        side.end_ms = ts
    usage = node.usage
    if usage is not None:
        side.tokens += usage[0] + usage[1] + usage[2] + usage[3]  # Pi's tokens.total, as `pitree usage` counts
        side.cost += usage[5]
    if node.flags & IS_ERROR:
        side.errors += 1
    if node.calls:
        side.calls += len(node.calls)
    ntype = node.type
    if ntype == "compaction":
        side.compactions.append((node.id, node.text))
    elif ntype == "branch_summary":
        side.summaries.append((node.id, node.text))


def _is_answer(node: Node) -> bool:
    return node.type == "message" and node.role == "assistant" and node.text != "assistant: (no content)"


def build_side(tip: Node, nodes: list[Node], read: ReadEntries | None, turns_max: int = TURNS_MAX) -> Side:
    """The side ending at `tip` made of `nodes` (oldest first); `read` re-reads the kept replies for files.
    The first `turns_max` turns are built in detail; past them only the side's figures are counted."""
    side = Side(tip=tip, entries=len(nodes))
    turn: Turn | None = None
    open_calls: dict[Any, Call] = {}
    with_calls: list[Node] = []
    last_answer: Node | None = None
    rest = len(nodes)
    for i, node in enumerate(nodes):
        ntype, role = node.type, node.role
        is_user = ntype == "message" and role == "user"
        if turn is None or is_user:
            if len(side.turns) == turns_max:
                rest = i
                break
            turn = Turn(index=len(side.turns), first_id=node.id)
            side.turns.append(turn)
            open_calls = {}
        _tally(side, node)
        turn.entries += 1
        usage = node.usage
        if usage is not None:
            turn.tokens += usage[0] + usage[1] + usage[2] + usage[3]
            turn.cost += usage[5]
        if node.flags & IS_ERROR:
            turn.errors += 1
        if is_user:
            turn.request, turn.request_id = _strip(node.text, "user: "), node.id
        elif ntype == "message" and role == "assistant":
            if node.calls:
                for call_id, call_text in node.calls:
                    call = Call(node.id, call_text)
                    turn.calls.append(call)
                    if isinstance(call_id, str):
                        open_calls[call_id] = call
                with_calls.append(node)
            if _is_answer(node):
                turn.answers.append((node.id, _strip(node.text, "assistant: ")))
                last_answer = node
        elif ntype == "message" and role == "toolResult":
            found = open_calls.get(node.call_id) if isinstance(node.call_id, str) else None
            if found is not None:
                found.result_id, found.error = node.id, bool(node.flags & IS_ERROR)
        elif ntype in EVENT_TYPES:
            turn.events.append((node.id, node.text))
    side.turn_count = len(side.turns)
    for node in islice(nodes, rest, None):
        _tally(side, node)
        if node.type == "message" and node.role == "user":
            side.turn_count += 1
        elif _is_answer(node):
            last_answer = node
    side.files_complete = read is not None and not side.truncated
    if read is not None:
        _files(side, with_calls, last_answer, read)
    if last_answer is not None and side.last_answer is None:
        side.last_answer = (last_answer.id, _strip(last_answer.text, "assistant: "))
    return side


def _files(side: Side, with_calls: list[Node], last_answer: Node | None, read: ReadEntries) -> None:
    """Files from the kept replies' tool calls (Pi's extractFileOpsFromMessage), and the last answer in full."""
    nodes = list(with_calls)
    if last_answer is not None and (not nodes or nodes[-1] is not last_answer):
        nodes.append(last_answer)
    for node, entry in zip(nodes, read(nodes), strict=True):
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        if last_answer is not None and node is last_answer:
            side.last_answer = (node.id, answer_text(message) or _strip(node.text, "assistant: "))
        extract_file_ops(message, side.files)


def answer_text(message: dict[str, Any]) -> str:
    """The text blocks of an assistant message, joined (thinking and tool calls left out)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [b.get("text") for b in content or () if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str))
