"""`resolve_session_arg`: the session file a `pitree ID-PREFIX` means (Pi's `--session ID` rule).

Pi names files after the session id, so most lookups read only a few headers; otherwise the sessions index
(refreshed first) is asked, or the files themselves when another process holds it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pitree.cli.index_refresh import BUSY_WAIT, busy_note, refreshed
from pitree.store.catalog import find_session_files, find_session_paths, read_header, session_roots
from pitree.store.session_index import SessionIndex, is_busy

_ID_PREFIX = re.compile(r"[0-9a-fA-F][0-9a-fA-F-]{0,35}")


def _candidates_by_name(files: list[Path], prefix: str) -> list[tuple[Path, dict[str, Any]]]:
    """Files whose Pi-style name (`<time>_<uuid>.jsonl`) carries an id starting with `prefix`, header-checked."""
    out: list[tuple[Path, dict[str, Any]]] = []
    low = prefix.lower()
    for path in files:
        stem = path.name[: -len(".jsonl")]
        name_id = stem.rsplit("_", 1)[-1].lower()
        if not name_id.startswith(low):
            continue
        header = read_header(path)
        if header is not None and str(header["id"]).lower().startswith(low):
            out.append((path, header))
    return out


def resolve_session_arg(arg: str, session_dir: str | None = None) -> Path | None:
    """The session file whose id starts with `arg` (Pi's `--session ID` rule: the current folder's sessions
    first, then all). None when `arg` is not an id prefix or nothing matches; ValueError when it is ambiguous."""
    if not _ID_PREFIX.fullmatch(arg):
        return None
    roots = [Path(os.path.abspath(r)) for r, _ in session_roots(session_dir)]
    files = [f for root in roots for f in find_session_files(root)]
    cwd = os.getcwd()
    # Fast path: Pi names files after the session id, so most lookups need only a few headers.
    found = [(p, str(h["id"]), h.get("cwd")) for p, h in _candidates_by_name(files, arg)]
    if not found:
        try:
            with SessionIndex(busy_timeout=BUSY_WAIT) as index:
                for root in roots:
                    refreshed(index, root)
                    found += [(s.path, s.id, s.cwd) for s in index.by_id_prefix(arg, root=root)]
        except Exception as exc:
            if not is_busy(exc):
                raise
            from pitree.store.direct_scan import list_files

            busy_note("looking the id up in")
            found = []
            for root in roots:
                infos, _ = list_files(find_session_paths(root))
                found += [(s.path, s.id, s.cwd) for s in infos if s.id.lower().startswith(arg.lower())]
    if not found:
        return None
    local = [f for f in found if f[2] == cwd]
    chosen = local or found
    if len(chosen) == 1:
        return chosen[0][0]
    shown = "; ".join(f"{sid} {path}" for path, sid, _ in sorted(chosen, key=lambda f: f[1])[:8])
    more = f"; … {len(chosen) - 8} more" if len(chosen) > 8 else ""
    raise ValueError(f"session id prefix {arg!r} is ambiguous ({len(chosen)} sessions): {shown}{more}")
