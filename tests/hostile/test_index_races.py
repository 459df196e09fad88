"""Issue #21 items 3 and 4: the sessions index created by two processes at once, and held locked by another.

The index is only a cache: neither may break a command, and a locked one must not make it wait 30 s."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pitree.store.session_index import SessionIndex

from tests.hostile.helpers import run_cli
from tests.sessions import user, write_session


def _sessions(folder: Path, n: int = 3) -> list[Path]:
    sub = folder / "--proj--"
    sub.mkdir(parents=True, exist_ok=True)
    return [write_session(sub, [user("u1", None, f"hello number {i}")], name=f"s{i}.jsonl") for i in range(n)]


def test_item3_schema_created_by_another_process_between_our_reads(tmp_path: Path, monkeypatch: Any) -> None:
    """The interleaving behind `no such table: sessions`: we read user_version 0, another process creates the
    schema, we count its tables and took the database for a foreign one, deleting it under the other's feet."""
    db = tmp_path / "sessions.sqlite3"
    other = SessionIndex(db)
    real_connect = sqlite3.connect

    class Racy(sqlite3.Connection):
        raced = False

        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
            cur = super().execute(sql, *args)
            if sql == "PRAGMA user_version" and not Racy.raced:
                Racy.raced = True
                other.sessions()  # the other process creates and commits the schema right now
            return cur

    def connect(*args: Any, **kw: Any) -> sqlite3.Connection:
        if not Racy.raced and "factory" not in kw:
            kw["factory"] = Racy
        return real_connect(*args, **kw)

    files = _sessions(tmp_path / "sessions")
    with monkeypatch.context() as m:
        m.setattr(sqlite3, "connect", connect)
        ours = SessionIndex(db)
        ours.sessions()
    assert Racy.raced
    inode = db.stat().st_ino
    ours.refresh(files)
    assert len(other.sessions()) == 3  # one database for both: what we wrote, the other reads
    assert db.stat().st_ino == inode
    ours.close()
    other.close()


def _open_and_list(db: str, start: Any, out: Any) -> None:
    start.wait()
    try:
        with SessionIndex(Path(db)) as index:
            index.sessions()
            out.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the test
        out.put(f"{type(exc).__name__}: {exc}")


def test_item3_processes_creating_the_index_at_once_all_succeed(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    for round_ in range(6):
        db = tmp_path / f"r{round_}" / "sessions.sqlite3"
        start, out = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_open_and_list, args=(str(db), start, out)) for _ in range(4)]
        for p in procs:
            p.start()
        start.set()
        results = [out.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        assert results == ["ok"] * 4, results


@pytest.fixture
def locked_index(tmp_path: Path) -> Any:
    """A sessions folder whose index exists and is then held `BEGIN EXCLUSIVE` by another connection, with a
    session added since (so a refresh would have to write)."""
    root = tmp_path / "sessions"
    _sessions(root, 2)
    env = {**os.environ, "PITREE_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    assert run_cli("search", "hello", "--all", "--session-dir", root, env=env).returncode == 0
    write_session(root / "--proj--", [user("u9", None, "hello newcomer")], name="s9.jsonl")
    holder = sqlite3.connect(tmp_path / "cache" / "sessions.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    yield root, env
    holder.execute("ROLLBACK")
    holder.close()


def test_item4_search_with_the_index_locked_reads_the_files(locked_index: Any) -> None:
    root, env = locked_index
    out = run_cli("search", "hello", "--all", "--session-dir", root, env=env, timeout=25)  # not the 30 s wait
    assert out.returncode == 0, out.stderr.decode()
    err = out.stderr.decode().strip()
    assert err == "pitree: index busy (another process holds it): searching the files directly"
    text = out.stdout.decode()
    assert "hello newcomer" in text and "hello number 0" in text and "hello number 1" in text


def test_item4_ls_with_the_index_locked_reads_the_files(locked_index: Any) -> None:
    root, env = locked_index
    out = run_cli("ls", "--all", "--json", "--session-dir", root, env=env, timeout=25)
    assert out.returncode == 0, out.stderr.decode()
    assert b"index busy" in out.stderr and out.stderr.count(b"\n") == 1
    import orjson

    assert len(orjson.loads(out.stdout)["sessions"]) == 3
