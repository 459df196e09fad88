"""The kept first screen is shown only for the very file it was made from; any change to the file drops it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pitree.store import first_screen
from pitree.store.first_screen import FirstScreen, ScreenRow

from tests.sessions import assistant, to_bytes, user


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(first_screen, "MIN_BYTES", 0)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes([user("a1"), assistant("b2", "a1", text="x" * 5000)]))
    return path


def screen(leaf_row: int = 1) -> FirstScreen:
    rows = (
        ScreenRow("a1", "", (("• ", "tree-view--dot"), ("user: hi", "tree-view--user")), "", True, None, None, 1e12),
        ScreenRow("b2", "", (("assistant: ok", "tree-view--assistant"),), "  ← leaf", True, "m", 1234.0, float("nan")),
    )
    return FirstScreen(rows, leaf_row, 0, 2, {"entries": 2, "branches": 0, "leaf": "b2", "name": None})


def kept_equal(a: FirstScreen | None, b: FirstScreen) -> bool:
    # NaN (no time) never equals itself: compare what it stands for.
    def norm(s: FirstScreen) -> object:
        return [(r.id, r.prefix, r.parts, r.marker, r.active, r.model, r.tokens, repr(r.ts)) for r in s.rows]

    return a is not None and norm(a) == norm(b) and (a.leaf_row, a.first, a.total, a.status) == (
        b.leaf_row, b.first, b.total, b.status
    )


def test_kept_and_read_back_for_the_same_file(session: Path) -> None:
    assert first_screen.save(session, session.stat().st_size, screen())
    assert kept_equal(first_screen.load(session), screen())


def test_not_kept_for_a_size_the_file_is_not(session: Path) -> None:
    assert not first_screen.save(session, session.stat().st_size - 1, screen())
    assert first_screen.load(session) is None


def test_one_appended_line_drops_it(session: Path) -> None:
    first_screen.save(session, session.stat().st_size, screen())
    with open(session, "ab") as fh:
        fh.write(to_bytes([user("c3", "b2")], with_header=False))
    assert first_screen.load(session) is None


def test_a_rewrite_of_the_same_size_drops_it(session: Path) -> None:
    first_screen.save(session, session.stat().st_size, screen())
    st = session.stat()
    data = session.read_bytes()
    session.write_bytes(data.replace(b"x" * 100, b"y" * 100, 1))  # same size, other bytes
    os.utime(session, ns=(st.st_atime_ns, st.st_mtime_ns))  # even with the old time
    assert first_screen.load(session) is None


def test_a_replaced_file_drops_it(session: Path) -> None:
    first_screen.save(session, session.stat().st_size, screen())
    data, st = session.read_bytes(), session.stat()
    other = session.with_name("other.jsonl")
    other.write_bytes(data)
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, session)  # same bytes and time, another inode
    assert first_screen.load(session) is None


@pytest.mark.parametrize("junk", [b"", b"not json", b"[]", b'{"format": 99}', b'{"format": 1, "file": null}'])
def test_an_unreadable_kept_file_is_ignored(session: Path, junk: bytes) -> None:
    first_screen.save(session, session.stat().st_size, screen())
    kept = next((Path(os.environ["PITREE_CACHE_DIR"])).glob("*.screen"))
    kept.write_bytes(junk)
    assert first_screen.load(session) is None


def test_a_kept_file_with_bad_rows_is_ignored(session: Path) -> None:
    first_screen.save(session, session.stat().st_size, screen(leaf_row=1))
    kept = next((Path(os.environ["PITREE_CACHE_DIR"])).glob("*.screen"))
    kept.write_bytes(kept.read_bytes().replace(b'"leaf_row":1', b'"leaf_row":7'))
    assert first_screen.load(session) is None


@pytest.mark.parametrize("status", [b'{"entries":"2"}', b'{"entries":2,"x":1}', b'[]', b'{"leaf":3}'])
def test_kept_counts_of_the_wrong_kind_are_ignored(session: Path, status: bytes) -> None:
    first_screen.save(session, session.stat().st_size, screen())
    kept = next((Path(os.environ["PITREE_CACHE_DIR"])).glob("*.screen"))
    data = kept.read_bytes()
    start = data.index(b'"status":') + len(b'"status":')
    kept.write_bytes(data[:start] + status + b"}")
    got = first_screen.load(session)
    assert got is None or set(got.status) <= set(first_screen.STATUS)


def test_small_sessions_and_no_cache_keep_nothing(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(first_screen, "MIN_BYTES", 1 << 30)
    assert not first_screen.save(session, session.stat().st_size, screen())
    monkeypatch.setattr(first_screen, "MIN_BYTES", 0)
    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    assert not first_screen.save(session, session.stat().st_size, screen())
    assert first_screen.load(session) is None

