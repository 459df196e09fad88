"""Splitting session bytes into lines and parsing each with orjson, keeping line numbers and byte offsets.

Nothing here raises on bad input: each line comes out either as a parsed JSON object or as a skip with a
reason. Lines Pi itself would read (CRLF endings, invalid UTF-8 that Node decodes to U+FFFD, a last line
without a newline) are parsed and carry a note instead of being dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import IO, Any

import orjson

BOM = b"\xef\xbb\xbf"

# (line number, byte offset, byte length without newline, object or None, note or skip reason or None)
ParsedLine = tuple[int, int, int, dict[str, Any] | None, str | None]


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _js_int(digits: str) -> int | float:
    value = int(digits)
    return value if -(2**63) <= value < 2**64 else float(digits)  # JavaScript has only doubles


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def _loads(raw: bytes | memoryview | str) -> tuple[Any, str | None]:
    """orjson, or JSON.parse's reading of the two things orjson refuses and JavaScript reads: a lone UTF-16
    surrogate escape (`"\\ud83d"`, left when a JS string is cut inside an emoji; shown as U+FFFD) and a
    number beyond a double (Infinity)."""
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError as exc:
        msg = str(exc)
        if "surrogate" not in msg and "infinity" not in msg:
            raise
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8")  # invalid UTF-8: the caller replaces it
        try:
            value = json.loads(text, parse_constant=_no_constant, parse_int=_js_int)
        except (ValueError, RecursionError):
            raise exc from None
    return _without_surrogates(value), _JS_ONLY


_JS_ONLY = "a lone UTF-16 surrogate (shown as U+FFFD) or a number beyond a double, read as Pi reads it"


def parse_line(raw: bytes | memoryview) -> tuple[dict[str, Any] | None, str | None]:
    """Parse one line (no newline). Returns (object, note) or (None, reason)."""
    note = None
    try:
        value, note = _loads(raw)
    except (orjson.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = str(exc)
        if "UTF-8" not in msg and "utf-8" not in msg:
            return None, f"not valid JSON: {msg}"
        # Node decodes the file as UTF-8 with replacement characters before JSON.parse, so Pi keeps
        # such a line; pitree does the same and says so.
        try:
            value, note2 = _loads(bytes(raw).decode("utf-8", "replace"))
        except orjson.JSONDecodeError as exc2:
            return None, f"not valid JSON: {exc2}"
        note = "; ".join(n for n in ("invalid UTF-8 replaced with U+FFFD (as Pi reads it)", note2) if n)
    if not isinstance(value, dict):
        return None, f"JSON value is {_describe(value)}, not an object"
    return value, note


def _slow_line(raw: bytes, torn: bool) -> tuple[dict[str, Any] | None, str | None, int]:
    """Everything but a plain `{...}` line: blank, CRLF, invalid UTF-8, non-objects, torn lines.

    Returns (object or None, note or reason, bytes to drop from the end (1 for a CRLF's CR)).
    """
    drop = 0
    note: str | None = None
    if raw.endswith(b"\r"):
        raw = raw[:-1]
        drop = 1
        note = "CRLF line ending"
    if not raw.strip():
        return None, "blank line", drop
    obj, why = parse_line(raw)
    if obj is None:
        reason = why or "unparseable"
        if torn:
            reason = "torn last line (no newline at end of file): " + reason
        return None, reason, drop
    notes = [n for n in (note, why) if n]
    if torn:
        notes.append("last line has no newline (Pi reads it; a writer may still be adding to it)")
    return obj, "; ".join(notes) if notes else None, drop


def iter_lines(data: bytes, base_offset: int = 0, base_line: int = 1, final: bool = True) -> Iterator[ParsedLine]:
    """Yield every line of `data`, which starts at `base_offset` / line `base_line` of the file.

    With `final`, a last line without a newline is parsed too (Pi reads it) and marked; without it, the
    caller must only pass complete lines (the tailer holds a torn line back until its newline arrives).
    """
    lines = data.split(b"\n")
    last = lines.pop()  # what follows the final newline: b"" when data ends with one
    if final and last:
        lines.append(last)
    torn_index = len(lines) - 1 if final and last else -1
    offset = base_offset
    line_no = base_line
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    for i, raw in enumerate(lines):
        n = len(raw)
        start = offset
        if i == 0 and base_offset == 0 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
            start += len(BOM)
        m = len(raw)
        if m > 1 and raw[0] == 0x7B and raw[-1] == 0x7D and i != torn_index:  # the common `{...}` line
            try:
                obj = loads(raw)
            except decode_error:
                obj = None
            if type(obj) is dict:
                yield line_no, start, m, obj, None
                offset += n + 1
                line_no += 1
                continue
        obj, note, drop = _slow_line(raw, i == torn_index)
        yield line_no, start, m - drop, obj, note
        offset += n + 1
        line_no += 1


def has_bom(data: bytes) -> bool:
    """True when the file starts with a UTF-8 byte-order mark (Pi's JSON.parse fails on that header)."""
    return data.startswith(BOM)


def line_blocks(fh: IO[bytes], start: int, stop: int | None, chunk_size: int) -> Iterator[tuple[bytes, int]]:
    """Read `fh` from byte `start` up to `stop` (the end when None), `chunk_size` at a time; for each read, the
    complete lines it finished (b"" when none) and the offset read up to. Bytes after the last newline wait for
    the next read; at the end they are left out (a torn line that may still be being written)."""
    fh.seek(start)
    # Where the line not finished yet starts. A line longer than a chunk is not kept in pieces: once its newline
    # is read it is read again whole, one allocation (joining the pieces at every read copies a huge line once
    # per chunk; keeping them and joining once holds it twice).
    line_start = start
    pos = start
    while stop is None or pos < stop:
        chunk = fh.read(chunk_size if stop is None else min(chunk_size, stop - pos))
        if not chunk:
            return
        chunk_start, pos = pos, pos + len(chunk)
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            yield b"", pos
            continue
        if line_start == chunk_start:
            data = chunk[:cut] if cut < len(chunk) else chunk
        else:
            del chunk
            fh.seek(line_start)
            data = fh.read(chunk_start + cut - line_start)
            fh.seek(pos)
        line_start = chunk_start + cut
        yield data, pos
