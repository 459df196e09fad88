"""oh-my-pi's blob store: image data it persisted as `blob:sha256:<64 hex>` instead of base64 in the line.

The bytes live in `<blobs>/<hash>` (raw, decoded; a `<hash>.<ext>` link beside it). Content-addressed, so any
blobs folder holding the hash holds the right bytes: lookups try the folders beside the sessions opened in this
process (an agent dir holds `sessions/` and `blobs/`), then omp's default (`omp_paths.blobs_dir`). A blob that
is nowhere is a placeholder for the caller, never an error. Read-only.
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

from pitree.store.omp_paths import blobs_dir

PREFIX = "blob:sha256:"
_REF = re.compile(r"blob:sha256:([0-9a-f]{64})")
_LEVELS = 4  # a session sits at <agent>/sessions/<cwd folder>/<file>, a subagent deeper
_known: list[Path] = []


def is_blob_ref(value: object) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def blob_hash(ref: str) -> str | None:
    """The hex digest of a well-formed reference, else None."""
    match = _REF.fullmatch(ref)
    return match.group(1) if match else None


def remember_session(path: str | os.PathLike[str]) -> None:
    """Note the blobs folder that belongs with a session file (the first `blobs` beside one of its folders)."""
    folder = Path(os.path.abspath(path)).parent
    for _ in range(_LEVELS + 2):
        candidate = folder.parent / "blobs"
        if candidate.is_dir():
            if candidate not in _known:
                _known.insert(0, candidate)
            return
        if folder.parent == folder:
            return
        folder = folder.parent


def blob_path(ref: str) -> Path | None:
    """Where the blob's bytes are, or None (malformed reference, or no folder holds it)."""
    digest = blob_hash(ref)
    if digest is None:
        return None
    for folder in [*_known, blobs_dir()]:
        path = folder / digest
        if path.is_file():
            return path
    return None


def blob_size(ref: str) -> int | None:
    path = blob_path(ref)
    try:
        return path.stat().st_size if path is not None else None
    except OSError:
        return None


def blob_base64(ref: str) -> str | None:
    """The blob as base64 (what omp's reader puts back into the image block), or None."""
    path = blob_path(ref)
    if path is None:
        return None
    try:
        return base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError:
        return None


def describe(ref: str) -> tuple[int | None, str]:
    """(size in bytes or None, a short note): what an image placeholder says about a blob."""
    digest = blob_hash(ref)
    if digest is None:
        return None, "malformed blob reference"
    size = blob_size(ref)
    return size, f"blob {digest[:12]}" if size is not None else f"blob {digest[:12]} missing"


def blob_text(ref: str) -> str:
    """What an image placeholder says of a blob reference: its size and hash, or that it is missing."""
    size, note = describe(ref)
    if size is None:
        return note
    shown = (
        f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KB" if size < 1 << 20 else f"{size / (1 << 20):.1f} MB"
    )
    return f"{shown}, {note}"
