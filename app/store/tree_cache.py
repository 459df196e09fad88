"""A cache of parsed trees in the user cache folder, so reopening a big session skips the parse.

Keyed by the file's real path; valid while the file is the same file (device + inode), unchanged (same
size and modification time), or grown while still starting with the bytes that were parsed (samples of
the content at evenly spaced offsets, plus the last 4 KiB before the cached end). Sessions only grow, so a
file that grew reuses the cached prefix and parses just the new lines. Anything else (rewritten, replaced,
shrunk, another cache format) is a miss. Only v2/v3 files are cached; the
cache never touches the session file. `PITREE_CACHE_DIR` moves it, `PITREE_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from pathlib import Path
from typing import Any

from ..session.gcpause import BIG, gc_paused
from ..session.load import SessionBuilder, node_rows
from ..session.tree import SessionTree

FORMAT = 4
MIN_BYTES = 2 << 20  # smaller files parse faster than the cache can be checked
SAMPLES = 32
SAMPLE_BYTES = 256
TAIL_BYTES = 4096


def cache_dir() -> Path | None:
    if os.environ.get("PITREE_NO_CACHE"):
        return None
    override = os.environ.get("PITREE_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_path("pitree")) / "trees"


def _cache_file(path: Path) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return folder / f"{key}.tree"


def _fingerprint(fh: Any, size: int) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for i in range(SAMPLES):
        fh.seek(size * i // SAMPLES)
        digest.update(fh.read(min(SAMPLE_BYTES, size)))
    fh.seek(max(0, size - TAIL_BYTES))
    digest.update(fh.read(min(TAIL_BYTES, size)))
    return digest.digest()


def load_cached(path: Path) -> SessionBuilder | None:
    """A builder holding the cached tree of `path`'s first N bytes (the caller feeds the rest), or None."""
    target = _cache_file(path)
    if target is None:
        return None
    try:
        blob = target.read_bytes()
        st = os.stat(path)
        with gc_paused(big=len(blob) > BIG):
            data = marshal.loads(blob)
        if not isinstance(data, tuple) or len(data) != 10 or data[0] != FORMAT:
            return None
        _, ident, size, fingerprint, header, version, next_line, rows, skipped, problems = data
        if ident[:2] != (st.st_dev, st.st_ino) or st.st_size < size or st.st_mtime_ns < ident[2]:
            return None
        if st.st_size == ident[3] and st.st_mtime_ns != ident[2]:
            return None  # same size, touched since: rewritten in place
        with open(path, "rb") as fh:
            if _fingerprint(fh, size) != fingerprint:
                return None
    except (OSError, ValueError, EOFError, TypeError):
        return None
    builder = SessionBuilder()
    builder.restore_header(header, version)
    builder.adopt_segment(rows, skipped, problems, next_line - 1, size)
    tree = builder.tree
    tree.problems = list(dict.fromkeys(tree.problems))  # linking found the tree's own notes again
    return builder


def save(path: Path, tree: SessionTree, builder: SessionBuilder) -> None:
    """Remember the tree of the complete lines read so far (best effort: a failure only costs speed)."""
    target = _cache_file(path)
    if target is None or builder.size < MIN_BYTES or tree.version < 2 or tree.header is None:
        return
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            fingerprint = _fingerprint(fh, builder.size)
        rows = node_rows(tree.nodes)
        skipped = [(s.line, s.reason) for s in tree.skipped]
        problems = [(p.line, p.message) for p in tree.problems if "is not in the file" not in p.message]
        blob = marshal.dumps(
            (
                FORMAT,
                (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size),
                builder.size,
                fingerprint,
                tree.header,
                tree.version,
                builder.next_line,
                rows,
                skipped,
                problems,
            )
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(blob)
        os.replace(tmp, target)
    except (OSError, ValueError):
        return
