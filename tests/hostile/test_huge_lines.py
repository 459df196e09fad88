"""Issue #21 item 6: one huge line (a 200 MB tool result) must not make memory scale with it beyond a small
multiple, nor time with its square; what is shown or exported of it is cut, with its size."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pitree.session.parse import line_blocks
from pitree.session.text import CUT_CHARS, cut_huge
from pitree.summary.tokens import count_text

from tests.sessions import assistant, header, tool_result, user

MB = 1_000_000


def huge_session(path: Path, size: int, text: str = "word ") -> Path:
    big = (text * (size // len(text) + 1))[:size]
    entries = [
        header(),
        user("u1", None, "run it", t=1),
        assistant("a1", "u1", "ok", t=2, calls=(("c1", "bash", {"command": "cat big"}),)),
        tool_result("r1", "a1", "c1", name="bash", text=big, t=3),
        assistant("a2", "r1", "done", t=4),
    ]
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    return path


def peak_rss(*args: str | Path) -> tuple[int, bytes]:
    """(peak RSS in bytes, stdout) of `pitree ARGS` in a child process: its own peak and its forked parse
    child's, from wait4 (not RUSAGE_CHILDREN, which keeps the largest of every earlier test's children)."""
    env = {**os.environ, "PITREE_NO_CACHE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pitree.cli.main", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == 0, err.decode()
    return usage.ru_maxrss * 1024, out


PIECES = [
    "a",
    "Zé",
    "日本",
    "1",
    "234",
    " ",
    "  ",
    "\n",
    "\r\n",
    ".",
    "!?",
    "'s",
    "\t",
    "<|endoftext|>",
    "😀",
    "\u00a0",
]
PIECES += ["\u3000", " \n", "_", "\u0301", "½", "\u200b", "\x0b"]


@given(st.lists(st.sampled_from(PIECES), max_size=120).map("".join), st.integers(1, 40))
@settings(max_examples=300, deadline=None)
def test_counting_in_pieces_equals_counting_the_whole(text: str, piece: int) -> None:
    assert count_text(text, piece=piece) == count_text(text, piece=10**9)


def test_context_counts_a_huge_line_in_small_memory(tmp_path: Path) -> None:
    """tiktoken's token list of one 30 MB text held ~10x the line; counted in pieces it is gone at once."""
    line = 30 * MB
    path = huge_session(tmp_path / "huge.jsonl", line)
    small = huge_session(tmp_path / "small.jsonl", 1000)
    # RUSAGE_CHILDREN is the largest peak of any child so far: the small run goes first.
    base, _ = peak_rss("context", small, "--json")
    peak, out = peak_rss("context", path, "--json")
    report = orjson.loads(out)
    assert report["tokens"]["tiktoken"] > line // 5  # it really counted the whole text
    assert peak - base < 4 * line, f"{(peak - base) / line:.1f}x the line"


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_export_cuts_a_huge_string_and_says_how_big_it_was(tmp_path: Path, fmt: str) -> None:
    path = huge_session(tmp_path / "huge.jsonl", 5 * MB)
    out = tmp_path / f"out.{fmt}"
    done = subprocess.run(
        [sys.executable, "-m", "pitree.cli.main", "export", str(path), "--format", fmt, "-o", str(out)],
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    text = out.read_text()
    assert f"cut: the first {CUT_CHARS:,} of {5 * MB:,} characters are shown" in text
    assert len(text) < CUT_CHARS + 200_000
    assert "done" in text  # what comes after the huge entry is there


def test_cut_huge_cuts_every_string_value_at_any_depth() -> None:
    deep: dict[str, object] = {"s": "x" * 50}
    node = deep
    for _ in range(5000):  # deeper than Python's recursion limit
        child: dict[str, object] = {}
        node["d"] = [child]
        node = child
    node["s"] = "y" * 50
    cut_huge(deep, limit=10)
    assert deep["s"].startswith("x" * 10 + "\n… [cut: the first 10 of 50")  # type: ignore[union-attr]
    assert node["s"].startswith("y" * 10 + "\n…")  # type: ignore[union-attr]
    assert cut_huge("z" * 5, limit=10) == "z" * 5


def test_reading_a_line_longer_than_a_chunk_holds_it_once() -> None:
    """The reader joined the pieces of a long line at every read: quadratic time (37 s for 200 MB) and two
    copies at once. Now: the pieces are not kept, the line is read once more whole."""
    line = b'{"t":"' + b"x" * (20 * MB) + b'"}\n' + b'{"a":1}\n'
    fh = io.BytesIO(line)
    tracemalloc.start()
    try:
        blocks = []
        for data, _ in line_blocks(fh, 0, None, 1 << 20):
            if data:
                blocks.append(len(data))
            del data
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(blocks) == len(line)
    assert peak < 1.3 * 20 * MB, f"{peak / (20 * MB):.2f}x the line"
