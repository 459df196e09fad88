"""The sessions index follows a file that grows, is rewritten, truncated or torn by a killed writer: after every
refresh it holds exactly what a fresh index of the file holds, and an append reads only the appended bytes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pitree.store.index_scan as index_scan
import pytest
from pitree.store.session_index import SessionIndex

from tests.sessions import assistant, entry, header, to_bytes, tool_result, user

pytestmark = pytest.mark.writes_session  # the tests stand in for Pi: they append to, rewrite and cut the files


def _base() -> list[dict[str, Any]]:
    return [
        user("u1", None, "refactor the session manager", t=1),
        assistant("a1", "u1", "reading it", t=2, calls=[("c1", "read", {"path": "src/session.ts"})]),
        tool_result("r1", "a1", "c1", text="export class SessionManager {}" + " " * 100_000, t=3),
        entry("label", "l1", "r1", t=4, targetId="u1", label="start"),
        entry("session_info", "n1", "l1", t=5, name="First name"),
        entry("compaction", "k1", "n1", t=6, summary="we chose sqlite", tokensBefore=1000, firstKeptEntryId="u1"),
    ]


def _more() -> list[dict[str, Any]]:
    return [
        user("u2", "k1", "now the browser", t=7),
        assistant("a2", "u2", "done with the browser", t=8),
        user("u3", "a1", "a second branch from a1", t=9),  # a new branch: one more leaf
        entry("label", "l2", "u3", t=10, targetId="u1", label="moved"),  # relabels u1
        entry("label", "l3", "l2", t=11, targetId="a1", label="tool"),
        entry("session_info", "n2", "l3", t=12, name="Second name"),
        {
            "type": "message",
            "id": "b1",
            "parentId": "n2",
            "timestamp": "2026-01-01T00:00:13.000Z",
            "message": {"role": "bashExecution", "command": "make test", "output": "ok", "exitCode": 0},
        },
    ]


def _snapshot(db: Path) -> tuple[Any, ...]:
    with SessionIndex(db) as idx:
        rows = idx.sessions()
        docs = idx._conn().execute("SELECT entry_id, kind, text FROM docs ORDER BY rowid").fetchall()
        hits = idx.search("browser") + idx.search("re:sess.on")
        resume = idx._conn().execute(
            "SELECT path, offset, digest FROM sessions JOIN resume USING (sid) ORDER BY path"
        ).fetchall()
        orphans = idx._conn().execute("SELECT count(*) FROM resume WHERE sid NOT IN (SELECT sid FROM sessions)")
        assert orphans.fetchone() == (0,), "a session's resume state goes with it"
        return rows, sorted(docs), hits, resume


def _fresh(path: Path, tmp_path: Path) -> tuple[Any, ...]:
    db = tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}.sqlite3"
    with SessionIndex(db) as idx:
        idx.refresh([path])
    return _snapshot(db)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions" / "--work-x--"
    folder.mkdir(parents=True)
    path = folder / "s.jsonl"
    path.write_bytes(to_bytes(_base()))
    return path


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reads: list[int] = []
    monkeypatch.setattr(index_scan, "read_hook", reads.append)
    return reads


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def test_append_reads_only_the_appended_bytes(session: Path, tmp_path: Path, counted: list[int]) -> None:
    db = tmp_path / "idx.sqlite3"
    with SessionIndex(db) as idx:
        assert idx.refresh([session]).added == 1
        first_read = sum(counted)
        assert first_read >= session.stat().st_size
        counted.clear()
        extra = to_bytes(_more(), with_header=False)
        _append(session, extra)
        stats = idx.refresh([session])
        assert (stats.updated, stats.appended) == (1, 1)
        # the appended bytes, plus the two ends of the indexed prefix (the digest) and of the new one
        assert sum(counted) <= len(extra) + 4 * index_scan.DIGEST_SPAN
        assert sum(counted) < first_read + len(extra)
        (info,) = idx.sessions()
        assert (info.name, info.entries, info.branches) == ("Second name", 13, 2)
    assert _snapshot(db) == _fresh(session, tmp_path)


def test_rewrite_with_the_same_size_reads_whole(session: Path, tmp_path: Path) -> None:
    db = tmp_path / "idx.sqlite3"
    with SessionIndex(db) as idx:
        idx.refresh([session])
        data = session.read_bytes()
        session.write_bytes(data.replace(b"refactor the session manager", b"REWRITE the session manager"))
        os.utime(session, ns=(session.stat().st_atime_ns, session.stat().st_mtime_ns + 1_000_000))
        stats = idx.refresh([session])
        assert (stats.updated, stats.appended) == (1, 0)
        assert idx.sessions()[0].first_message == "REWRITE the session manager"
    assert _snapshot(db) == _fresh(session, tmp_path)


def test_rewrite_that_grows_is_not_taken_for_an_append(session: Path, tmp_path: Path) -> None:
    db = tmp_path / "idx.sqlite3"
    with SessionIndex(db) as idx:
        idx.refresh([session])
        entries = _base()
        entries[-1] = entry("compaction", "k1", "n1", t=6, summary="we chose files", firstKeptEntryId="u1")
        session.write_bytes(to_bytes(entries + _more()))
        stats = idx.refresh([session])
        assert (stats.updated, stats.appended) == (1, 0)
        assert idx.search("sqlite") == []
    assert _snapshot(db) == _fresh(session, tmp_path)


def test_truncation_reads_whole(session: Path, tmp_path: Path) -> None:
    db = tmp_path / "idx.sqlite3"
    _append(session, to_bytes(_more(), with_header=False))
    with SessionIndex(db) as idx:
        idx.refresh([session])
        assert idx.search("browser")
        session.write_bytes(to_bytes(_base()))
        stats = idx.refresh([session])
        assert (stats.updated, stats.appended) == (1, 0)
        assert idx.search("browser") == []
        assert idx.sessions()[0].name == "First name"
    assert _snapshot(db) == _fresh(session, tmp_path)


def test_a_torn_last_line_is_never_indexed_as_whole(session: Path, tmp_path: Path) -> None:
    db = tmp_path / "idx.sqlite3"
    line = to_bytes([user("u2", "k1", "now the browser", t=7)], with_header=False)
    _append(session, line[:-20])  # a writer killed mid-line
    with SessionIndex(db) as idx:
        idx.refresh([session])
        assert idx.sessions()[0].entries == 6
        assert idx.search("browser") == []
        _append(session, line[-20:])  # the same writer's line completed later
        stats = idx.refresh([session])
        assert stats.appended == 1
        assert idx.sessions()[0].entries == 7
        assert [h.entry_id for h in idx.search("browser")] == ["u2"]
    assert _snapshot(db) == _fresh(session, tmp_path)


def test_a_file_the_scan_does_not_model_is_read_whole_each_time(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--work-x--"
    folder.mkdir(parents=True)
    path = folder / "v2.jsonl"
    path.write_bytes(to_bytes(_base(), version=2))
    db = tmp_path / "idx.sqlite3"
    with SessionIndex(db) as idx:
        idx.refresh([path])
        # the scan gave up on the header and the tree loader read it: nothing to read on from
        assert idx._conn().execute("SELECT count(*) FROM sessions").fetchone() == (1,)
        assert idx._conn().execute("SELECT count(*) FROM resume").fetchone() == (0,)
        _append(path, to_bytes(_more(), with_header=False))
        stats = idx.refresh([path])
        assert (stats.updated, stats.appended) == (1, 0)
    assert _snapshot(db) == _fresh(path, tmp_path)


def test_written_is_called_before_the_whole_build(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--work-x--"
    folder.mkdir(parents=True)
    files = []
    for i in range(40):
        path = folder / f"s{i:02d}.jsonl"
        path.write_bytes(to_bytes([user("u1", None, f"session {i}", t=1)], head=header(id=f"id-{i}")))
        files.append(path)
    seen: list[tuple[int, int]] = []
    with SessionIndex(tmp_path / "idx.sqlite3") as idx:
        idx.refresh(files, written=lambda n: seen.append((n, len(idx.sessions()))))
    assert seen[0][0] < 40 and seen[-1][0] == 40
    assert seen[0][1] == seen[0][0]  # what was reported written is there to list
    assert [n for n, _ in seen] == sorted(n for n, _ in seen)


def test_refreshes_reuse_one_writer_connection(session: Path, tmp_path: Path) -> None:
    with SessionIndex(tmp_path / "idx.sqlite3") as idx:
        idx.refresh([session])
        for n in range(5):
            line = user(f"x{n}", "k1" if n == 0 else f"x{n - 1}", "more", t=20 + n)
            _append(session, to_bytes([line], with_header=False))
            assert idx.refresh([session]).appended == 1
        assert len(idx._conns) == 2  # this thread's and the writer's


def test_an_append_read_against_a_row_another_process_changed_is_not_written(session: Path, tmp_path: Path) -> None:
    from pitree.store.index_load import load_one

    db = tmp_path / "idx.sqlite3"
    with SessionIndex(db) as idx:
        idx.refresh([session])
        conn = idx._conn()
        path = os.path.abspath(session)
        old = idx._resume_point(conn, path)
        _append(session, to_bytes(_more(), with_header=False))
        st = session.stat()
        loaded = load_one(path, (st.st_size, st.st_mtime_ns, st.st_ino), True, old)
        assert loaded.appended and loaded.start == old["offset"]  # type: ignore[index]
        conn.execute("UPDATE sessions SET offset = offset + 1")  # as if another process had written it since
        idx._write(idx._writer_conn(), [loaded], [])
        assert idx.sessions()[0].entries == 6 and idx.search("browser") == []
        assert idx.refresh([session]).updated == 1  # not taken for indexed: read again, whole
        assert idx.sessions()[0].entries == 13
    assert _snapshot(db) == _fresh(session, tmp_path)


def test_workers_that_cannot_start_leave_the_refresh_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import concurrent.futures

    import pitree.store.index_load as index_load

    folder = tmp_path / "sessions" / "--work-x--"
    folder.mkdir(parents=True)
    files = []
    for i in range(5):
        path = folder / f"s{i}.jsonl"
        path.write_bytes(to_bytes([user("u1", None, f"session {i}", t=1)], head=header(id=f"id-{i}")))
        files.append(path)

    class NoPool:
        def __init__(self, *args: Any, **kw: Any) -> None:
            raise ValueError("bad value(s) in fds_to_keep")  # what Textual's stderr makes the resource tracker say

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", NoPool)
    monkeypatch.setattr(index_load, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(index_load, "IN_PROCESS_FIRST", 1)
    with SessionIndex(tmp_path / "idx.sqlite3") as idx:
        idx.workers = 2
        stats = idx.refresh(files)
        assert (stats.added, stats.errors) == (5, 0)
        assert len(idx.sessions()) == 5
