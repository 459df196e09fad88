"""The sessions index: an SQLite database (`index_db`) with one row per session file and a table of the
texts search looks at (`index_read`), brought in line with the files on disk by `SessionIndex.refresh`.

- A new or changed file is read by `index_load.load_one`: one pass over the file, and for a file that only grew
  since it was indexed, only the appended bytes (`index_scan`: offset + digest of the indexed prefix; a rewrite
  or truncation reads it whole; a torn last line is left until its newline arrives).
- Files are read newest first (what the list shows first) and written by a writer thread in batches, the first
  ones small, so a cold start has rows to show within a fraction of a second (`written` is called after each
  commit) while the rest is read.
- Writes are one `BEGIN IMMEDIATE` transaction per batch; two processes refreshing at once serialize on
  SQLite's lock (`busy_timeout`, 30 s; the CLI waits less and reads the files directly when the index stays
  busy: `is_busy`).
- A refresh with more than 64 MB to read spreads the files over worker processes (forkserver, one per core, at
  most 4; `workers = 1` turns it off); this process only writes.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pitree.store.index_db import SCHEMA_VERSION, IndexDB, index_path, is_busy
from pitree.store.index_read import SID_SHIFT, IndexReader, SearchHit, under

if TYPE_CHECKING:
    from pitree.store.index_load import Job, Loaded

__all__ = ["SCHEMA_VERSION", "RefreshStats", "SearchHit", "SessionIndex", "index_path", "is_busy"]

BATCH_FILES = 64
FIRST_BATCH_FILES = 16  # the first batch is small: the list has rows to show at once
BATCH_SECONDS = 0.25  # a batch is written at least this often while files are read
BATCH_CHARS = 32 << 20  # document text held before a batch is written
LABEL_BASE = 1 << 31  # label documents' rowids within a session's range: after every entry's, as a full scan has them

Progress = Callable[[int, int, int, int], None]  # (files done, files to index, bytes done, bytes to index)


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
    appended: int = 0  # of `updated`: files read on from where they were indexed


class _Writer(threading.Thread):
    """Writes batches handed over by `put` in its own connection; `finish` waits and re-raises its error."""

    def __init__(self, index: SessionIndex, written: Callable[[int], None] | None) -> None:
        super().__init__(name="pitree-index-writer", daemon=True)
        self.index, self.written = index, written
        self.jobs: queue.Queue[tuple[list[Loaded], list[str]] | None] = queue.Queue(maxsize=4)
        self.error: BaseException | None = None
        self.count = 0

    def run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            if self.error is not None:
                continue
            try:
                self.index._write(self.index._writer_conn(), *job)
                self.count += len(job[0])
                if self.written is not None and job[0]:
                    self.written(self.count)
            except BaseException as exc:  # noqa: BLE001 - handed to the refreshing thread
                self.error = exc

    def put(self, batch: list[Loaded], gone: list[str]) -> None:
        if self.error is not None:
            raise self.error
        self.jobs.put((batch, gone))

    def finish(self) -> None:
        self.jobs.put(None)
        self.join()
        if self.error is not None:
            raise self.error


class SessionIndex(IndexDB, IndexReader):
    """The sessions index (see the module docstring). Safe to share between threads."""

    def __init__(self, db_path: Path | None = None, busy_timeout: float = 30.0) -> None:
        super().__init__(db_path, busy_timeout)
        self._refresh_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self.workers: int | None = None  # processes for a big refresh; None: one per core (at most 4)

    def _writer_conn(self) -> sqlite3.Connection:
        """The writer threads' connection: one for every refresh (they never overlap: `_refresh_lock`), so a
        browser refreshing on every change of the folder does not open one per refresh."""
        with self._lock:
            if self._writer is None or self._writer not in self._conns:  # close() closed it
                self._writer = self._open()
                self._conns.append(self._writer)
            return self._writer

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(
        self,
        files: Iterable[str | os.PathLike[str]],
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
        root: Path | None = None,
        written: Callable[[int], None] | None = None,
        keep_missing: bool = False,
    ) -> RefreshStats:
        """Bring the index in line with `files`: read new and changed ones, drop vanished ones.

        Vanished means indexed but not in `files`; with `root`, only indexed paths in `root` or its direct
        subfolders count (so refreshing one folder leaves the rest of the index alone); with `keep_missing`,
        nothing is dropped (`files` is a part of the folder, not all of it). `cancel()` is checked
        between files; what was read so far is kept. `written(n)` is called (from the writer thread) each time
        the first n files read are committed, so a reader can list them.
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
            gone = [p for p in stored if p not in current and (root_s is None or under(p, root_s))]
            if keep_missing:
                gone = []
            todo: list[Job] = []
            for p, st in sorted(current.items(), key=lambda item: -item[1].st_mtime_ns):
                key = (st.st_size, st.st_mtime_ns, st.st_ino)
                old = stored.get(p)
                if old == key:
                    stats.unchanged += 1
                else:
                    todo.append((p, key, old is not None, self._resume_point(conn, p) if old is not None else None))
            if gone:
                self._write(conn, [], gone)
                stats.removed = len(gone)
            total_bytes = sum(job[1][0] for job in todo)
            if progress is not None and todo:
                progress(0, len(todo), 0, total_bytes)
            if todo:
                self._read_and_write(todo, total_bytes, stats, progress, cancel, written)
        stats.seconds = time.perf_counter() - started
        return stats

    def _read_and_write(
        self,
        todo: list[Job],
        total_bytes: int,
        stats: RefreshStats,
        progress: Progress | None,
        cancel: Callable[[], bool] | None,
        written: Callable[[int], None] | None,
    ) -> None:
        from pitree.store.index_load import load_all  # not needed to list a warm index: imported when a file changed

        workers = self.workers if self.workers is not None else min(os.cpu_count() or 1, 4)
        writer = _Writer(self, written)
        writer.start()
        try:
            batch: list[Loaded] = []
            chars, done_bytes, limit, flushed = 0, 0, FIRST_BATCH_FILES, time.monotonic()
            for i, loaded in enumerate(load_all(todo, cancel, total_bytes, workers)):
                if loaded is None:
                    stats.cancelled = True
                    break
                if loaded.error is not None:
                    stats.errors += 1
                elif loaded.known:
                    stats.updated += 1
                    stats.appended += loaded.appended
                else:
                    stats.added += 1
                batch.append(loaded)
                chars += sum(len(d[2]) for d in loaded.docs)
                now = time.monotonic()
                if len(batch) >= limit or chars >= BATCH_CHARS or now - flushed >= BATCH_SECONDS:
                    writer.put(batch, [])
                    batch, chars, limit, flushed = [], 0, BATCH_FILES, now
                done_bytes += loaded.key[0]
                if progress is not None:
                    progress(i + 1, len(todo), done_bytes, total_bytes)
            if batch:
                writer.put(batch, [])
        finally:
            writer.finish()

    @staticmethod
    def _resume_point(conn: sqlite3.Connection, path: str) -> dict[str, Any] | None:
        """What reading on from the indexed prefix of `path` needs (None: read it whole)."""
        row = conn.execute(
            "SELECT offset, digest, ino, state, name, entries, compactions FROM sessions JOIN resume USING (sid)"
            " WHERE path = ? AND error IS NULL",
            (path,),
        ).fetchone()
        if row is None:
            return None
        offset, digest, ino, state, name, entries, compactions = row
        try:
            decoded = orjson.loads(state)
        except orjson.JSONDecodeError:
            return None
        return {
            "offset": offset,
            "digest": digest,
            "ino": ino,
            "state": decoded,
            "name": name,
            "entries": entries,
            "compactions": compactions,
        }

    def _write(self, conn: sqlite3.Connection, batch: list[Loaded], gone: list[str]) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for path in gone:
                row = conn.execute("SELECT sid FROM sessions WHERE path = ?", (path,)).fetchone()
                if row is not None:
                    _drop_docs(conn, row[0])
                    conn.execute("DELETE FROM resume WHERE sid = ?", (row[0],))
                    conn.execute("DELETE FROM sessions WHERE sid = ?", (row[0],))
            now = time.time()
            for item in batch:
                self._write_one(conn, item, now)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _write_one(conn: sqlite3.Connection, item: Loaded, now: float) -> None:
        info = item.info
        labels = {t: v for t, v in item.labels.items() if v} if not item.appended else item.labels
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
            now,
            item.offset,
        )
        row = conn.execute("SELECT sid, docs, offset FROM sessions WHERE path = ?", (item.path,)).fetchone()
        if item.appended and (row is None or row[2] != item.start):
            return  # another process rewrote or dropped the row since it was read: the next refresh reads again
        if row is not None:
            sid, ndocs, _ = row
            if not item.appended:
                _drop_docs(conn, sid)
                ndocs = 0
            conn.execute(
                "UPDATE sessions SET size=?, mtime_ns=?, ino=?, error=?, id=?, cwd=?, name=?, first_message=?,"
                " entries=?, branches=?, compactions=?, last_activity=?, created=?, mtime_ms=?,"
                " parent_session=?, agent=?, indexed_at=?, offset=? WHERE sid = ?",
                (*values, sid),
            )
        else:
            cur = conn.execute(
                "INSERT INTO sessions (path, size, mtime_ns, ino, error, id, cwd, name, first_message,"
                " entries, branches, compactions, last_activity, created, mtime_ms, parent_session, agent,"
                " indexed_at, offset) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (item.path, *values),
            )
            sid, ndocs = cur.lastrowid, 0
            assert sid is not None
        if item.state is not None:
            conn.execute(
                "INSERT OR REPLACE INTO resume (sid, digest, state) VALUES (?,?,?)", (sid, item.digest, item.state)
            )
        else:
            conn.execute("DELETE FROM resume WHERE sid = ?", (sid,))
        base = sid << SID_SHIFT
        # Entry documents continue after the stored ones; label documents after every label stored before.
        first_doc = item.first_doc if item.appended else 0
        first_label = item.first_label if item.appended else 0
        if item.docs:
            conn.executemany(
                "INSERT INTO docs (rowid, text, entry_id, kind) VALUES (?,?,?,?)",
                ((base + first_doc + n, text, eid, kind) for n, (eid, kind, text) in enumerate(item.docs)),
            )
        added = len(item.docs)
        for m, (target, label) in enumerate(labels.items()):
            if item.appended:
                dropped = conn.execute(
                    "DELETE FROM docs WHERE rowid >= ? AND rowid < ? AND entry_id = ? AND kind = 'label'",
                    (base + LABEL_BASE, base + (1 << SID_SHIFT), target),
                ).rowcount
                added -= max(dropped, 0)
            if label:
                conn.execute(
                    "INSERT INTO docs (rowid, text, entry_id, kind) VALUES (?,?,?,?)",
                    (base + LABEL_BASE + first_label + m, label, target, "label"),
                )
                added += 1
        conn.execute("UPDATE sessions SET docs = ? WHERE sid = ?", (ndocs + added, sid))


def _drop_docs(conn: sqlite3.Connection, sid: int) -> None:
    lo = sid << SID_SHIFT
    conn.execute("DELETE FROM docs WHERE rowid >= ? AND rowid < ?", (lo, lo + (1 << SID_SHIFT)))
