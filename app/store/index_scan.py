"""One pass over a Pi v3 session file for what the sessions list and search need, and the state to read on
from where it stopped when the file grows.

`scan_file(path, size, ino, old)` reads the file once in blocks, never building a tree: a tool result (about
half of a typical file) is recognised by its first bytes and only its id and parentId are taken; every other
line is parsed with orjson. It follows `session.summary_info`'s rules exactly (name, first message, last
activity, entries, branches, compactions, search documents in file order, labels in their own rowid range).

Anything the fast path does not model raises `Unsupported`, and the caller loads the file through the tree
(`index_load.load_full`): no v3 Pi header, oh-my-pi, a line that is not a JSON object with a string type and id,
a blank line, a duplicate id, a parent not seen before (an entry that is its own parent included).

Appends: `Scanned.state` holds what continuing needs (every id, the leaves, the facts so far); `offset` is the
end of the last whole line read (a torn last line, e.g. from a killed writer, is never indexed) and `digest`
hashes the bytes at both ends of the indexed prefix. A later scan with `old` set checks the inode, the size and
that digest, then reads only from `offset`; a shorter file, another inode or another digest reads it whole.
Pi only appends, or rewrites a file whole (a migration changes its header); a rewrite that kept the first and
the last 4 KB before the offset byte for byte and changed only the middle would not be noticed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from pitree.session.dialect_omp import OMP_TYPES, header_is_omp
from pitree.session.entries import parse_timestamp
from pitree.session.summary_info import DOC_MAX, FIRST_MESSAGE_MAX, NO_MESSAGES, message_texts, message_time
from pitree.session.text import as_str, extract_content, js_string, normalize

BLOCK = 4 << 20
DIGEST_SPAN = 4096  # bytes hashed at each end of the indexed prefix
STATE_VERSION = 1

# Called with the number of bytes each read returned (tests and the benchmark count what an append costs).
read_hook: Callable[[int], None] | None = None

_TOOL_RESULT = re.compile(
    rb'\{"type":"message","id":"([^"\\]+)","parentId":(?:null|"([^"\\]+)"),"timestamp":"[^"\\]*",'
    rb'"message":\{"role":"toolResult"'
)


class Unsupported(Exception):
    """The fast path does not model this file: load it through the tree."""


@dataclass(slots=True)
class Scanned:
    """What one scan found. With `appended`, `docs`/`labels` are only the new ones, to add after the stored."""

    header: dict[str, Any]
    offset: int
    digest: bytes
    state: dict[str, Any]
    docs: list[tuple[str, str, str]] = field(default_factory=list)
    labels: dict[str, str | None] = field(default_factory=dict)  # target -> label (None: cleared)
    appended: bool = False
    name: str | None = None
    entries: int = 0
    compactions: int = 0


def _read(fh: Any, size: int) -> bytes:
    data: bytes = fh.read(size)
    if read_hook is not None:
        read_hook(len(data))
    return data


def _digest(fh: Any, offset: int) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    fh.seek(0)
    h.update(_read(fh, min(DIGEST_SPAN, offset)))
    start = max(0, offset - DIGEST_SPAN)
    fh.seek(start)
    h.update(_read(fh, offset - start))
    h.update(offset.to_bytes(8, "little"))
    return h.digest()


class _Scan:
    def __init__(self, state: dict[str, Any], name: str | None, entries: int, compactions: int) -> None:
        self.ids: set[str] = set(state["ids"])
        self.leaves: set[str] = set(state["leaves"])
        self.first: str | None = state["first"]
        self.activity: float | None = state["activity"]
        self.ndocs: int = state["ndocs"]
        self.nlabels: int = state["nlabels"]
        self.name = name
        self.entries = entries
        self.compactions = compactions
        self.docs: list[tuple[str, str, str]] = []
        self.labels: dict[str, str | None] = {}

    def state(self) -> dict[str, Any]:
        return {
            "v": STATE_VERSION,
            "ids": list(self.ids),
            "leaves": list(self.leaves),
            "first": self.first,
            "activity": self.activity,
            "ndocs": self.ndocs + len(self.docs),
            "nlabels": self.nlabels + len(self.labels),
        }

    def link(self, eid: Any, pid: Any) -> None:
        if type(eid) is not str or eid in self.ids:
            raise Unsupported("entry id missing or repeated")
        if pid is not None:
            if type(pid) is not str or pid not in self.ids:
                raise Unsupported("parent not seen before")
            self.leaves.discard(pid)
        self.ids.add(eid)
        self.leaves.add(eid)
        self.entries += 1

    def line(self, line: bytes) -> None:
        m = _TOOL_RESULT.match(line)
        if m is not None and line.rstrip().endswith(b"}"):
            pid = m.group(2)
            self.link(m.group(1).decode(), pid.decode() if pid is not None else None)
            return
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise Unsupported("a line that is not JSON") from None
        if type(obj) is not dict or type(obj.get("type")) is not str:
            raise Unsupported("a line that is not an entry")
        eid: str = obj.get("id")  # type: ignore[assignment]  # link() checks it is a string
        self.link(eid, obj.get("parentId"))
        etype = obj["type"]
        docs = self.docs
        if etype == "message":
            msg = obj.get("message")
            if not isinstance(msg, dict):
                return
            role = msg.get("role")
            if role == "user" or role == "assistant":
                self._message(eid, obj, msg)
            elif role == "bashExecution":
                command = normalize(as_str(msg.get("command")))
                if command:
                    docs.append((eid, "bash", command[:DOC_MAX]))
        elif etype == "compaction" or etype == "branch_summary":
            if etype == "compaction":
                self.compactions += 1
            summary = as_str(obj.get("summary"))
            if summary:
                docs.append((eid, etype, summary[:DOC_MAX]))
        elif etype == "session_info":
            name = obj.get("name")
            self.name = name.strip() or None if isinstance(name, str) else None
            if isinstance(name, str) and name.strip():
                docs.append((eid, "name", name.strip()[:DOC_MAX]))
        elif etype == "custom_message":
            content = obj.get("content")
            text = content if isinstance(content, str) else extract_content(content, max_len=10**9)
            row = f"[{js_string(obj.get('customType'))}]: " + normalize(text)
            docs.append((eid, "custom_message", row[:DOC_MAX]))
        elif etype == "label":
            target, label = obj.get("targetId"), obj.get("label")
            if isinstance(target, str):
                if label:
                    self.labels[target] = label if isinstance(label, str) else str(label)
                else:  # a cleared label set again goes last, as in the tree's dict
                    self.labels.pop(target, None)
                    self.labels[target] = None
        if etype in OMP_TYPES:  # the file is oh-my-pi's after all (dialect_omp.fill_omp's rule)
            raise Unsupported("oh-my-pi entry")

    def _message(self, eid: str, entry: dict[str, Any], msg: dict[str, Any]) -> None:
        # summary_info.SessionScan._read_back's rules, on the entry parsed here
        if "content" not in msg:
            return
        role = "assistant" if msg.get("role") == "assistant" else "user"
        text, tools = message_texts(msg.get("content"), role == "assistant")
        when = message_time(msg, entry)
        if when is not None:
            self.activity = max(self.activity if self.activity is not None else 0.0, when)
        if text:
            if role == "user" and self.first is None:
                self.first = text[:FIRST_MESSAGE_MAX]
            self.docs.append((eid, role, text[:DOC_MAX]))
        if tools:
            self.docs.append((eid, "tool", tools[:DOC_MAX]))


_EMPTY_STATE: dict[str, Any] = {"ids": [], "leaves": [], "first": None, "activity": None, "ndocs": 0, "nlabels": 0}


def scan_file(path: str, size: int, ino: int, old: dict[str, Any] | None = None) -> Scanned:
    """Scan `path` (see the module docstring). `old` is the stored row's {"offset", "digest", "ino", "state",
    "name", "entries", "compactions"} to read on from; raises Unsupported or OSError."""
    with open(path, "rb") as fh:
        if old is not None and old.get("state") is not None and old["ino"] == ino and 0 < old["offset"] <= size:
            if _digest(fh, old["offset"]) == old["digest"]:
                scan = _Scan(old["state"], old["name"], old["entries"], old["compactions"])
                offset = _lines(fh, old["offset"], size, scan)
                return _result(fh, old["state"]["header"], offset, scan, appended=True)
        fh.seek(0)
        head = _read(fh, min(size, 64 * 1024))
        end = head.find(b"\n")
        if end < 0:
            raise Unsupported("no whole header line")
        try:
            header = orjson.loads(head[:end])
        except orjson.JSONDecodeError:
            raise Unsupported("header is not JSON") from None
        if (
            type(header) is not dict
            or header.get("type") != "session"
            or type(header.get("id")) is not str
            or type(header.get("version")) is not int
            or header["version"] != 3
            or header_is_omp(header)
        ):
            raise Unsupported("not a Pi v3 header")
        scan = _Scan(_EMPTY_STATE, None, 0, 0)
        offset = _lines(fh, end + 1, size, scan)
        return _result(fh, header, offset, scan, appended=False)


def _lines(fh: Any, start: int, size: int, scan: _Scan) -> int:
    """Feed the whole lines in [start, size) to `scan`; returns the end of the last whole line."""
    fh.seek(start)
    pos = start
    rest = b""
    while pos < size:
        block = _read(fh, min(BLOCK, size - pos))
        if not block:
            break
        pos += len(block)
        data = rest + block if rest else block
        cut = data.rfind(b"\n")
        if cut < 0:
            rest = data
            continue
        rest = data[cut + 1 :]
        for line in data[:cut].split(b"\n"):
            if line.strip():
                scan.line(line)
            else:
                raise Unsupported("a blank line")
    return pos - len(rest)


def _result(fh: Any, header: dict[str, Any], offset: int, scan: _Scan, appended: bool) -> Scanned:
    return Scanned(
        header=header,
        offset=offset,
        digest=_digest(fh, offset),
        state={**scan.state(), "header": header},
        docs=scan.docs,
        labels=scan.labels,
        appended=appended,
        name=scan.name,
        entries=scan.entries,
        compactions=scan.compactions,
    )


def session_facts(scanned: Scanned, mtime_ms: float) -> dict[str, Any]:
    """The list's columns from a scan (build_session_info's fallbacks for first message and activity)."""
    header, state = scanned.header, scanned.state
    stamp = header.get("timestamp")
    created = parse_timestamp(stamp) if isinstance(stamp, str) else float("nan")
    activity = state["activity"]
    if activity is None or not activity > 0:
        activity = created if created == created else mtime_ms
    cwd, parent = header.get("cwd"), header.get("parentSession")
    return {
        "id": header["id"],
        "cwd": cwd if isinstance(cwd, str) else "",
        "name": scanned.name,
        "first_message": state["first"] or NO_MESSAGES,
        "entries": scanned.entries,
        "branches": len(state["leaves"]),
        "compactions": scanned.compactions,
        "last_activity": activity,
        "created": created if created == created else None,
        "parent_session": parent if isinstance(parent, str) and parent else None,
    }
