"""The first screen of a big session, kept beside its tree cache so a second open shows it before the tree is read.

What is kept: the rows of the default filter around the leaf (each row's guides, its parts with the name of the
style each is drawn in, its `← leaf` marker, the figures of its columns), which of them is the leaf's, and the
status bar's counts. It is written by the explorer after a big session's first screen and when it leaves one;
it is shown only for the very file it was made from: same device, inode, size and modification time, and the
same bytes at the tree cache's sample offsets. A file that changed in any way (one appended line is enough)
gets no preview: the explorer then loads as it does without one, so nothing stale is ever on screen.

Everything here is data for display, made safe when it was drawn; the file is JSON (orjson), and one that
cannot be read as this format is ignored. `PITREE_NO_CACHE=1` turns it off with the tree cache.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pitree.store import tree_cache

FORMAT = 1
MIN_BYTES = 16 << 20  # smaller sessions load fast enough for their real first screen
AROUND = 150  # rows kept above and below the leaf's: several screens of a tall terminal


@dataclass(frozen=True, slots=True)
class ScreenRow:
    """One tree row as the tree view drew it, without the parts that depend on the width or the clock."""

    id: str
    prefix: str  # Pi's guides, uncut
    parts: tuple[tuple[str, str], ...]  # (text, style name) after the guides: fold sign, dot, label, body
    marker: str  # `  ← leaf`, or the hidden leaf's note, or ""
    active: bool  # on the leaf's path
    model: str | None
    tokens: float | None  # the reply's total tokens, for the tokens column (None: no usage)
    ts: float  # ms since the epoch (NaN: no time), for the age column


@dataclass(frozen=True, slots=True)
class FirstScreen:
    """The kept rows (`rows[i]` is row `first + i` of `total`), the leaf's row among them, and the status."""

    rows: tuple[ScreenRow, ...]
    leaf_row: int  # index into `rows`
    first: int
    total: int
    status: dict[str, Any]  # StatusBar fields: name, entries, branches, leaf, skipped, context_tokens


def _target(path: Path) -> Path | None:
    folder = tree_cache.cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return folder / f"{key}.screen"


def _identity(path: Path, size: int) -> list[Any] | None:
    """What the file must still be for its kept screen to show: stat fields and its sampled bytes."""
    try:
        st = os.stat(path)
        if st.st_size != size:
            return None
        with open(path, "rb") as fh:
            sample = tree_cache.fingerprint(fh, size)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, sample.hex()]


def save(path: Path, size: int, screen: FirstScreen) -> bool:
    """Keep `screen` for `path` as it is at `size` bytes; False (and nothing kept) if the file is not that now."""
    target = _target(path)
    ident = _identity(path, size)
    if target is None or ident is None or size < MIN_BYTES:
        return False
    rows = [[r.id, r.prefix, [list(p) for p in r.parts], r.marker, r.active, r.model, r.tokens, r.ts]
            for r in screen.rows]
    payload = {
        "format": FORMAT,
        "file": ident,
        "rows": rows,
        "leaf_row": screen.leaf_row,
        "first": screen.first,
        "total": screen.total,
        "status": screen.status,
    }
    try:
        data = orjson.dumps(payload)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except (OSError, TypeError, orjson.JSONEncodeError):
        return False
    return True


STATUS = {"name": str, "entries": int, "branches": int, "leaf": str, "skipped": int, "context_tokens": int}


def _status(kept: object) -> dict[str, Any] | None:
    """The status bar's kept counts, each of its type (or None where that may be missing), nothing else."""
    if not isinstance(kept, dict):
        return None
    out: dict[str, Any] = {}
    for key, kind in STATUS.items():
        value = kept.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            return None
        if key in kept:
            out[key] = value
    return out


def load(path: Path) -> FirstScreen | None:
    """The screen kept for `path` if the file is exactly what it was made from, else None."""
    target = _target(path)
    if target is None:
        return None
    try:
        size = os.stat(path).st_size
        if size < MIN_BYTES:
            return None
        data = orjson.loads(target.read_bytes())
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("file") != _identity(path, size):
            return None
        rows = tuple(
            ScreenRow(
                str(i), str(prefix), tuple((str(t), str(s)) for t, s in parts), str(marker), bool(active),
                None if model is None else str(model), None if tokens is None else float(tokens),
                float("nan") if ts is None else float(ts),
            )
            for i, prefix, parts, marker, active, model, tokens, ts in data["rows"]
        )
        leaf_row, first, total = int(data["leaf_row"]), int(data["first"]), int(data["total"])
        status = _status(data["status"])
        if not rows or not 0 <= leaf_row < len(rows) or status is None:
            return None
    except (OSError, ValueError, TypeError, KeyError, orjson.JSONDecodeError):
        return None
    return FirstScreen(rows, leaf_row, first, total, status)

