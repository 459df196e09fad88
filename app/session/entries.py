"""The compact per-entry record (`Node`) that pitree keeps in memory (`fill.fill_node` builds one from JSON).

A `Node` holds only what the tree, the row list and search need: ids, type/role, flags, tool call ids, links;
its tree's `Columns` (`columns.py`) hold its file position, time, Pi's token estimate, model, usage, meta and
(once the tree takes them) its row text and tool call texts. The full JSON is re-read from `offset`/`length`
when an entry is opened, so a session costs memory in proportion to its entry count, not to its size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from marshal import dumps as _marshal_dumps
from marshal import loads as _marshal_loads
from typing import Any, NamedTuple

from pitree.session.columns import Columns
from pitree.session.estimate import estimate_message_tokens as estimate_message_tokens  # for older importers
from pitree.session.estimate import js_len as js_len  # for older importers

# flag bits
HIDDEN_TOOL_ONLY = 1  # assistant turn with no text that is neither errored nor aborted (Pi hides it)
IS_ERROR = 2  # assistant stopReason error / toolResult isError / bash exit != 0
SYNTHETIC_ID = 4  # the id was made by pitree (v1 migration, or an entry without a usable id)
FROM_HOOK = 8
NO_CONTEXT_USAGE = 32  # an assistant reply stopped by `aborted` or `error`: Pi never sizes the context from its usage
ALWAYS_HIDDEN = 16  # a Pi 1.x `usage` entry: Pi's tree never shows it, under any filter, even as the leaf

# Pi 1.6 hides these under the default and no-tools filters; so does pitree oh-my-pi's bookkeeping entries
# (its tree selector lives in a package the registry here lacks; these are its settings and usage records).
SETTINGS_TYPES = frozenset(
    {"label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info"}
    | {"model_usage", "title_change", "service_tier_change", "ttsr_injection", "credential_pin", "mode_change"}
)


Positions = Columns  # its name for its older importers, from before it held the texts

Tag = tuple[str, str | None, int]  # an entry's (type, role, flags): `Node._tag`
_TAGS: dict[Tag, Tag] = {}
TAGS_MAX = 4096  # shared tags at most: past them (a file of made-up types), each entry has its own


def tag_of(etype: str, role: str | None, flags: int) -> Tag:
    """The shared (type, role, flags) tuple: a session has a few dozen kinds of entry, and one tuple each saves
    two pointers an entry over three slots."""
    key = (etype, role, flags)
    found = _TAGS.get(key)
    if found is None:
        if len(_TAGS) >= TAGS_MAX:
            return key
        found = _TAGS.setdefault(key, key)
    return found


_NO_TAG = tag_of("", None, 0)

_NOWHERE = Columns()  # a Node not yet placed: reading its position fails with an IndexError


class Node:
    """One entry of a session, compact. `children` is filled by SessionTree.

    Where the entry is in the file (`line`, `offset`, `length`) and what else its tree keeps of it is in its
    tree's `Columns` at `idx`: `_at`, a class attribute of the tree's own subclass (`node_class`), one pointer a
    tree instead of a slot on every entry. A plain `Node` is placed nowhere."""

    _at: Columns = _NOWHERE

    __slots__ = (
        "id",
        "parent_id",
        "idx",
        "_tag",
        "_text",
        "_calls",
        "_kids",
        "parent",
    )

    def __init__(self) -> None:
        self.id: str = ""
        self.parent_id: str | None = None
        self.idx = 0  # position among entries in file order (header excluded)
        # (type, role, flags) as one shared tuple (`tag_of`): few kinds of entry, one pointer an entry for them
        self._tag: Tag = _NO_TAG
        self._text: str | None = ""  # the row text until the tree takes it in (`text`)
        # in the columns, once placed (`Columns.put`): `est`, `model`, `usage` and `meta` (properties below)
        # an assistant turn's tool calls (`calls`): their (id, text) pairs until the tree's columns take the texts,
        # then their ids alone: the id itself for one call with a string id (most turns), else a tuple of them
        # (never of tuples). A tool result's toolCallId (`call_id`) instead: an entry has one or the other.
        self._calls: tuple[Any, ...] | str | Any = None
        # the children (`children`): None, the one child itself (most entries have one), or a list of two or more
        self._kids: Node | list[Node] | None = None
        self.parent: Node | None = None

    def __repr__(self) -> str:
        return f"Node({self.id!r}, {self.type}{'/' + self.role if self.role else ''}, line {self.line})"

    @property
    def type(self) -> str:
        """The entry's `type` (a non-string one as JavaScript would print it)."""
        return self._tag[0]

    @type.setter
    def type(self, value: str) -> None:
        tag = self._tag
        self._tag = tag_of(value, tag[1], tag[2])

    @property
    def role(self) -> str | None:
        """A message's role; None for other entries."""
        return self._tag[1]

    @role.setter
    def role(self, value: str | None) -> None:
        tag = self._tag
        self._tag = tag_of(tag[0], value, tag[2])

    @property
    def flags(self) -> int:
        """The flag bits (HIDDEN_TOOL_ONLY, IS_ERROR, ...)."""
        return self._tag[2]

    @flags.setter
    def flags(self, value: int) -> None:
        tag = self._tag
        self._tag = tag_of(tag[0], tag[1], value)

    @property
    def children(self) -> Sequence[Node]:
        """The entry's children in the tree, in Pi's order (by timestamp, ties in file order). Read only: the
        tree links them (`SessionTree._insert_child`)."""
        kids = self._kids
        if kids is None:
            return ()
        return kids if type(kids) is list else (kids,)  # type: ignore[return-value]

    @property
    def text(self) -> str:
        """Pi's row text (a tool result's is resolved by the tree: `SessionTree.row_text`). Once the entry is
        in a tree, the tree keeps it (`Columns.texts`), not the entry."""
        text = self._text
        return text if text is not None else self._at.texts.get(self.idx)

    @text.setter
    def text(self, value: str) -> None:
        self._text = value

    @property
    def call_id(self) -> Any:
        """A tool result's toolCallId (the raw JSON value; the tree shares the call's string); None for others."""
        return self._calls if self.role == "toolResult" else None

    @call_id.setter
    def call_id(self, value: Any) -> None:
        if self.role == "toolResult":
            self._calls = value
        elif value is not None:
            raise ValueError("only a tool result has a toolCallId")

    @property
    def calls(self) -> tuple[tuple[Any, str], ...] | None:
        """An assistant turn's tool calls, ((toolCall id, Pi's formatted call), ...); None without any."""
        calls = self._calls
        if calls is None or self.role == "toolResult":
            return None
        if type(calls) is str:
            at = self._at
            return ((calls, at.call_texts.get(at.first_call[self.idx])),)
        if type(calls[0]) is tuple:  # the pairs themselves
            return calls  # type: ignore[return-value]
        at = self._at
        first = at.first_call[self.idx]
        return tuple(zip(calls, at.call_texts.range(first, first + len(calls)), strict=True))

    @calls.setter
    def calls(self, value: tuple[tuple[Any, str], ...] | None) -> None:
        if self.role == "toolResult":
            raise ValueError("a tool result makes no tool calls")
        self._calls = value

    def call_text(self, call_id: Any) -> str | None:
        """Pi's formatted text of this turn's call with this id (the last such call), None without one."""
        calls = self._calls
        if calls is None or self.role == "toolResult":
            return None
        if type(calls) is str:  # most turns
            return self._at.call_texts.get(self._at.first_call[self.idx]) if calls == call_id else None
        if type(calls[0]) is tuple:  # (id, text) pairs
            for cid, text in reversed(calls):
                if cid == call_id:
                    return text  # type: ignore[no-any-return]
            return None
        k = len(calls) - 1
        while k >= 0:
            if calls[k] == call_id:
                return self._at.call_texts.get(self._at.first_call[self.idx] + k)
            k -= 1
        return None

    def call_ids(self) -> tuple[Any, ...]:
        """The toolCall ids of `calls`, in order (each as the JSON has it: not always a string)."""
        calls = self._calls
        if calls is None or self.role == "toolResult":
            return ()
        if type(calls) is str:
            return (calls,)
        if type(calls[0]) is tuple:
            return (calls[0][0],) if len(calls) == 1 else tuple([pair[0] for pair in calls])
        return calls  # type: ignore[return-value]

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
    def est(self) -> int:
        """Pi's chars/4 estimate of what this entry contributes to the context."""
        return self._at.est[self.idx]

    @est.setter
    def est(self, value: int) -> None:
        try:
            self._at.est[self.idx] = value
        except OverflowError:  # past 4 bytes: the column widens
            self._at.set_est(self.idx, value)

    @property
    def model(self) -> tuple[Any, Any] | None:
        """(provider, model) of an assistant message or a usage entry, raw (any JSON values); None without."""
        return self._at.model_of(self.idx)

    @model.setter
    def model(self, pair: tuple[Any, Any] | None) -> None:
        at = self._at
        if at is _NOWHERE:
            raise IndexError("an entry not yet placed in a tree's columns has no model")
        at.model[self.idx] = at.model_no(pair)

    @property
    def meta(self) -> dict[str, Any] | None:
        """What a few entry types add (see `fill_node`); None for most."""
        return self._at.meta.get(self.idx)

    @meta.setter
    def meta(self, value: dict[str, Any] | None) -> None:
        if self._at is _NOWHERE:
            raise IndexError("an entry not yet placed in a tree's columns has no meta")
        if value is None:
            self._at.meta.pop(self.idx, None)
        else:
            self._at.meta[self.idx] = value

    @property
    def _usage(self) -> bytes | None:
        """`pack_usage` of the usage the entry carries (see `usage`), None without."""
        return self._at.usage_of(self.idx)

    @_usage.setter
    def _usage(self, packed: bytes | None) -> None:
        self._at.set_usage(self.idx, packed)

    @property
    def usage(self) -> UsageNumbers | None:
        """The usage the entry carries (an assistant or tool-result message, a `usage` entry, a compaction or
        branch summary: Pi 1.x's sources), each number as the file has it (int or float; 0.0 for a missing or
        non-number value); None for other entries. Made on each read: the entry keeps it packed."""
        packed = self._usage
        return None if packed is None else unpack_usage(packed)

    @usage.setter
    def usage(self, values: UsageNumbers | tuple[float, ...] | None) -> None:
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


def node_class(at: Columns) -> type[Node]:
    """The `Node` subclass whose entries are placed in `at` (made once a `Columns`)."""
    made = at.node_type
    if made is None:
        made = at.node_type = type("Node", (Node,), {"__slots__": (), "_at": at})
    return made  # type: ignore[no-any-return]


class UsageNumbers(NamedTuple):
    """A usage object's six numbers, by name: `usage.input`, ..., `usage.cost` (`cost.total` in the file)."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    total_tokens: float  # as stored; Pi's own totals add the four parts up (`tokens`)
    cost: float

    @property
    def tokens(self) -> float:
        """input + output + cacheRead + cacheWrite: Pi's `tokens.total`."""
        return self.input + self.output + self.cache_read + self.cache_write


def pack_usage(values: UsageNumbers | tuple[float, ...]) -> bytes:
    """The six usage numbers as one marshalled `bytes` (a third of what a tuple of six number objects costs),
    read back exactly: ints stay ints, floats floats. Cheap enough to run on every assistant line."""
    # marshal takes plain tuples only; version 2: no reference table, the fastest to write
    return _marshal_dumps(tuple(values), 2)


def unpack_usage(packed: bytes) -> UsageNumbers:
    return UsageNumbers._make(_marshal_loads(packed))


# Types, roles and tool names repeat on every line; one shared object each saves memory. (Models are numbered
# once a tree, in its `Columns.models`.)
_STRINGS: dict[str, str] = {}


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


def parse_timestamp(value: Any) -> float:
    """JavaScript's `new Date(value).getTime()` for the values Pi writes; nan when it would be NaN.
    Every entry's is parsed as it loads (`Columns.ts`): the string case, Pi's, comes first."""
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
