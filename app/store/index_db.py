"""The sessions index's database: where it lives, its schema, and one SQLite connection per thread.

- Location: `$PITREE_CACHE_DIR/sessions.sqlite3`, else platformdirs' user cache folder for `pitree` (the tree
  cache's rule). It is only a cache: deleting it costs one cold rebuild.
- `sessions` is keyed by the file's absolute path; (size, mtime_ns, inode) decide whether a file changed. A file
  that fails to load gets a row holding its error, retried once the file changes. `offset`, and `resume`'s
  `digest` and `state`, let an appended file be read on from where it was indexed (`store.index_scan`); no
  `state` means the file is read whole when it changes. `resume` is a table of its own (one row a session,
  same `sid`): its states are kilobytes a session, and in `sessions` they spread its rows over a page each,
  which every listing then read.
- `docs` holds (text, entry_id, kind), a plain table: writing an FTS5 index of every text cost twice as long as
  reading the files, and search filters with LIKE anyway (`index_read`). A document's rowid is `sid << 32 | n`,
  so one session's documents are one rowid range, replaced, extended or deleted without scanning the table.
- WAL journal: readers never wait for a refresh. Each thread gets its own connection (created on first use,
  `check_same_thread=False` only so that `close()` can close them all).
- A new database's schema is created under the write lock, after checking again that no other process created
  it first: two processes creating the index at once both use the one database.
- The database is created mode 0600: it holds session text.
- `PRAGMA user_version` is the schema version: another version, or a file that is not a database, is deleted and
  rebuilt.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from pitree.cache_paths import cache_root

# 2: the agent that wrote the file (pi, omp); 3: offset, digest, state (append re-index); 4: digest and state in
# `resume`
SCHEMA_VERSION = 4
DB_NAME = "sessions.sqlite3"

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
    indexed_at REAL,
    offset INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS resume (sid INTEGER PRIMARY KEY, digest BLOB, state BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_id ON sessions(id);
CREATE INDEX IF NOT EXISTS sessions_activity ON sessions(last_activity);
CREATE TABLE IF NOT EXISTS docs (rowid INTEGER PRIMARY KEY, text TEXT NOT NULL, entry_id TEXT, kind TEXT);
PRAGMA user_version = {SCHEMA_VERSION};
"""


def index_path() -> Path:
    """Where the index lives (see the module docstring)."""
    return cache_root() / DB_NAME


def is_busy(exc: BaseException) -> bool:
    """SQLite gave up waiting for another process's lock on the index."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


class _Rebuild(Exception):
    pass


class IndexDB:
    """The database file and the per-thread connections to it. Safe to share between threads."""

    def __init__(self, db_path: Path | None = None, busy_timeout: float = 30.0) -> None:
        self.path = Path(db_path) if db_path is not None else index_path()
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

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
            conn.execute("SELECT sid FROM resume LIMIT 1").fetchall()
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
