"""Reading the sessions index: the listed sessions, the files that failed, id lookup, full-text search.

`IndexReader` is a mixin over `IndexDB` (it only needs `_conn()`). Search reads each session's documents, newest
session first, with SQL LIKE keeping only those that hold every literal the query needs (`required_literals`),
and checks every candidate with the exact matcher (`session.query`): Pi's picker's rules, substrings included.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pitree.session.query import Query, matches, parse_query, required_literals, snippet
from pitree.session.summary_info import SessionInfo

SID_SHIFT = 32

_COLUMNS = (
    "path, id, cwd, name, first_message, entries, branches, compactions, last_activity, created, size, mtime_ms, "
    "parent_session, agent"
)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One matching entry; `entry_id` is the entry to open at (a label's hit is its target)."""

    path: Path
    entry_id: str
    kind: str
    snippet: str
    title: str
    session_id: str


def under(path: str, root: str) -> bool:
    """`path` is in `root` or in one of its direct subfolders (what `find_session_files` scans), or in the
    artifacts folder of a session there."""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if path.startswith(prefix) and path.count(os.sep, len(prefix)) <= 1:  # the common case, without a stat
        return True
    parent = os.path.dirname(path)
    if parent == root or os.path.dirname(parent) == root:
        return True
    while parent != root and os.path.isfile(parent + ".jsonl"):  # oh-my-pi's subagents: under their session
        parent = os.path.dirname(parent)
    return parent == root or os.path.dirname(parent) == root


class IndexReader:
    """The read side of `SessionIndex`; any thread may call these while another refreshes."""

    def _conn(self) -> sqlite3.Connection:
        raise NotImplementedError

    def sessions(self, cwd: str | None = None, root: Path | None = None) -> list[SessionInfo]:
        """Indexed sessions (not the failed files), latest activity first; only `cwd`'s / `root`'s when given."""
        sql = f"SELECT {_COLUMNS} FROM sessions WHERE error IS NULL"
        args: list[Any] = []
        if cwd is not None:
            sql += " AND cwd = ?"
            args.append(cwd)
        sql += " ORDER BY last_activity DESC, path"
        rows = self._conn().execute(sql, args).fetchall()
        root_s = os.path.abspath(os.fspath(root)) if root is not None else None
        return [_info(r) for r in rows if root_s is None or under(r[0], root_s)]

    def errors(self, root: Path | None = None) -> list[tuple[Path, str]]:
        """Files that could not be indexed, with the reason."""
        rows = self._conn().execute("SELECT path, error FROM sessions WHERE error IS NOT NULL ORDER BY path")
        root_s = os.path.abspath(os.fspath(root)) if root is not None else None
        return [(Path(p), e) for p, e in rows if root_s is None or under(p, root_s)]

    def by_id_prefix(self, prefix: str, root: Path | None = None) -> list[SessionInfo]:
        """Sessions whose header id starts with `prefix` (case-insensitive), latest activity first; only those in
        `root` (and its direct subfolders) when given."""
        if not prefix:
            return []
        rows = self._conn().execute(
            f"SELECT {_COLUMNS} FROM sessions WHERE error IS NULL AND substr(lower(id), 1, ?) = ?"
            " ORDER BY last_activity DESC, path",
            (len(prefix), prefix.lower()),
        )
        root_s = os.path.abspath(os.fspath(root)) if root is not None else None
        return [_info(r) for r in rows if root_s is None or under(r[0], root_s)]

    def search(
        self, query: str | Query, limit: int = 200, cwd: str | None = None, root: Path | None = None
    ) -> list[SearchHit]:
        """Entries matching `query` (Pi's forms, see `session.query`), newest session first, file order within.

        Raises ValueError for a bad regex or an empty query."""
        q = query if isinstance(query, Query) else parse_query(query)
        if q.empty:
            raise ValueError("empty search query")
        conn = self._conn()
        root_s = os.path.abspath(os.fspath(root)) if root is not None else None
        ranked: dict[int, tuple[int, str, str, str]] = {}  # sid -> (rank, path, title, id)
        sql = "SELECT sid, path, name, first_message, id, cwd FROM sessions WHERE error IS NULL"
        sql += " ORDER BY last_activity DESC, path"
        for rank, (sid, path, name, first, sid_s, s_cwd) in enumerate(conn.execute(sql)):
            if (cwd is None or s_cwd == cwd) and (root_s is None or under(path, root_s)):
                ranked[sid] = (rank, path, name or first or "", sid_s or "")
        hits: list[SearchHit] = []
        for sid, entry_id, kind, text in self._candidates(conn, q, ranked):
            if not matches(q, text):
                continue
            _, path, title, session_id = ranked[sid]
            hits.append(SearchHit(Path(path), entry_id, kind, snippet(q, text), title, session_id))
            if len(hits) >= limit:
                break
        return hits

    def _candidates(
        self, conn: sqlite3.Connection, q: Query, ranked: dict[int, tuple[int, str, str, str]]
    ) -> Iterator[tuple[int, str, str, str]]:
        # LIKE runs in SQLite's C code, so only rows holding every required literal reach the Python test;
        # with no literal known (a regex of classes, or only punctuation) every document is tested.
        sql = "SELECT entry_id, kind, text FROM docs WHERE rowid >= ? AND rowid < ?"
        literals = required_literals(q)
        sql += "".join(" AND text LIKE ? ESCAPE '\\'" for _ in literals) + " ORDER BY rowid"
        likes = ["%" + re.sub(r"([\\%_])", r"\\\1", lit) + "%" for lit in literals]
        for sid in sorted(ranked, key=lambda s: ranked[s][0]):
            lo = sid << SID_SHIFT
            for entry_id, kind, text in conn.execute(sql, (lo, lo + (1 << SID_SHIFT), *likes)):
                yield sid, entry_id, kind, text


def _info(row: tuple[Any, ...]) -> SessionInfo:
    (path, sid, cwd, name, first, entries, branches, compactions, activity, created, size, mtime, parent, agent) = row
    return SessionInfo(
        path=Path(path),
        id=sid or "",
        cwd=cwd or "",
        name=name,
        first_message=first or "",
        entries=entries or 0,
        branches=branches or 0,
        compactions=compactions or 0,
        last_activity=activity if activity is not None else 0.0,
        created=created,
        size=size,
        mtime=mtime if mtime is not None else 0.0,
        parent_session=parent,
        agent=agent or "pi",
    )
