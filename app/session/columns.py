"""`Columns`: what a tree keeps of its entries by `Node.idx`, in arrays, instead of on each `Node`.

As attributes of a million entries these cost several times as much (a slot is 8 bytes on every entry, an int
or a `bytes` object tens more); `Node`'s properties read and write them here.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from itertools import islice
from marshal import loads as _loads
from typing import TYPE_CHECKING, Any

from pitree.session.row_texts import RowTexts
from pitree.session.spilled_bytes import CHUNK, SpilledBytes

if TYPE_CHECKING:
    from pitree.session.entries import Node


def _set_wide(column: array, i: int, value: int) -> array:
    """`column[i] = value`, the column made 8 bytes an item first when `value` does not fit in 4 (returned)."""
    try:
        column[i] = value
    except OverflowError:
        column = array("q", column)
        column[i] = value
    return column


class Columns:
    """An entry's place in the file (line number, byte offset and byte length), when it was written (ms since the
    epoch, nan when missing or unparseable), Pi's token estimate (`est`), its (provider, model) as a number in
    `models` (`model`, 0 for none), its packed usage (`usage_blob`, a `SpilledBytes`: entry i's bytes ending at
    `usage_end[i]`, none when empty), its `meta` (a dict by idx: few entries have one) and its row text (`texts`).
    `call_texts` holds Pi's formatted text of every tool call in file order, and `first_call` the number there of
    each entry's first one (the count of calls before it).

    `put` places the next entry; an entry's estimate, model and usage are set after it is placed and before the
    next one is (`set_usage` only takes the newest), or for many at once by `extend_packed` and `extend_models`.
    """

    __slots__ = (
        "line",
        "offset",
        "length",
        "ts",
        "est",
        "model",
        "models",
        "_model_no",
        "usage_end",
        "usage_blob",
        "meta",
        "texts",
        "call_texts",
        "first_call",
        "node_type",
    )

    def __init__(self) -> None:
        self.node_type: type | None = None  # the `Node` subclass placed here (`entries.node_class`)
        self.clear()

    def clear(self) -> None:
        """Hold no entry (its tree is let go of): an entry of it still alive somewhere no longer keeps the
        columns' memory, which its class refers to."""
        self.line = array("q")
        self.offset = array("q")
        self.length = array("q")
        self.ts = array("d")
        self.est = array("I")
        self.model = array("I")
        self.models: list[tuple[Any, Any]] = []
        self._model_no: dict[tuple[Any, Any], int] = {}
        self.usage_end = array("I")
        self.usage_blob = SpilledBytes()
        self.meta: dict[int, dict[str, Any]] = {}
        self.texts = RowTexts()
        self.call_texts = RowTexts()
        self.first_call = array("I")

    def put(self, idx: int, line: int, offset: int, length: int, ts: float) -> None:
        if idx != len(self.line):
            self.cut(idx)
        self.line.append(line)
        self.offset.append(offset)
        self.length.append(length)
        self.ts.append(ts)
        self.est.append(0)
        self.model.append(0)
        ends = self.usage_end
        ends.append(ends[-1] if ends else 0)  # where the usage so far ends: none yet for this entry

    def cut(self, idx: int) -> None:
        """Make entry `idx` the next one to be put (drops what is at and after it, pads before: zeros, nan
        timestamps, no model, usage or meta). The texts are cut as the next ones are put (`RowTexts.put`)."""
        had = len(self.line)
        for column in (self.line, self.offset, self.length, self.est, self.model):
            del column[idx:]
            if len(column) < idx:
                column.extend(array(column.typecode, [0]) * (idx - len(column)))
        del self.ts[idx:]
        if len(self.ts) < idx:
            self.ts.extend(array("d", [math.nan]) * (idx - len(self.ts)))
        ends = self.usage_end
        del ends[idx:]
        end = ends[-1] if ends else 0
        self.usage_blob.truncate(end)
        if len(ends) < idx:
            ends.extend(array(ends.typecode, [end]) * (idx - len(ends)))
        meta = self.meta
        if meta and idx < had:  # rarely: a cut into what was read
            for gone in [i for i in meta if i >= idx]:
                del meta[gone]

    # ---- per entry (`Node`'s properties) --------------------------------------------------------------------

    def set_est(self, idx: int, value: int) -> None:
        self.est = _set_wide(self.est, idx, value)

    def model_no(self, pair: tuple[Any, Any] | None) -> int:
        """The number of (provider, model) `pair` in `models` (added when new), 0 for None."""
        if pair is None:
            return 0
        provider, model = pair
        if not (provider is None or type(provider) is str) or not (model is None or type(model) is str):
            # what Pi writes as a string is something else (a number, a list, true): numbered, not looked up, so
            # that `1` and `true` (equal in Python) stay apart
            self.models.append(pair)
            return len(self.models)
        found = self._model_no.get(pair)
        if found is None:
            self.models.append(pair)
            found = self._model_no[pair] = len(self.models)
        return found

    def model_of(self, idx: int) -> tuple[Any, Any] | None:
        n = self.model[idx]
        return self.models[n - 1] if n else None

    def usage_of(self, idx: int) -> bytes | None:
        """The packed usage of entry `idx` (`pack_usage`), None without one."""
        ends = self.usage_end
        start, end = ends[idx - 1] if idx else 0, ends[idx]
        return self.usage_blob.read(start, end) if end > start else None

    def usage_numbers(self, idx: int) -> tuple[float, ...] | None:
        """Entry `idx`'s usage numbers as a plain tuple (`entries.unpack_usage` without the names), None without."""
        ends = self.usage_end
        start, end = ends[idx - 1] if idx else 0, ends[idx]
        return _loads(self.usage_blob.read(start, end)) if end > start else None  # type: ignore[no-any-return]

    def usages(self, count: int) -> Iterator[tuple[int, tuple[float, ...]]]:
        """(idx, `usage_numbers`) of each entry that carries usage among the first `count`, in file order."""
        blob, start = self.usage_blob, 0
        window, base = b"", 0  # the bytes from `base` on, read a chunk at a time
        for idx, end in enumerate(islice(self.usage_end, count)):
            if end > start:
                while end > base + len(window):
                    more = blob.read(base + len(window), base + len(window) + CHUNK)
                    if not more:
                        break
                    window, base = window[start - base :] + more, start
                yield idx, _loads(window[start - base : end - base])
                start = end

    def set_usage(self, idx: int, packed: bytes | None) -> None:
        """Set the packed usage of the newest entry."""
        ends, blob = self.usage_end, self.usage_blob
        if idx != len(ends) - 1:
            raise ValueError(f"usage is set on the newest entry ({len(ends) - 1}), not on {idx}")
        start = ends[idx - 1] if idx else 0
        if ends[idx] != start:
            blob.truncate(start)  # what it had (nothing after it: it is the newest)
        end = start
        if packed:
            blob.extend(packed)
            end += len(packed)
        try:
            ends[idx] = end
        except OverflowError:
            self.usage_end = _set_wide(ends, idx, end)

    # ---- many at once ---------------------------------------------------------------------------------------

    def extend_packed(
        self,
        start: int,
        lines: array,
        shift: int,
        offsets: bytes,
        lengths: bytes,
        ts: bytes,
        est: tuple[str, bytes],
        usage_blob: bytes,
        usage_ends: bytes,
    ) -> None:
        """Place entries from `start` on, their columns as a segment packs them (`segment.py`): line numbers
        counted from `shift` + 1; offsets, lengths ('q'), timestamps ('d') and estimates as array bytes; the
        usage of all of them in one bytes, where each ends in it ('q' bytes). Models go in `extend_models`."""
        self.cut(start)
        self.line.extend(array("q", [line + shift for line in lines]) if shift else lines)
        self.offset.frombytes(offsets)
        self.length.frombytes(lengths)
        self.ts.frombytes(ts)
        typecode, data = est
        if typecode == self.est.typecode:
            self.est.frombytes(data)
        else:
            column = array(typecode)
            column.frombytes(data)
            try:
                self.est.extend(column.tolist())
            except OverflowError:  # past 4 bytes: the column widens (what went in before the error goes again)
                del self.est[start:]
                self.est = array("q", self.est)
                self.est.extend(column.tolist())
        ends = array("q")
        ends.frombytes(usage_ends)
        end = len(self.usage_blob)
        self.usage_blob.extend(usage_blob)
        if len(self.usage_blob) > 0xFFFFFFFF and self.usage_end.typecode == "I":
            self.usage_end = array("q", self.usage_end)
        self.usage_end.extend(array(self.usage_end.typecode, [e + end for e in ends]))

    def extend_models(self, start: int, models: list[tuple[Any, Any]], model_of: array) -> None:
        """The models of the entries `extend_packed` just placed from `start` on: each entry's number in `models`
        from 1 (0: none)."""
        del self.model[start:]
        known = self._model_no  # string pairs only: another pair is never equal to one of them
        try:  # most pairs were seen before: a dict lookup each
            numbers = [0, *(known.get(m) or self.model_no(m) for m in models)]
        except TypeError:  # an unhashable pair: each numbered on its own
            numbers = [0, *(self.model_no(m) for m in models)]
        self.model.extend(array("I", [numbers[k] for k in model_of]))

    def take_texts(self, nodes: list[Node]) -> None:
        """Keep the row texts and the tool calls' texts of `nodes` (consecutive, placed in these columns from
        `nodes[0].idx` on) here, and no longer on the nodes; their calls keep only their ids (see `Node._calls`)."""
        if not nodes:
            return
        start = nodes[0].idx
        self.texts.extend(start, [node._text for node in nodes])  # type: ignore[misc]  # new: not None
        first_call = self.first_call
        if len(first_call) != start:  # read again from `start` (a cut) or after a gap: counted from the last
            del first_call[start:]
            first_call.extend(array("I", [len(self.call_texts)]) * (start - len(first_call)))
        call_texts: list[str] = []
        first = number = len(self.call_texts)
        mark = first_call.append
        for node in nodes:
            node._text = None
            mark(number)
            calls = node._calls
            if calls is not None and node._tag[1] != "toolResult":  # `role`: (id, text) pairs, as `fill` gives them
                if len(calls) == 1:  # most turns
                    call_id, text = calls[0]  # type: ignore[str-unpack]  # a pair, not yet an id
                    node._calls = call_id if type(call_id) is str else (call_id,)
                    call_texts.append(text)
                    number += 1
                else:
                    node._calls = tuple([pair[0] for pair in calls])
                    call_texts.extend([pair[1] for pair in calls])
                    number += len(calls)
        self.call_texts.extend(first, call_texts)
