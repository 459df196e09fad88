"""The sessions index: an SQLite database in the user cache folder with one row per session file and an FTS5
table of the texts search looks at, updated incrementally from the files on disk.

- Location: `$PITREE_CACHE_DIR/sessions.sqlite3`, else platformdirs' user cache folder for `pitree` (the tree
  cache's rule). It is only a cache: deleting it costs one cold rebuild.
- `sessions` is keyed by the file's absolute path; (size, mtime_ns, inode) decide whether a file changed. A file
  that fails to load gets a row holding its error (shown by `errors()`), retried once the file changes.
- `docs` (FTS5, unicode61 tokenizer, no diacritic folding so the index agrees with the exact post-filter) holds
  (text, entry_id, kind); a document's rowid is `sid << 32 | n`, so one session's documents are one rowid range,
  replaced or deleted without scanning the table.
- WAL journal: readers never wait for a refresh. Each thread gets its own connection (created on first use,
  `check_same_thread=False` only so that `close()` can close them all), so a Textual thread worker may run
  `refresh` while the UI thread calls `sessions()` on the same `SessionIndex`. Writes are one `BEGIN IMMEDIATE`
  transaction per batch of files; two processes refreshing at once serialize on SQLite's lock (`busy_timeout`,
  30 s; the CLI waits less and searches the files directly when the index stays busy: `is_busy`).
- A new database's schema is created under the write lock, after checking again that no other process created
  it first: two processes creating the index at once both use the one database.
- The database is created mode 0600: it holds session text.
- `PRAGMA user_version` is the schema version: another version, or a file that is not a database, is deleted and
  rebuilt.
- A refresh with more than 64 MB to read spreads the files over worker processes (forkserver, one per core, at
  most 4; `workers = 1` turns it off); this process only writes. Workers that cannot start fall back to in-process.
- Indexing loads with `load_session_fast(save_cache=False)` so 2,000 sessions do not fill the tree cache; a file
  that changed since it was last indexed (a live session) saves its tree, so its next refresh parses only the
  appended lines.
"""

from __future__ import annotations

import mmap
import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pitree.session.entries import Node
from pitree.session.query import Query, matches, parse_query, required_literals, snippet, to_fts_match
from pitree.session.summary_info import SessionInfo, scan_session
from pitree.store.session_file import load_session_fast

SCHEMA_VERSION = 2  # 2: the agent that wrote the file (pi, omp)
DB_NAME = "sessions.sqlite3"
BATCH_FILES = 64
BATCH_CHARS = 32 << 20  # document text held before a batch is written
SID_SHIFT = 32
PARALLEL_MIN_BYTES = 64 << 20  # less than this to (re)index: worker processes cost more than they save

Progress = Callable[[int, int, int, int], None]  # (files done, files to index, bytes done, bytes to index)

_COLUMNS = (
    "path, id, cwd, name, first_message, entries, branches, compactions, last_activity, created, size, mtime_ms, "
    "parent_session, agent"
)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (
    sid INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    error TEXT,
    id TEXT, cwd TEXT, name TEXT, first_message TEXT,
    entries INTEGER, branches INTEGER, compactions INTEGER,
    last_activity REAL, created REAL, mtime_ms REAL, parent_session TEXT, agent TEXT,
    docs INTEGER NOT NULL DEFAULT 0,
    indexed_at REAL
);
CREATE INDEX IF NOT EXISTS sessions_id ON sessions(id);
CREATE INDEX IF NOT EXISTS sessions_activity ON sessions(last_activity);
CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(
    text, entry_id UNINDEXED, kind UNINDEXED, tokenize = 'unicode61 remove_diacritics 0'
);
PRAGMA user_version = {SCHEMA_VERSION};
"""


def index_path() -> Path:
    """Where the index lives (see the module docstring)."""
    override = os.environ.get("PITREE_CACHE_DIR")
    if override:
        return Path(override) / DB_NAME
    import platformdirs

    return Path(platformdirs.user_cache_path("pitree")) / DB_NAME


@dataclass
class RefreshStats:
    """What a refresh did, by file."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    errors: int = 0  # files that failed to load (recorded) or could not be recorded
    cancelled: bool = False
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One matching entry; `entry_id` is the entry to open at (a label's hit is its target)."""

    path: Path
    entry_id: str
    kind: str
    snippet: str
    title: str
    session_id: str


@dataclass(slots=True)
class _Loaded:
    path: str
    key: tuple[int, int, int]
    known: bool  # the index had an older version of this file
    info: SessionInfo | None
    docs: list[tuple[str, str, str]]
    error: str | None


class _Rebuild(Exception):
    pass


def _under(path: str, root: str) -> bool:
    """`path` is in `root` or in one of its direct subfolders (what `find_session_files` scans), or in the
    artifacts folder of a session there."""
    parent = os.path.dirname(path)
    while parent != root and os.path.isfile(parent + ".jsonl"):  # oh-my-pi's subagents: under their session
        parent = os.path.dirname(parent)
    return parent == root or os.path.dirname(parent) == root


class SessionIndex:
    """The sessions index (see the module docstring). Safe to share between threads."""

    def __init__(self, db_path: Path | None = None, busy_timeout: float = 30.0) -> None:
        self.path = Path(db_path) if db_path is not None else index_path()
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._refresh_lock = threading.Lock()
        self.workers: int | None = None  # processes for a big refresh; None: one per core (at most 4)

    # ---- connections -----------------------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            with self._lock:
                conn = self._open()
                self._conns.append(conn)
            self._local.conn = conn
        return conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.busy_timeout
        rebuilt = False
        while True:
            # Session text is private: the database (and SQLite's -wal/-shm, which copy its mode) is the user's only.
            try:
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                pass
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            try:
                self._prepare(conn)
                return conn
            except (sqlite3.DatabaseError, _Rebuild) as exc:
                conn.close()
                if is_busy(exc):
                    # Another process's, not a broken one. Switching a new database to WAL (or recovering one)
                    # answers "locked" without SQLite's own wait: wait here, up to the same timeout.
                    if time.monotonic() >= deadline:
                        raise
                    time.sleep(0.02)
                    continue
                if rebuilt:
                    raise
                rebuilt = True
                self._delete_files()

    def _prepare(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            conn.execute("SELECT sid FROM sessions LIMIT 1").fetchall()
            conn.execute("SELECT rowid FROM docs LIMIT 1").fetchall()
            return
        # Decided under the write lock: read outside it, another process's schema committed between reading the
        # version and counting the tables looked like a foreign database, and deleting it broke that process.
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if version != SCHEMA_VERSION:
                if version != 0 or tables:
                    raise _Rebuild(f"index schema {version}, expected {SCHEMA_VERSION}")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _delete_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass

    def close(self) -> None:
        """Close every connection this object opened (in any thread)."""
        with self._lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- refresh -----------------------------------------------------------------------------------------------

    def refresh(
        self,
        files: Iterable[str | os.PathLike[str]],
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
        root: Path | None = None,
    ) -> RefreshStats:
        """Bring the index in line with `files`: read new and changed ones, drop vanished ones.

        Vanished means indexed but not in `files`; with `root`, only indexed paths in `root` or its direct
        subfolders count (so refreshing one folder leaves the rest of the index alone). `cancel()` is checked
        between files; what was read so far is kept.
        """
        started = time.perf_counter()
        stats = RefreshStats()
        current: dict[str, os.stat_result] = {}
        for f in files:
            p = os.path.abspath(os.fspath(f))
            try:
                st = os.stat(p)
                p.encode("utf-8")
            except OSError:  # vanished since it was listed, or unreadable: as if absent
                continue
            except UnicodeEncodeError:  # a file name that is not UTF-8 cannot be stored as SQLite text
                stats.errors += 1
                continue
            if stat.S_ISREG(st.st_mode):
                current[p] = st
        root_s = os.path.abspath(os.fspath(root)) if root is not None else None
        with self._refresh_lock:
            conn = self._conn()
            stored = {
                path: (size, mtime_ns, ino)
                for path, size, mtime_ns, ino in conn.execute("SELECT path, size, mtime_ns, ino FROM sessions")
            }
            gone = [p for p in stored if p not in current and (root_s is None or _under(p, root_s))]
            todo: list[tuple[str, tuple[int, int, int], bool]] = []
            for p, st in current.items():
                key = (st.st_size, st.st_mtime_ns, st.st_ino)
                old = stored.get(p)
                if old == key:
                    stats.unchanged += 1
                else:
                    todo.append((p, key, old is not None))
            if gone:
                self._write(conn, [], gone)
                stats.removed = len(gone)
            total_bytes = sum(key[0] for _, key, _ in todo)
            done_bytes = 0
            if progress is not None and todo:
                progress(0, len(todo), 0, total_bytes)
            batch: list[_Loaded] = []
            chars = 0
            for i, loaded in enumerate(self._load_all(todo, cancel, total_bytes)):
                if loaded is None:
                    stats.cancelled = True
                    break
                if loaded.error is not None:
                    stats.errors += 1
                elif loaded.known:
                    stats.updated += 1
                else:
                    stats.added += 1
                batch.append(loaded)
                chars += sum(len(d[2]) for d in loaded.docs)
                if len(batch) >= BATCH_FILES or chars >= BATCH_CHARS:
                    self._write(conn, batch, [])
                    batch, chars = [], 0
                done_bytes += loaded.key[0]
                if progress is not None:
                    progress(i + 1, len(todo), done_bytes, total_bytes)
            if batch:
                self._write(conn, batch, [])
        stats.seconds = time.perf_counter() - started
        return stats

    def _load_all(
        self, todo: list[tuple[str, tuple[int, int, int], bool]], cancel: Callable[[], bool] | None, total_bytes: int
    ) -> Iterator[_Loaded | None]:
        """Loaded files in completion order; None once `cancel()` says stop. Big jobs use worker processes."""
        workers = self.workers if self.workers is not None else min(os.cpu_count() or 1, 4)
        if workers <= 1 or len(todo) < 2 or total_bytes < PARALLEL_MIN_BYTES:
            for job in todo:
                if cancel is not None and cancel():
                    yield None
                    return
                yield _load(*job)
            return
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        # Biggest first, so one huge file does not run alone at the end.
        jobs = sorted(todo, key=lambda j: -j[1][0])
        finished: set[str] = set()
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
                pending: set[Future[_Loaded]] = set()
                queue = iter(jobs)
                try:
                    for job in queue:
                        pending.add(pool.submit(_load, *job))
                        if len(pending) >= workers * 2:
                            break
                    while pending:
                        done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                        for fut in done:
                            loaded = fut.result()
                            finished.add(loaded.path)
                            yield loaded
                            nxt = next(queue, None)
                            if nxt is not None:
                                pending.add(pool.submit(_load, *nxt))
                        if cancel is not None and cancel():
                            yield None
                            return
                finally:
                    for fut in pending:
                        fut.cancel()
        except (BrokenProcessPool, OSError):
            # Workers could not start (e.g. a __main__ that cannot be re-imported): finish in this process.
            for job in jobs:
                if job[0] in finished:
                    continue
                if cancel is not None and cancel():
                    yield None
                    return
                yield _load(*job)

    def _write(self, conn: sqlite3.Connection, batch: list[_Loaded], gone: list[str]) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for path in gone:
                row = conn.execute("SELECT sid FROM sessions WHERE path = ?", (path,)).fetchone()
                if row is not None:
                    self._drop_docs(conn, row[0])
                    conn.execute("DELETE FROM sessions WHERE sid = ?", (row[0],))
            now = time.time()
            for item in batch:
                info = item.info
                values = (
                    item.key[0],
                    item.key[1],
                    item.key[2],
                    item.error,
                    info.id if info else None,
                    info.cwd if info else None,
                    info.name if info else None,
                    info.first_message if info else None,
                    info.entries if info else None,
                    info.branches if info else None,
                    info.compactions if info else None,
                    info.last_activity if info else None,
                    info.created if info else None,
                    info.mtime if info else None,
                    info.parent_session if info else None,
                    info.agent if info else None,
                    len(item.docs),
                    now,
                )
                row = conn.execute("SELECT sid FROM sessions WHERE path = ?", (item.path,)).fetchone()
                if row is not None:
                    sid = row[0]
                    self._drop_docs(conn, sid)
                    conn.execute(
                        "UPDATE sessions SET size=?, mtime_ns=?, ino=?, error=?, id=?, cwd=?, name=?, first_message=?,"
                        " entries=?, branches=?, compactions=?, last_activity=?, created=?, mtime_ms=?,"
                        " parent_session=?, agent=?, docs=?, indexed_at=? WHERE sid = ?",
                        (*values, sid),
                    )
                else:
                    cur = conn.execute(
                        "INSERT INTO sessions (path, size, mtime_ns, ino, error, id, cwd, name, first_message,"
                        " entries, branches, compactions, last_activity, created, mtime_ms, parent_session, agent,"
                        " docs, indexed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (item.path, *values),
                    )
                    sid = cur.lastrowid
                    assert sid is not None
                if item.docs:
                    base = sid << SID_SHIFT
                    conn.executemany(
                        "INSERT INTO docs (rowid, text, entry_id, kind) VALUES (?,?,?,?)",
                        ((base + n, text, eid, kind) for n, (eid, kind, text) in enumerate(item.docs)),
                    )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _drop_docs(conn: sqlite3.Connection, sid: int) -> None:
        lo = sid << SID_SHIFT
        conn.execute("DELETE FROM docs WHERE rowid >= ? AND rowid < ?", (lo, lo + (1 << SID_SHIFT)))

    # ---- reading -----------------------------------------------------------------------------------------------

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
        return [_info(r) for r in rows if root_s is None or _under(r[0], root_s)]

    def errors(self, root: Path | None = None) -> list[tuple[Path, str]]:
        """Files that could not be indexed, with the reason."""
        rows = self._conn().execute("SELECT path, error FROM sessions WHERE error IS NOT NULL ORDER BY path")
        root_s = os.path.abspath(os.fspath(root)) if root is not None else None
        return [(Path(p), e) for p, e in rows if root_s is None or _under(p, root_s)]

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
        return [_info(r) for r in rows if root_s is None or _under(r[0], root_s)]

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
            if (cwd is None or s_cwd == cwd) and (root_s is None or _under(path, root_s)):
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
        expr = to_fts_match(q)
        if expr is None:  # a regex (or only punctuation): read the documents, session by session
            # FTS5's own content table (documented: `<name>_content`, columns c0… in declared order) reads twice
            # as fast as the virtual table; LIKE runs in SQLite's C code, so only rows holding every required
            # literal reach the Python test.
            sql = "SELECT c1, c2, c0 FROM docs_content WHERE id >= ? AND id < ?"
            literals = required_literals(q)
            sql += "".join(" AND c0 LIKE ? ESCAPE '\\'" for _ in literals) + " ORDER BY id"
            likes = ["%" + re.sub(r"([\\%_])", r"\\\1", lit) + "%" for lit in literals]
            for sid in sorted(ranked, key=lambda s: ranked[s][0]):
                lo = sid << SID_SHIFT
                for entry_id, kind, text in conn.execute(sql, (lo, lo + (1 << SID_SHIFT), *likes)):
                    yield sid, entry_id, kind, text
            return
        rowids = [r for (r,) in conn.execute("SELECT rowid FROM docs WHERE docs MATCH ?", (expr,))]
        order = sorted((ranked[r >> SID_SHIFT][0], r) for r in rowids if (r >> SID_SHIFT) in ranked)
        fetch = "SELECT entry_id, kind, text FROM docs WHERE rowid = ?"
        for _, rowid in order:
            row = conn.execute(fetch, (rowid,)).fetchone()
            if row is not None:
                yield rowid >> SID_SHIFT, row[0], row[1], row[2]


def is_busy(exc: BaseException) -> bool:
    """SQLite gave up waiting for another process's lock on the index."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


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


class _MappedReader:
    """Entries back from the file mapped into memory (no seek and read per entry, no copy of a big file).

    Only message content and timestamps are used, which Pi's migrations do not change."""

    def __init__(self, view: memoryview) -> None:
        self.view = view

    def entries(self, nodes: list[Node]) -> list[dict[str, Any]]:
        view, loads = self.view, orjson.loads
        out: list[dict[str, Any]] = []
        for node in nodes:
            try:
                obj = loads(view[node.offset : node.offset + node.length])
            except orjson.JSONDecodeError:
                obj = None
            out.append(obj if isinstance(obj, dict) else {})
        return out


def _load(path: str, key: tuple[int, int, int], known: bool) -> _Loaded:
    """Load and scan one file; any failure becomes the recorded error (one bad file never stops a refresh).

    Runs in worker processes too, so it takes and returns plain picklable values."""
    p = Path(path)
    try:
        # A file that changed since it was indexed is probably live: keep its tree for the next refresh.
        tree, builder = load_session_fast(p, save_cache=known)
        if tree.header is None:
            reason = "empty file" if key[0] == 0 else "not a Pi session (no session header on the first line)"
            return _Loaded(path, key, known, None, [], reason)
        with open(p, "rb") as fh, mmap.mmap(fh.fileno(), builder.size, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                info, docs = scan_session(tree, _MappedReader(view), p, key[0], key[1] / 1e6)
            finally:
                view.release()
    except Exception as exc:  # noqa: BLE001 - recorded per file, shown by `errors()`
        text = str(exc) or type(exc).__name__
        return _Loaded(path, key, known, None, [], text)
    return _Loaded(path, key, known, info, docs, None)
