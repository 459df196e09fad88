"""`Spill` keeps pieces in a file with no name, and in memory when no file can be made or a write fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pitree.session import spill as spill_module
from pitree.session.spill import Spill

PIECES = [b"first piece\n", b"", "ünïcode σοφία\n".encode(), bytes(range(256)) * 40]


def check(spill: Spill, keys: list[int]) -> None:
    for key, piece in zip(keys, PIECES, strict=True):
        assert spill.get(key) == piece and spill.length(key) == len(piece)
        assert spill.get(key, 3) == piece[3:] and spill.get(key, 2, 7) == piece[2:7]
        assert spill.get(key, 5, 5) == b"" and spill.get(key, 0, 10**9) == piece


def test_pieces_go_to_a_file_with_no_name_and_read_back(tmp_path: Path) -> None:
    spill = Spill(tmp_path / "cache")
    keys = [spill.put(p) for p in PIECES]
    check(spill, keys)
    assert spill.on_disk == sum(map(len, PIECES)), "every piece is in the file, none in memory"
    assert all(isinstance(w, int) for w in spill._where)
    assert list((tmp_path / "cache").iterdir()) == [], "the file has no name in the folder"
    assert spill._file is not None
    assert os.readlink(f"/proc/self/fd/{spill._file.fileno()}").startswith(str(tmp_path / "cache"))


def test_in_memory_when_asked(tmp_path: Path) -> None:
    spill = Spill(tmp_path, in_memory=True)
    keys = [spill.put(p) for p in PIECES]
    check(spill, keys)
    assert spill.on_disk == 0 and spill._file is None


def test_a_folder_that_cannot_be_made_falls_back_to_the_temporary_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    spill = Spill(blocker / "cache")  # a folder under a file: mkdir fails
    keys = [spill.put(p) for p in PIECES]
    check(spill, keys)
    assert spill.on_disk == sum(map(len, PIECES))


def test_no_file_anywhere_keeps_the_pieces_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill_module.tempfile, "TemporaryFile", refuse)
    spill = Spill(tmp_path)
    keys = [spill.put(p) for p in PIECES]
    check(spill, keys)
    assert spill.on_disk == 0


def test_a_failing_write_moves_what_was_written_to_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spill = Spill(tmp_path)
    keys = [spill.put(p) for p in PIECES[:2]]
    real = os.pwrite

    def full(fd: int, data: bytes, offset: int) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill_module.os, "pwrite", full)
    keys += [spill.put(p) for p in PIECES[2:]]
    monkeypatch.setattr(spill_module.os, "pwrite", real)
    check(spill, keys)
    assert spill.on_disk == 0 and spill._file is None, "the file is given up and its pieces are in memory"
    assert spill.put(b"later") == 4 and spill.get(4) == b"later"


def test_a_short_write_writes_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.pwrite

    def short(fd: int, data: bytes, offset: int) -> int:
        return real(fd, bytes(data[:3]), offset)

    monkeypatch.setattr(spill_module.os, "pwrite", short)
    spill = Spill(tmp_path)
    keys = [spill.put(p) for p in PIECES]
    monkeypatch.setattr(spill_module.os, "pwrite", real)
    check(spill, keys)
