"""`pitree ls` and `pitree search` without the sessions index: every file read directly.

The index is only a cache; when another process holds it locked (`session_index.is_busy`), the CLI says so in
one line and answers from the files instead, with the index's rules (same rows, same hits, same order), only
slower. Files are read one at a time and only their hits are kept, so memory stays that of one session.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pitree.session.query import Query, matches, parse_query, snippet
from pitree.session.summary_info import SessionInfo
from pitree.store.index_load import Loaded as _Loaded
from pitree.store.index_load import load_one as _load
from pitree.store.index_read import SearchHit


def _loaded(files: Iterable[str | os.PathLike[str]]) -> list[_Loaded]:
    out = []
    for f in files:
        path = os.path.abspath(os.fspath(f))
        try:
            st = os.stat(path)
        except OSError:  # vanished since it was listed: as the index, as if absent
            continue
        out.append(_load(path, (st.st_size, st.st_mtime_ns, st.st_ino), False))
    return out


def _order(info: SessionInfo) -> tuple[float, str]:
    return (-info.last_activity, str(info.path))  # the index's ORDER BY last_activity DESC, path


def list_files(
    files: Iterable[str | os.PathLike[str]], cwd: str | None = None
) -> tuple[list[SessionInfo], list[tuple[Path, str]]]:
    """(sessions latest activity first, only `cwd`'s when given; files that failed with the reason)."""
    infos: list[SessionInfo] = []
    errors: list[tuple[Path, str]] = []
    for item in _loaded(files):
        if item.info is None:
            errors.append((Path(item.path), item.error or "unreadable"))
        elif cwd is None or item.info.cwd == cwd:
            infos.append(item.info)
        item.docs.clear()
    return sorted(infos, key=_order), sorted(errors)


def search_files(
    files: Iterable[str | os.PathLike[str]], query: str | Query, limit: int = 200, cwd: str | None = None
) -> list[SearchHit]:
    """`SessionIndex.search` over the files themselves. Raises ValueError for a bad regex or an empty query."""
    q = query if isinstance(query, Query) else parse_query(query)
    if q.empty:
        raise ValueError("empty search query")
    found: list[tuple[SessionInfo, list[SearchHit]]] = []
    for f in files:
        for item in _loaded([f]):
            info = item.info
            if info is None or (cwd is not None and info.cwd != cwd):
                continue
            hits = []
            for entry_id, kind, text in item.docs:
                if matches(q, text):
                    hits.append(SearchHit(info.path, entry_id, kind, snippet(q, text), info.title, info.id))
                    if len(hits) >= limit:
                        break
            if hits:
                found.append((info, hits))
    out: list[SearchHit] = []
    for _, hits in sorted(found, key=lambda f: _order(f[0])):
        out.extend(hits[: limit - len(out)])
        if len(out) >= limit:
            break
    return out
