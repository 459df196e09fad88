"""What the sessions browser knows about one session (`SessionInfo`) and the texts full-text search indexes.

Pure: the tree comes loaded, full entries come from an `EntryReader`-like object (anything with
`entries(nodes) -> list[dict]`). Pi's rules (session-manager.js `buildSessionInfo`, `getLastActivityTime`,
`getSessionModifiedDate`), over the entries in file order:
- name: the latest `session_info` decides, an empty name clears it;
- first message: the text blocks (joined by a space) of the first user message that has any, else "(no messages)";
- last activity: the latest `message.timestamp` (a number) or, failing that, entry `timestamp` over user and
  assistant messages that have `content`; else the header's timestamp; else the file's mtime.
Without a reader the node's short row text and entry timestamps stand in (no `message.timestamp`).

`scan_session` makes one pass that yields both the search documents and the exact Pi facts, so indexing reads
each user/assistant line once more and never a tool result (half of a typical file).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pitree.session.content import blocks
from pitree.session.entries import HIDDEN_TOOL_ONLY, Node, parse_timestamp
from pitree.session.text import as_str

DOC_MAX = 100_000  # characters of one entry that search sees; a pasted log past this is cut
BATCH = 512  # entries read back per call (bounds the memory of parsed dicts)
NO_MESSAGES = "(no messages)"
FIRST_MESSAGE_MAX = 4000  # characters kept of the first message (Pi keeps it whole; a list needs the start)

# Document kinds, as stored and shown.
KINDS = ("user", "assistant", "tool", "bash", "compaction", "branch_summary", "label", "name", "custom_message")


class Reader(Protocol):
    def entries(self, nodes: list[Node]) -> list[dict[str, Any]]: ...


@dataclass(slots=True)
class SessionInfo:
    """One row of the sessions browser. Times are epoch milliseconds."""

    path: Path
    id: str
    cwd: str
    name: str | None
    first_message: str
    entries: int
    branches: int
    compactions: int
    last_activity: float
    created: float | None
    size: int
    mtime: float
    parent_session: str | None = None
    agent: str = "pi"  # the dialect of the file: "pi", or "omp" (oh-my-pi)

    @property
    def title(self) -> str:
        """What Pi's picker shows: the name, else the first user message."""
        return self.name or self.first_message


@dataclass(slots=True)
class ScanFacts:
    """What only the full entries tell (filled while `SessionScan.documents()` runs)."""

    first_message: str | None = None
    last_activity: float | None = None
    exact: bool = False  # True when full entries were read (Pi's rules exactly)


@dataclass
class SessionScan:
    """One pass over a tree for search documents, collecting Pi's first-message and activity facts on the way."""

    tree: Any
    reader: Reader | None = None
    facts: ScanFacts = field(default_factory=ScanFacts)

    def documents(self) -> Iterator[tuple[str, str, str]]:
        """(entry id, kind, text) for every searchable piece, in file order; labels last."""
        tree = self.tree
        facts = self.facts
        facts.exact = self.reader is not None
        pending: list[Node] = []
        for node in tree.nodes:
            ntype = node.type
            if ntype == "message":
                role = node.role
                if role == "user" or role == "assistant":
                    if self.reader is not None:
                        pending.append(node)
                        if len(pending) >= BATCH:
                            yield from self._read_back(pending)
                            pending = []
                    else:
                        yield from self._from_node(node)
                elif role == "bashExecution":
                    if pending:
                        yield from self._read_back(pending)
                        pending = []
                    command = node.text[len("[bash]: ") :]
                    if command:
                        yield node.id, "bash", command[:DOC_MAX]
                continue
            if pending:
                yield from self._read_back(pending)
                pending = []
            meta = node.meta
            if ntype == "compaction" or ntype == "branch_summary":
                summary = meta.get("summary") if meta else None
                if summary:
                    yield node.id, ntype, summary[:DOC_MAX]
            elif ntype == "session_info" or ntype == "title_change":  # Pi's name, oh-my-pi's title
                name = meta.get("name" if ntype == "session_info" else "title") if meta else None
                if isinstance(name, str) and name.strip():
                    yield node.id, "name", name.strip()[:DOC_MAX]
            elif ntype == "custom_message":
                if node.text:
                    yield node.id, "custom_message", node.text[:DOC_MAX]
        if pending:
            yield from self._read_back(pending)
        for target, label in tree.labels.items():
            if label:
                yield target, "label", label[:DOC_MAX]

    def _from_node(self, node: Node) -> Iterator[tuple[str, str, str]]:
        facts = self.facts
        if node.role == "user":
            text = node.text[len("user: ") :]
            if facts.first_message is None and text:
                facts.first_message = text
        else:
            text = node.text[len("assistant: ") :] if not node.flags & HIDDEN_TOOL_ONLY else ""
            if text in ("(no content)", "(aborted)"):
                text = ""
        ts = node.ts
        if ts == ts and (facts.last_activity is None or ts > facts.last_activity):
            facts.last_activity = ts
        if text:
            yield node.id, node.role or "", text
        if node.calls:
            yield node.id, "tool", "\n".join(call for _, call in node.calls)

    def _read_back(self, nodes: list[Node]) -> Iterator[tuple[str, str, str]]:
        assert self.reader is not None
        facts = self.facts
        for node, entry in zip(nodes, self.reader.entries(nodes), strict=True):
            msg = entry.get("message")
            if not isinstance(msg, dict) or "content" not in msg:
                continue
            role = "assistant" if msg.get("role") == "assistant" else "user"
            content = msg.get("content")
            text, tools = message_texts(content, role == "assistant")
            when = message_time(msg, entry)
            if when is not None:  # Pi: Math.max(lastActivityTime ?? 0, t)
                facts.last_activity = max(facts.last_activity if facts.last_activity is not None else 0.0, when)
            if text:
                if role == "user" and facts.first_message is None:
                    facts.first_message = text
                yield node.id, role, text[:DOC_MAX]
            if tools:
                yield node.id, "tool", tools[:DOC_MAX]


_TOOL_ARGS = ("path", "file_path", "pattern", "command", "url", "query")


def message_time(msg: dict[str, Any], entry: dict[str, Any]) -> float | None:
    """When a message counts as activity (Pi's getLastActivityTime): its own numeric timestamp, else the entry's
    ISO time; None when neither gives one."""
    stamp = msg.get("timestamp")
    if type(stamp) is int or type(stamp) is float:
        return float(stamp)
    if isinstance(entry.get("timestamp"), str):
        t = parse_timestamp(entry["timestamp"])
        return t if t == t else None
    return None


def message_texts(content: Any, tools: bool) -> tuple[str, str]:
    """Pi's extractTextContent (text blocks joined by a space) and, for assistants, `name arg…` per tool call."""
    if isinstance(content, str):
        return content, ""
    if not isinstance(content, list):
        return "", ""
    texts: list[str] = []
    calls: list[str] = []
    for btype, block in blocks(content):
        if btype == "text":
            texts.append(as_str(block.get("text")))
        elif tools and btype == "toolCall":
            parts = [as_str(block.get("name"))]
            args = block.get("arguments")
            if isinstance(args, dict):
                for key in _TOOL_ARGS:
                    value = args.get(key)
                    if isinstance(value, str) and value:
                        parts.append(value[:500])
            calls.append(" ".join(parts))
    return " ".join(texts), "\n".join(calls)


def search_documents(tree: Any, reader: Reader | None = None) -> Iterator[tuple[str, str, str]]:
    """(entry id, kind, text) for full-text search: user and assistant text, tool names and paths, bash
    commands, compaction and branch summaries, session names, custom messages, labels (under their target)."""
    return SessionScan(tree, reader).documents()


def scan_session(
    tree: Any, reader: Reader | None, path: Path, size: int, mtime: float
) -> tuple[SessionInfo, list[tuple[str, str, str]]]:
    """The session's info and its search documents, in one pass."""
    scan = SessionScan(tree, reader)
    docs = list(scan.documents())
    return build_session_info(tree, path, size, mtime, scan.facts), docs


def _first_user_text(nodes: Sequence[Node]) -> str | None:
    for node in nodes:
        if node.type == "message" and node.role == "user":
            text = node.text[len("user: ") :]
            if text:
                return text
    return None


def _last_activity_from_nodes(nodes: Sequence[Node]) -> float | None:
    best: float | None = None
    for node in nodes:
        if node.type == "message" and (node.role == "user" or node.role == "assistant"):
            ts = node.ts
            if ts == ts and (best is None or ts > best):
                best = ts
    return best


def build_session_info(tree: Any, path: Path, size: int, mtime: float, facts: ScanFacts | None = None) -> SessionInfo:
    """`SessionInfo` of a loaded tree; `facts` from a `SessionScan` make first message and activity exact.

    `mtime` is the file's modification time in epoch milliseconds (the last fallback of Pi's rule)."""
    header = tree.header or {}
    if facts is None:
        first = _first_user_text(tree.nodes)
        activity = _last_activity_from_nodes(tree.nodes)
    else:
        first, activity = facts.first_message, facts.last_activity
    created = parse_timestamp(header.get("timestamp")) if isinstance(header.get("timestamp"), str) else math.nan
    if activity is None or not activity > 0:
        activity = created if created == created else mtime
    cwd = header.get("cwd")
    sid = header.get("id")
    parent = header.get("parentSession")
    compactions = 0
    for node in tree.nodes:
        if node.type == "compaction":
            compactions += 1
    return SessionInfo(
        path=path,
        id=sid if isinstance(sid, str) else "",
        cwd=cwd if isinstance(cwd, str) else "",
        name=tree.name,
        first_message=first[:FIRST_MESSAGE_MAX] if first else NO_MESSAGES,
        entries=tree.entry_count,
        branches=len(tree.leaves()),
        compactions=compactions,
        last_activity=activity,
        created=created if created == created else None,
        size=size,
        mtime=mtime,
        parent_session=parent if isinstance(parent, str) and parent else None,
        agent=getattr(tree, "dialect", "pi"),
    )


def thread_sessions(infos: Sequence[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """Pi's threaded session list (session-selector.js `buildSessionTree`/`flattenSessionTree`): each fork under
    the session its header's `parentSession` names (when that one is listed too), siblings and roots by last
    activity, newest first. Returns (session, depth) in display order; a parentSession loop is cut. An oh-my-pi
    subagent transcript (`<session minus .jsonl>/<agent>.jsonl`) hangs under its session the same way."""
    normal = [os.path.normpath(str(s.path)) for s in infos]
    by_path = dict(zip(normal, infos, strict=True))
    children: dict[int, list[SessionInfo]] = {}
    roots: list[SessionInfo] = []
    for s, path in zip(infos, normal, strict=True):
        parent = by_path.get(os.path.normpath(s.parent_session)) if s.parent_session else None
        if parent is None:  # an oh-my-pi subagent transcript (artifacts folder) hangs under the session it ran in
            parent = by_path.get(os.path.dirname(path) + ".jsonl")
        if parent is None or parent is s:
            roots.append(s)
        else:
            children.setdefault(id(parent), []).append(s)

    def newest_first(items: list[SessionInfo]) -> list[SessionInfo]:
        return sorted(items, key=lambda s: -s.last_activity)

    out: list[tuple[SessionInfo, int]] = []
    seen: set[int] = set()

    def walk(start: SessionInfo) -> None:
        stack = [(start, 0)]
        while stack:
            s, depth = stack.pop()
            if id(s) in seen:
                continue
            seen.add(id(s))
            out.append((s, depth))
            stack.extend((c, depth + 1) for c in reversed(newest_first(children.get(id(s), []))))

    for s in newest_first(roots):
        walk(s)
    # Sessions on a parentSession loop never hang from a root: each loop starts at its newest member.
    for s in newest_first([s for s in infos if id(s) not in seen]):
        walk(s)
    return out
