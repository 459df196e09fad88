"""The sessions browser's index refresh: `store.index_thread.IndexRefresh` (in its own thread, telling a listener how
it goes), `refresh(keep_missing=True)` and `cli.index_refresh.index_newest` (the newest files first, before Textual)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pitree.cli.index_refresh as index_refresh
import pitree.store.index_load as index_load
import pytest
from pitree.cli.index_refresh import index_newest, index_newest_early, newest_indexed
from pitree.store.catalog import find_session_paths
from pitree.store.index_thread import IndexRefresh
from pitree.store.session_index import RefreshStats, SessionIndex

from tests.sessions import chain
from tests.unit.test_session_index import write


class Heard:
    """A listener that writes down what it is told."""

    def __init__(self) -> None:
        self.steps: list[tuple[int, int]] = []
        self.counts: list[int] = []
        self.ends: list[tuple[RefreshStats, str | None]] = []
        self.over = threading.Event()

    def progress(self, done: int, total: int) -> None:
        self.steps.append((done, total))

    def written(self, count: int) -> None:
        self.counts.append(count)

    def finished(self, stats: RefreshStats, error: str | None) -> None:
        self.ends.append((stats, error))
        self.over.set()


def sessions(root: Path, n: int) -> None:
    for i in range(n):
        write(root / "--w--", f"{i:08x}-0000-7000-8000-000000000000", "/w", chain(3), when=i)


@pytest.fixture
def index(tmp_path: Path) -> Any:
    idx = SessionIndex(tmp_path / "cache" / "index.sqlite3")
    yield idx
    idx.close()


def held(monkeypatch: pytest.MonkeyPatch, index: SessionIndex, at: int) -> tuple[threading.Event, list[int]]:
    """Reading the `at`-th file waits for the returned event (files are read in this process)."""
    gate, calls, real = threading.Event(), [], index_load.load_one

    def slow(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == at:
            gate.wait(30)
        return real(*args)

    monkeypatch.setattr(index_load, "load_one", slow)
    index.workers = 1
    return gate, calls


def test_it_tells_progress_rows_written_and_the_end(tmp_path: Path, index: SessionIndex) -> None:
    sessions(tmp_path / "s", 20)
    heard = Heard()
    refresh = IndexRefresh(index, [tmp_path / "s"], heard).start()
    assert heard.over.wait(30)
    refresh.join(5)
    assert not refresh.running
    assert heard.steps[0] == (0, 20) and heard.steps[-1] == (20, 20)
    assert heard.counts[0] == 16 and heard.counts[-1] == 20  # the first batch, then the rest
    stats, error = heard.ends[0]
    assert error is None and stats.added == 20 and not stats.cancelled
    assert len(index.sessions()) == 20


def test_counts_add_up_over_two_folders(tmp_path: Path, index: SessionIndex) -> None:
    sessions(tmp_path / "a", 2)
    sessions(tmp_path / "b", 3)
    heard = Heard()
    IndexRefresh(index, [tmp_path / "a", tmp_path / "b"], heard).start().join(30)
    assert heard.counts == [2, 5]
    assert heard.ends[0][0].added == 5


def test_cancel_stops_between_files_and_silences_it(
    tmp_path: Path, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions(tmp_path / "s", 30)
    gate, calls = held(monkeypatch, index, 3)
    heard = Heard()
    refresh = IndexRefresh(index, [tmp_path / "s"], heard).start()
    for _ in range(3000):
        if len(calls) >= 3:
            break
        threading.Event().wait(0.01)
    refresh.cancel()
    told = (list(heard.steps), list(heard.counts))
    gate.set()
    refresh.join(30)
    assert not refresh.running and len(calls) < 30  # stopped: the rest was never read
    assert heard.ends == [] and (heard.steps, heard.counts) == told  # nothing after cancel
    assert len(index.sessions()) <= 3  # what was read before it stopped is kept


def test_a_failure_is_told_not_raised(tmp_path: Path, index: SessionIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions(tmp_path / "s", 2)

    def broken(*_args: Any, **_kw: Any) -> RefreshStats:
        raise OSError("disk on fire")

    monkeypatch.setattr(index, "refresh", broken)
    heard = Heard()
    IndexRefresh(index, [tmp_path / "s"], heard).start().join(30)
    assert heard.ends[0][1] == "OSError: disk on fire"


def test_keep_missing_reads_a_part_and_drops_nothing(tmp_path: Path, index: SessionIndex) -> None:
    root = tmp_path / "s"
    sessions(root, 5)
    index.refresh(find_session_paths(root), root=root)
    newest = sorted(find_session_paths(root))[-2:]
    (tmp_path / "s" / "--w--" / Path(newest[0]).name).write_bytes(Path(newest[0]).read_bytes() + b"\n")  # changed
    stats = index.refresh(newest, root=root, keep_missing=True)
    assert stats.removed == 0 and stats.updated == 1 and stats.unchanged == 1
    assert len(index.sessions()) == 5
    assert index.refresh(newest, root=root).removed == 3  # without it, the rest counts as gone


def test_index_newest_reads_the_newest_files_before_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "s"
    sessions(root, 20)
    db = tmp_path / "cache" / "index.sqlite3"
    assert index_newest(str(root), lambda: SessionIndex(db)) == index_refresh.NEWEST_FILES
    with SessionIndex(db) as idx:
        listed = {s.path.name for s in idx.sessions()}
    everything = sorted(find_session_paths(root), key=lambda p: -os.stat(p).st_mtime_ns)
    assert listed == {Path(p).name for p in everything[: index_refresh.NEWEST_FILES]}

    monkeypatch.setattr(index_refresh, "NEWEST_BYTES", 1)  # a newest session past the budget waits for the browser
    other = tmp_path / "cache2" / "index.sqlite3"
    assert index_newest(str(root), lambda: SessionIndex(other)) == 0

    def broken() -> SessionIndex:
        raise OSError("read-only cache folder")

    assert index_newest(str(root), broken) == 0  # left to the browser, which says what failed


def test_pitree_indexes_the_newest_before_it_opens_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pitree.cli.main import main

    root = tmp_path / "s"
    sessions(root, 3)
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[int] = []

    def tui(path: Path | None, session_dir: str | None) -> int:
        assert path is None and session_dir == str(root)
        newest_indexed()  # what the browser does before its first rows (`PitreeApp.open_browser`)
        with SessionIndex() as idx:
            seen.append(len(idx.sessions()))
        return 0

    assert main(["--session-dir", str(root)], tui=tui) == 0
    assert seen == [3]  # in the index before the browser lists


def test_the_newest_are_indexed_by_a_child_while_the_browser_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "s"
    sessions(root, 3)
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    index_newest_early(str(root))
    pid = index_refresh._newest_child
    assert pid is not None and pid != os.getpid()
    newest_indexed()
    assert index_refresh._newest_child is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped
    with SessionIndex() as idx:
        assert len(idx.sessions()) == 3
    newest_indexed()  # nothing more to wait for


def test_a_child_still_indexing_after_the_wait_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_refresh, "index_newest", lambda session_dir: time.sleep(30))
    index_newest_early(str(tmp_path))
    pid = index_refresh._newest_child
    started = time.monotonic()
    newest_indexed(timeout=0.3)
    assert time.monotonic() - started < 5
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # killed and reaped: the browser lists without it


def test_without_fork_the_newest_are_indexed_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "s"
    sessions(root, 2)
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delattr(os, "fork")
    index_newest_early(str(root))
    assert index_refresh._newest_child is None
    with SessionIndex() as idx:
        assert len(idx.sessions()) == 2


# ---- in a process of its own (the browser's way) ---------------------------------------------------------------


def test_in_its_own_process_it_tells_the_same(tmp_path: Path, index: SessionIndex) -> None:
    sessions(tmp_path / "a", 18)
    sessions(tmp_path / "b", 3)
    heard = Heard()
    refresh = IndexRefresh(index, [tmp_path / "a", tmp_path / "b"], heard, own_process=True).start()
    assert heard.over.wait(60)
    refresh.join(10)
    assert not refresh.running
    assert heard.steps[0] == (0, 18) and heard.steps[-1] == (3, 3)
    assert heard.counts == [16, 18, 21]  # the first batch, the rest of a, then b: counts add up over the roots
    stats, error = heard.ends[0]
    assert error is None and stats.added == 21 and not stats.cancelled and stats.seconds > 0
    assert len(index.sessions()) == 21  # written by the child, read here


def test_in_its_own_process_cancel_ends_the_child_and_silences_it(tmp_path: Path, index: SessionIndex) -> None:
    sessions(tmp_path / "s", 400)
    heard = Heard()
    refresh = IndexRefresh(index, [tmp_path / "s"], heard, own_process=True).start()
    for _ in range(3000):
        if heard.counts:
            break
        threading.Event().wait(0.005)
    refresh.cancel()
    told = (list(heard.steps), list(heard.counts))
    refresh.join(30)
    assert not refresh.running  # the child ended: its stdin closing is its signal
    assert heard.ends == [] and (heard.steps, heard.counts) == told
    assert 0 < len(index.sessions()) <= 400


def test_in_its_own_process_a_failure_is_told(tmp_path: Path) -> None:
    sessions(tmp_path / "s", 2)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    index = SessionIndex(blocker / "index.sqlite3")  # the child cannot create its index there
    heard = Heard()
    IndexRefresh(index, [tmp_path / "s"], heard, own_process=True).start().join(60)
    stats, error = heard.ends[0]
    assert error is not None and "FileExistsError" in error and stats.added == 0


def test_in_its_own_process_a_child_that_dies_is_told(
    tmp_path: Path, index: SessionIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    sessions(tmp_path / "s", 2)
    monkeypatch.setattr(sys, "executable", "/bin/false")  # a child that ends at once, saying nothing
    heard = Heard()
    IndexRefresh(index, [tmp_path / "s"], heard, own_process=True).start().join(60)
    assert heard.ends[0][1] == "the index refresh process ended with code 1"
