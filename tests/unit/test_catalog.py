"""Where Pi's sessions are (root, per-cwd folder names) and which files a scan finds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pitree.store.catalog import (
    cwd_folder_name,
    find_session_files,
    is_default_layout,
    read_header,
    sessions_root,
    stat_files,
)

HOME = str(Path.home())


@pytest.mark.parametrize(
    ("session_dir", "env", "expected"),
    [
        (None, {}, f"{HOME}/.pi/agent/sessions"),
        (None, {"PI_CODING_AGENT_DIR": "/x/agent"}, "/x/agent/sessions"),
        (None, {"PI_CODING_AGENT_DIR": "~/a"}, f"{HOME}/a/sessions"),
        (None, {"PI_CODING_AGENT_DIR": "~"}, f"{HOME}/sessions"),
        (None, {"PI_CODING_AGENT_DIR": "~other/a"}, "~other/a/sessions"),  # Pi expands only ~ and ~/
        (None, {"PI_CODING_AGENT_DIR": ""}, f"{HOME}/.pi/agent/sessions"),
        (None, {"PI_CODING_AGENT_SESSION_DIR": "/s", "PI_CODING_AGENT_DIR": "/x"}, "/s"),
        ("/d", {"PI_CODING_AGENT_SESSION_DIR": "/s", "PI_CODING_AGENT_DIR": "/x"}, "/d"),
        ("~/d", {}, f"{HOME}/d"),
        ("", {"PI_CODING_AGENT_DIR": "/x"}, "/x/sessions"),
    ],
)
def test_sessions_root(session_dir: str | None, env: dict[str, str], expected: str) -> None:
    assert sessions_root(session_dir, env=env) == Path(expected)


@pytest.mark.parametrize(
    ("session_dir", "env", "default"),
    [(None, {}, True), ("/d", {}, False), (None, {"PI_CODING_AGENT_SESSION_DIR": "/s"}, False), ("", {}, True)],
)
def test_is_default_layout(session_dir: str | None, env: dict[str, str], default: bool) -> None:
    assert is_default_layout(session_dir, env=env) is default


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/home/me/x", "--home-me-x--"),
        ("/", "----"),
        ("/a:b/c", "--a-b-c--"),
        ("C:\\Users\\me\\proj", "--C--Users-me-proj--"),
        ("\\\\srv\\share", "---srv-share--"),  # only one leading separator is dropped
        ("//double", "---double--"),
        ("rel/path", "--rel-path--"),
        ("/with space/ünï", "--with space-ünï--"),
    ],
)
def test_cwd_folder_name_is_pis_rule(cwd: str, folder: str) -> None:
    assert cwd_folder_name(cwd) == folder


def test_find_session_files_scans_root_and_one_level(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    (root / "--a--" / "deeper").mkdir(parents=True)
    (root / "--b--").mkdir()
    (root / "top.jsonl").write_bytes(b"")
    (root / "--a--" / "1.jsonl").write_bytes(b"")
    (root / "--a--" / "notes.txt").write_bytes(b"")
    (root / "--a--" / "deeper" / "too-deep.jsonl").write_bytes(b"")
    (root / "--b--" / "2.jsonl").write_bytes(b"")
    (root / "--b--" / "dir.jsonl").mkdir()  # a folder with the suffix is not a file
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "linked.jsonl").write_bytes(b"")
    (root / "--link--").symlink_to(outside, target_is_directory=True)  # Pi's listAll skips symlinked folders
    found = find_session_files(root)
    assert [p.relative_to(root).as_posix() for p in found] == ["--a--/1.jsonl", "--b--/2.jsonl", "top.jsonl"]


def test_find_session_files_of_a_missing_root_is_empty(tmp_path: Path) -> None:
    assert find_session_files(tmp_path / "nope") == []
    (tmp_path / "file").write_bytes(b"")
    assert find_session_files(tmp_path / "file") == []


def test_stat_files_skips_missing_and_non_files(tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    a.write_bytes(b"x")
    (tmp_path / "d.jsonl").mkdir()
    got = stat_files([a, tmp_path / "gone.jsonl", tmp_path / "d.jsonl"])
    assert list(got) == [a] and got[a].st_size == 1


@pytest.mark.parametrize(
    ("data", "session_id"),
    [
        (b'{"type":"session","id":"abc","cwd":"/x"}\n{"type":"message"}\n', "abc"),
        (b'{"type":"session","id":"abc"}', "abc"),  # no newline yet
        (b'{"type":"session","id":7}\n', None),
        (b'{"type":"message","id":"abc"}\n', None),
        (b"not json\n", None),
        (b"", None),
        (b"\xef\xbb\xbf" + b'{"type":"session","id":"abc"}\n', None),  # BOM: Pi cannot read it either
        (b"[1,2]\n", None),
    ],
)
def test_read_header(tmp_path: Path, data: bytes, session_id: str | None) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    header = read_header(path)
    assert (header["id"] if header else None) == session_id


def test_read_header_of_missing_file(tmp_path: Path) -> None:
    assert read_header(tmp_path / "none.jsonl") is None
    assert os.path.exists(tmp_path)
