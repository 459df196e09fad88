"""The compact per-entry record (`Node`) that pitree keeps in memory, and how it is built from parsed JSON.

A `Node` holds only what the tree, the row list and search need: ids, type/role, a short display text,
file position, Pi's token estimate and assistant usage. The full JSON is re-read from `offset`/`length`
when an entry is opened, so a 100 MB session costs a small multiple of its entry count, not of its size.
"""

from __future__ import annotations

import math
import sys
from array import array
from datetime import datetime
from marshal import dumps as _marshal_dumps
from marshal import loads as _marshal_loads
from typing import Any

from .text import (
    ROW_TEXT_MAX,
    as_str,
    extract_content,
    format_tool_call,
    js_string,
    json_compact,
    normalize,
)

# flag bits
HIDDEN_TOOL_ONLY = 1  # assistant turn with no text that is neither errored nor aborted (Pi hides it)
IS_ERROR = 2  # assistant stopReason error / toolResult isError / bash exit != 0
SYNTHETIC_ID = 4  # the id was made by pitree (v1 migration, or an entry without a usable id)
FROM_HOOK = 8

SETTINGS_TYPES = frozenset({"label", "custom", "model_change", "thinking_level_change"})


class Positions:
    """Where the entries of one tree are in its file and when they were written, by `Node.idx`: line number,
    byte offset and byte length in three int arrays, the timestamp (ms since the epoch, nan when missing or
    unparseable) in a float one. 32 bytes an entry; as attributes of each `Node` they took ~190 (the raw
    timestamp string alone 80)."""

    __slots__ = ("line", "offset", "length", "ts")

    def __init__(self) -> None:
        self.line = array("q")
        self.offset = array("q")
        self.length = array("q")
        self.ts = array("d")

    def put(self, idx: int, line: int, offset: int, length: int, ts: float) -> None:
        if idx != len(self.line):
            self.cut(idx)
        self.line.append(line)
        self.offset.append(offset)
        self.length.append(length)
        self.ts.append(ts)

    def cut(self, idx: int) -> None:
        """Make entry `idx` the next one to be put (drops what is at and after it, pads before: zeros, and
        nan timestamps)."""
        for column in (self.line, self.offset, self.length):
            del column[idx:]
            if len(column) < idx:
                column.extend(array("q", [0]) * (idx - len(column)))
        del self.ts[idx:]
        if len(self.ts) < idx:
            self.ts.extend(array("d", [math.nan]) * (idx - len(self.ts)))


_NOWHERE = Positions()  # a Node not yet placed: reading its position fails with an IndexError


class Node:
    """One entry of a session, compact. `children` is filled by SessionTree."""

    __slots__ = (
        "id",
        "parent_id",
        "idx",
        "_at",
        "type",
        "role",
        "text",
        "flags",
        "est",
        "_usage",
        "model",
        "meta",
        "calls",
        "call_id",
        "children",
        "parent",
    )

    def __init__(self) -> None:
        self.id: str = ""
        self.parent_id: str | None = None
        self.idx = 0  # position among entries in file order (header excluded)
        # where the entry is in the file (`line`, `offset`, `length`): its tree's `Positions`, at `idx`
        self._at: Positions = _NOWHERE
        self.type: str = ""
        self.role: str | None = None
        self.text = ""  # Pi's row text (tool results are resolved by the tree)
        self.flags = 0
        self.est = 0  # Pi's chars/4 estimate of what this entry contributes to the context
        self._usage: bytes | None = None  # `pack_usage` of an assistant message's usage
        self.model: tuple[Any, Any] | None = None  # (provider, model) of an assistant message, raw
        self.meta: dict[str, Any] | None = None  # what a few entry types add (see `fill_node`); None for most
        # An assistant turn's tool calls, ((toolCall id, Pi's formatted call), ...); None without any.
        self.calls: tuple[tuple[Any, str], ...] | None = None
        self.call_id: Any = None  # a tool result's toolCallId (raw JSON value); the tree shares the call's string
        self.children: list[Node] = []
        self.parent: Node | None = None

    def __repr__(self) -> str:
        return f"Node({self.id!r}, {self.type}{'/' + self.role if self.role else ''}, line {self.line})"

    @property
    def line(self) -> int:
        """1-based line number in the file."""
        return self._at.line[self.idx]

    @property
    def offset(self) -> int:
        """Byte offset of the entry's line."""
        return self._at.offset[self.idx]

    @property
    def length(self) -> int:
        """Byte length of the line without its newline."""
        return self._at.length[self.idx]

    @property
    def usage(self) -> Usage | None:
        """(input, output, cacheRead, cacheWrite, totalTokens, cost.total) of an assistant message, each as
        the file has it (int or float; 0.0 for a missing or non-number value); None for other entries."""
        packed = self._usage
        return None if packed is None else unpack_usage(packed)

    @usage.setter
    def usage(self, values: Usage | None) -> None:
        self._usage = None if values is None else pack_usage(values)

    @property
    def ts(self) -> float:
        """Timestamp in ms since the epoch (`parse_timestamp` of the entry's `timestamp`); nan when missing or
        unparseable."""
        return self._at.ts[self.idx]

    @property
    def kind(self) -> str:
        """`message:<role>` for messages, else the entry type."""
        return f"message:{self.role}" if self.type == "message" else self.type


Usage = tuple[float, float, float, float, float, float]


def pack_usage(values: Usage) -> bytes:
    """The six usage numbers as one marshalled `bytes` (~80 bytes in memory, against ~250 for a tuple of six
    number objects), read back exactly: ints stay ints, floats floats. ~0.1 µs, on every assistant line."""
    return _marshal_dumps(values, 2)  # version 2: no reference table, the fastest to write


def unpack_usage(packed: bytes) -> Usage:
    return _marshal_loads(packed)  # type: ignore[no-any-return]


# Types, roles, tool names and models repeat on every line; one shared object each saves memory.
_STRINGS: dict[str, str] = {}
_MODELS: dict[tuple[Any, Any], tuple[Any, Any]] = {}


def _intern(value: str) -> str:
    if len(value) > 64:
        return value
    return _STRINGS.setdefault(value, value)


def shared_string(value: str) -> str:
    """The one shared copy of a short repeated string (a type, a role, a tool name); any str is accepted."""
    return _intern(value) if type(value) is str else value


def shared_strings() -> dict[str, str]:
    """The shared copies by value (a lookup that misses means: call `shared_string`)."""
    return _STRINGS


def shared_models() -> dict[tuple[Any, Any], tuple[Any, Any]]:
    """The shared (provider, model) pairs by value (a miss means: call `shared_model`)."""
    return _MODELS


def _hashable(*values: Any) -> bool:
    return all(v is None or isinstance(v, str) for v in values)


def shared_model(provider: Any, model: Any) -> tuple[Any, Any]:
    """The one shared (provider, model) pair for these values (any JSON values are accepted)."""
    pair = (provider, model)
    return _MODELS.setdefault(pair, pair) if _hashable(provider, model) else pair


def parse_timestamp(value: Any) -> float:
    """JavaScript's `new Date(value).getTime()` for the values Pi writes; nan when it would be NaN.
    Every entry's is parsed as it loads (`Positions.ts`): the string case, Pi's, comes first."""
    if type(value) is str:
        if not value:
            return math.nan
        try:
            dt = _fromisoformat(value)
        except ValueError:
            return math.nan
        if dt.tzinfo is None:
            # JS reads a date-time without an offset as local time; pitree reads it as UTC so that
            # the order of children does not depend on the machine's timezone.
            return dt.replace(tzinfo=_UTC).timestamp() * 1000.0
        return dt.timestamp() * 1000.0
    if isinstance(value, bool):
        return math.nan
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:  # an int too big for a float: JS reads it as Infinity, past Date's range
            return math.nan
    return math.nan


_fromisoformat = datetime.fromisoformat


try:
    from datetime import UTC as _UTC
except ImportError:  # pragma: no cover - 3.11 has it
    from datetime import timezone

    _UTC = timezone.utc  # noqa: UP017


def js_len(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript's `.length` counts (Pi's estimate uses it).

    Only characters beyond U+FFFF count twice. CPython stores a string with any such character 4 bytes
    per character, which its size shows in O(1); only those strings are re-encoded to count exactly.
    """
    n = len(text)
    if text.isascii() or sys.getsizeof(text) < 4 * n + 56:
        return n
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _num(value: Any) -> float:
    t = type(value)
    if t is int or t is float:
        return value  # type: ignore[no-any-return]
    return 0.0


def _content_chars(content: Any, images: bool) -> int:
    if isinstance(content, str):
        return js_len(content)
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                text = block.get("text")
                if isinstance(text, str):
                    chars += js_len(text)
            elif btype == "image" and images:
                chars += 4800  # Pi counts an image as 4,800 characters (1,200 tokens)
    return chars


def estimate_message_tokens(role: Any, msg: dict[str, Any]) -> int:
    """Pi's `estimateTokens(message)`: characters / 4, rounded up, per role."""
    chars = 0
    if role == "user":
        chars = _content_chars(msg.get("content"), images=False)
    elif role == "assistant":
        content = msg.get("content")
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                btype = block.get("type")
                if btype == "text":
                    chars += js_len(as_str(block.get("text")))
                elif btype == "thinking":
                    chars += js_len(as_str(block.get("thinking")))
                elif btype == "toolCall":
                    chars += js_len(as_str(block.get("name"))) + js_len(json_compact(block.get("arguments")))
    elif role in ("custom", "toolResult"):
        chars = _content_chars(msg.get("content"), images=True)
    elif role == "bashExecution":
        chars = js_len(as_str(msg.get("command"))) + js_len(as_str(msg.get("output")))
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_len(as_str(msg.get("summary")))
    else:
        return 0
    return -(-chars // 4)


def _assistant(node: Node, msg: dict[str, Any]) -> None:
    # One pass over the blocks gives the row text (Pi's extractContent), whether any text is non-blank
    # (hasTextContent), Pi's character count (estimateTokens) and the tool calls (for result rows).
    content = msg.get("content")
    chars = 0
    text = ""
    has_text = False
    calls: list[tuple[Any, str]] | None = None
    if type(content) is list:
        for block in content:
            if type(block) is not dict:
                continue
            btype = block.get("type")
            if btype == "text":
                t = block.get("text")
                if type(t) is not str:
                    t = as_str(t)
                chars += len(t) if t.isascii() else js_len(t)
                if len(text) < ROW_TEXT_MAX:
                    text += t
                if not has_text and t and not t.isspace():
                    has_text = True
            elif btype == "thinking":
                t = block.get("thinking")
                if type(t) is not str:
                    t = as_str(t)
                chars += len(t) if t.isascii() else js_len(t)
            elif btype == "toolCall":
                name, args = block.get("name"), block.get("arguments")
                name_s = name if type(name) is str else as_str(name)
                args_s = json_compact(args)
                chars += js_len(name_s) + (len(args_s) if args_s.isascii() else js_len(args_s))
                if calls is None:
                    calls = []
                calls.append((block.get("id"), format_tool_call(name, args)))
    elif type(content) is str:
        text = content
        has_text = bool(content.strip())
    node.est = -(-chars // 4)
    text = normalize(text[:ROW_TEXT_MAX])
    stop = msg.get("stopReason")
    error_message = msg.get("errorMessage")
    if text:
        node.text = "assistant: " + text
    elif stop == "aborted":
        node.text = "assistant: (aborted)"
    elif error_message:
        node.text = "assistant: " + normalize(as_str(error_message))[:80]
    else:
        node.text = "assistant: (no content)"
    if not has_text and not (stop and stop not in ("stop", "toolUse")):
        node.flags |= HIDDEN_TOOL_ONLY
    if stop == "error" or error_message:
        node.flags |= IS_ERROR
    provider, model = msg.get("provider"), msg.get("model")
    if provider is not None or model is not None:
        node.model = shared_model(provider, model)
    usage = msg.get("usage")
    if type(usage) is dict:
        cost = usage.get("cost")
        node._usage = _marshal_dumps(  # pack_usage, inline
            (
                _num(usage.get("input")),
                _num(usage.get("output")),
                _num(usage.get("cacheRead")),
                _num(usage.get("cacheWrite")),
                _num(usage.get("totalTokens")),
                _num(cost.get("total")) if type(cost) is dict else 0.0,
            ),
            2,
        )
    if calls:
        node.calls = tuple(calls)


def _user(node: Node, msg: dict[str, Any]) -> None:
    content = msg.get("content")
    if type(content) is str:
        node.est = -(-(len(content) if content.isascii() else js_len(content)) // 4)
        node.text = "user: " + normalize(content[:ROW_TEXT_MAX])
        return
    chars = 0
    text = ""
    if type(content) is list:
        for block in content:
            if type(block) is dict and block.get("type") == "text":
                t = block.get("text")
                if type(t) is not str:
                    t = as_str(t)
                if t:
                    chars += len(t) if t.isascii() else js_len(t)
                if len(text) < ROW_TEXT_MAX:
                    text += t
    node.est = -(-chars // 4)
    node.text = "user: " + normalize(text[:ROW_TEXT_MAX])


def _message(node: Node, msg: Any) -> None:
    if not isinstance(msg, dict):
        node.role = None
        node.text = f"[message: {type(msg).__name__ if msg is not None else 'missing'}]"
        return
    role = msg.get("role")
    node.role = _intern(role) if isinstance(role, str) else js_string(role)
    if role == "user":
        _user(node, msg)
        return
    if role == "assistant":
        _assistant(node, msg)
        return
    node.est = estimate_message_tokens(role, msg)
    if role == "toolResult":
        node.call_id = msg.get("toolCallId")
        # Pi shows the formatted call instead once the tree knows it (its toolCallMap); one copy per tool name.
        node.text = _intern(f"[{js_string(msg.get('toolName') or 'tool')}]")
        if msg.get("isError") is True:
            node.flags |= IS_ERROR
    elif role == "bashExecution":
        node.text = "[bash]: " + normalize(as_str(msg.get("command")))
        code = msg.get("exitCode")
        if isinstance(code, int | float) and code != 0:
            node.flags |= IS_ERROR
        if msg.get("excludeFromContext"):
            node.meta = {"excludeFromContext": True}
    else:
        node.text = f"[{node.role}]"


def fill_node(node: Node, obj: dict[str, Any]) -> None:
    """Set type, role, row text, estimate, usage and meta of `node` from its parsed JSON object."""
    etype = obj.get("type")
    node.type = _intern(etype) if isinstance(etype, str) else js_string(etype)
    if etype == "message":
        _message(node, obj.get("message"))
    elif etype == "compaction":
        before = obj.get("tokensBefore")
        summary = as_str(obj.get("summary"))
        if isinstance(before, int | float) and not isinstance(before, bool):
            rounded = math.floor(before / 1000 + 0.5) if math.isfinite(before) else before  # Math.round
            node.text = f"[compaction: {js_string(rounded)}k tokens]"
        else:
            node.text = f"[compaction: {js_string(before)} tokens]"
        node.est = -(-js_len(summary) // 4)
        node.meta = {
            "tokensBefore": before,
            "firstKeptEntryId": obj.get("firstKeptEntryId"),
            "summary": summary,
        }
        if obj.get("fromHook"):
            node.flags |= FROM_HOOK
    elif etype == "branch_summary":
        summary = as_str(obj.get("summary"))
        node.text = "[branch summary]: " + normalize(summary)  # Pi shows it whole (cut only by the width)
        node.est = -(-js_len(summary) // 4) if obj.get("summary") else 0
        node.meta = {"fromId": obj.get("fromId"), "summary": summary, "hasSummary": bool(obj.get("summary"))}
        if obj.get("fromHook"):
            node.flags |= FROM_HOOK
    elif etype == "custom_message":
        content = obj.get("content")
        text = content if isinstance(content, str) else extract_content(content, max_len=10**9)
        node.text = f"[{js_string(obj.get('customType'))}]: " + normalize(text)  # whole, as Pi shows it
        node.est = estimate_message_tokens("custom", {"content": content})
    elif etype == "model_change":
        node.text = f"[model: {js_string(obj.get('modelId'))}]"
        node.meta = {"provider": obj.get("provider"), "modelId": obj.get("modelId")}
    elif etype == "thinking_level_change":
        node.text = f"[thinking: {js_string(obj.get('thinkingLevel'))}]"
        node.meta = {"thinkingLevel": obj.get("thinkingLevel")}
    elif etype == "custom":
        node.text = f"[custom: {js_string(obj.get('customType'))}]"
        node.meta = {"customType": obj.get("customType")}
    elif etype == "label":
        label = obj.get("label")
        node.text = f"[label: {js_string(label) if label is not None else '(cleared)'}]"
        # the raw timestamp too: an export writes the label again as Pi stored it
        node.meta = {"targetId": obj.get("targetId"), "label": label, "timestamp": obj.get("timestamp")}
    elif etype == "session_info":
        name = obj.get("name")
        shown = normalize(js_string(name)) if name else "(empty)"
        node.text = f"[name: {shown}]"
        node.meta = {"name": name}
    else:
        node.text = f"[{node.type or 'unknown type'}]"
