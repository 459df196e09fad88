"""An export written a piece at a time (issue #19): the same bytes whatever the batch and piece sizes, the file
read a batch at a time, tool results paired without a set of every call id, progress and cancelling (nothing
written, no temporary file left), and the command line's progress line."""

from __future__ import annotations

import io
import itertools
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pitree.cli import progress as cli_progress
from pitree.ops.export import ExportCancelled, ExportError, build, export_bytes, export_path, fork, pairing
from pitree.store import atomic
from pitree.store.session_file import EntryReader, load_session

from tests.sessions import assistant, entry, to_bytes, tool_result, tool_turns, user

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLES = itertools.count()


def _session(steps: list[tuple[str, int]], branch_at: int) -> list[dict[str, Any]]:
    """A path of users, assistants making calls (mostly new ids, some made again) and results answering recent
    calls (sometimes twice, sometimes an id no turn made), and a side branch whose assistant makes calls too (the
    tree's maker of an id can be off the path)."""
    out: list[dict[str, Any]] = [user("e0", None, "go", t=0)]
    made: list[str] = []
    for i, (kind, k) in enumerate(steps, 1):
        parent, eid = f"e{i - 1}", f"e{i}"
        if kind == "call":
            ids = [made[k % len(made)] if k % 5 == 0 and made else f"c{i}.{j}" for j in range(1 + k % 3)]
            made += ids
            calls = tuple((c, "read", {"path": c}) for c in ids)
            out.append(assistant(eid, parent, text=f"turn {i}", t=i, calls=calls))
        elif kind == "result":
            call_id = made[-1 - k % len(made)] if made and k % 7 else "zz"
            out.append(tool_result(eid, parent, call_id, text=f"out {i}", t=i))
        else:
            out.append(user(eid, parent, f"user {i}", t=i))
    fork_from = f"e{min(branch_at, len(steps))}"
    again = ((made[0], "bash", {}),) if made and branch_at % 3 == 0 else ()
    side = (("side.1", "bash", {"command": "ls"}), *again)
    out.append(assistant("side", fork_from, text="side", t=len(steps) + 1, calls=side))
    out.append(user(f"e{len(steps)}-leaf", f"e{len(steps)}", "last", t=len(steps) + 2))
    return out


steps_strategy = st.lists(st.tuples(st.sampled_from(["call", "result", "user"]), st.integers(0, 7)), max_size=40)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=steps_strategy, branch_at=st.integers(0, 40), near=st.integers(0, 5))
def test_results_paired_without_a_dict_of_call_ids_as_with_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, int]], branch_at: int, near: int
) -> None:
    path = tmp_path / f"s{next(EXAMPLES)}.jsonl"  # a new file per example: a session file is never rewritten
    path.write_bytes(to_bytes(_session(steps, branch_at)))
    tree, _ = load_session(path)
    branch = tree.branch(tree.leaf)
    results = pairing.exact(branch)
    monkeypatch.setattr(pairing, "NEAR", near)
    paired = pairing.Pairing(tree, branch)
    for i, node in enumerate(branch):
        call_id = node.call_id
        assert paired.paired(node) is (isinstance(call_id, str) and results.get(call_id) is node), node.id
        for c in node.call_ids():
            if isinstance(c, str):
                assert paired.result_of(c, i) is results.get(c), (node.id, c)


def test_a_usual_session_is_paired_without_the_dict(tmp_path: Path) -> None:
    tree, _ = load_session(_long_session(tmp_path))
    assert pairing.Pairing(tree, tree.branch(tree.leaf)).results is None
    twice = [user("u0", None, "go", t=0), assistant("a1", "u0", t=1, calls=(("c1", "read", {}),))]
    twice += [tool_result("r1", "a1", "c1", t=2), assistant("a2", "r1", t=3, calls=(("c1", "read", {}),))]
    path = tmp_path / "twice.jsonl"
    path.write_bytes(to_bytes(twice))
    tree, _ = load_session(path)
    assert pairing.Pairing(tree, tree.branch(tree.leaf)).results == {"c1": tree.get("r1")}  # an id made twice
    answered_twice = [*twice[:3], tool_result("r2", "r1", "c1", t=3), tool_result("r3", "r2", "zz", t=4)]
    path = tmp_path / "answered-twice.jsonl"
    path.write_bytes(to_bytes(answered_twice))
    tree, _ = load_session(path)
    branch = tree.branch(tree.leaf)
    paired = pairing.Pairing(tree, branch)
    assert paired.results is None and pairing.exact(branch) == {"c1": tree.get("r1")}
    assert [paired.paired(n) for n in branch] == [False, False, True, False, False]  # the first answer only
    assert paired.result_of("c1", 1) is tree.get("r1")


def _exports(path: Path) -> dict[str, bytes]:
    tree, _ = load_session(path)
    reader = EntryReader(path, tree)
    out = {}
    for leaf in [None, *[n for n in tree.nodes if not n.children]]:
        for fmt in ("md", "html", "jsonl"):
            ids = itertools.count()
            options = {"session_id": "S", "timestamp": "T", "new_id": lambda taken, ids=ids: f"{next(ids):08x}"}
            key = f"{leaf.id if leaf else None} {fmt}"
            out[key] = export_bytes(tree, reader, leaf, fmt, True, **(options if fmt == "jsonl" else {}))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=steps_strategy, branch_at=st.integers(0, 40))
def test_small_batches_and_pieces_give_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, int]], branch_at: int
) -> None:
    path = tmp_path / f"s{next(EXAMPLES)}.jsonl"  # a new file per example: a session file is never rewritten
    path.write_bytes(to_bytes(_session(steps, branch_at)))
    whole = _exports(path)
    with monkeypatch.context() as m:
        m.setattr(build, "BATCH_ENTRIES", 2)
        m.setattr(build, "BATCH_BYTES", 1)
        m.setattr("pitree.ops.export.CHUNK_BYTES", 1)
        m.setattr(fork, "PROGRESS_EVERY", 1)
        assert _exports(path) == whole


@pytest.mark.parametrize("name", ["branched.jsonl", "v1_linear.jsonl", "v2_hookmessage.jsonl", "hostile.jsonl"])
def test_small_batches_on_the_test_files(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / name
    path.write_bytes((DATA / name).read_bytes())
    whole = _exports(path)
    monkeypatch.setattr(build, "BATCH_ENTRIES", 3)
    monkeypatch.setattr(build, "BATCH_BYTES", 10)
    monkeypatch.setattr("pitree.ops.export.CHUNK_BYTES", 7)
    assert _exports(path) == whole


def _long_session(tmp_path: Path, turns: int = 300) -> Path:
    path = tmp_path / "long.jsonl"
    path.write_bytes(to_bytes(tool_turns(turns)))
    return path


def test_the_file_is_read_a_batch_at_a_time_each_entry_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _long_session(tmp_path)
    tree, _ = load_session(path)
    reader = EntryReader(path, tree)
    monkeypatch.setattr(build, "BATCH_ENTRIES", 50)
    reads: list[int] = []
    real = EntryReader.entries

    def entries(self: EntryReader, nodes: list[Any], shape: Any = None) -> list[dict[str, Any]]:
        reads.append(len(nodes))
        return real(self, nodes, shape)

    monkeypatch.setattr(EntryReader, "entries", entries)
    text = export_bytes(tree, reader, None, "md").decode()
    assert "out 300" in text and text.count("<details>") == 300  # each call folds its result
    assert reads and max(reads) <= 50 + 50  # a batch, and the results its calls fold in
    assert sum(reads) == len(tree.nodes)  # every entry read once
    monkeypatch.setattr(EntryReader, "raw", lambda self, node: pytest.fail("one open for the whole fork"))
    assert export_bytes(tree, reader, None, "jsonl").count(b"\n") == len(tree.nodes) + 1
    edited = tool_turns(20)
    edited.append(entry("context_edit", "x1", edited[-1]["id"], t=99, targetId="r3", replacement=None))
    path = tmp_path / "edited.jsonl"
    path.write_bytes(to_bytes(edited))
    tree, _ = load_session(path)
    reads.clear()
    assert "omits" in export_bytes(tree, EntryReader(path, tree), None, "md").decode()
    assert sum(reads) == len(tree.nodes) + 1  # the edit once for what it does, once for its own section


@pytest.mark.parametrize("fmt", ["md", "html", "jsonl"])
def test_progress_then_a_cancel_writes_nothing(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _long_session(tmp_path)
    tree, _ = load_session(path)
    reader = EntryReader(path, tree)
    monkeypatch.setattr(build, "BATCH_ENTRIES", 64)
    monkeypatch.setattr(fork, "PROGRESS_EVERY", 64)
    monkeypatch.setattr("pitree.ops.export.CHUNK_BYTES", 1)  # pieces reach the file before the cancel
    seen: list[tuple[int, int]] = []
    out = tmp_path / "out" / f"x.{fmt}"
    out.parent.mkdir()
    written = export_path(tree, reader, None, fmt, out, progress=lambda d, t: seen.append((d, t)))
    assert written == out and out.stat().st_size > 0
    total = len(tree.nodes)
    assert seen[-1] == (total, total) and [d for d, _ in seen] == sorted({d for d, _ in seen}) and len(seen) > 3
    before = out.read_bytes()

    def stop(done: int, total: int) -> None:
        if done > 200:
            raise ExportCancelled()

    with pytest.raises(ExportCancelled, match="nothing was written"):
        export_path(tree, reader, None, fmt, out, force=True, progress=stop)
    assert out.read_bytes() == before  # the old file is kept
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # and no temporary file is left

    def ctrl_c(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # Ctrl+C in the command line: the same
        export_path(tree, reader, None, fmt, out.with_suffix(".new"), progress=ctrl_c)
    assert [p.name for p in out.parent.iterdir()] == [out.name]


def test_a_failing_piece_is_not_written_again_under_another_name(tmp_path: Path) -> None:
    def pieces() -> Any:
        yield b"first"
        raise FileExistsError("from inside the export")  # not the temporary name being taken: no retry

    with pytest.raises(FileExistsError):
        atomic.write_temp(tmp_path / "x.md", pieces())
    assert list(tmp_path.iterdir()) == []


def test_unknown_format_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_bytes((DATA / "branched.jsonl").read_bytes())
    tree, _ = load_session(path)
    with pytest.raises(ExportError, match="unknown export format"):
        export_path(tree, EntryReader(path, tree), None, "pdf", tmp_path / "x.pdf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.jsonl"]


def test_new_label_ids_avoid_every_id_of_the_source(tmp_path: Path) -> None:
    entries = [user("aaaa0000", None, "x", t=0), user("bbbb0000", "aaaa0000", "y", t=1)]
    entries.append(user("side0000", "aaaa0000", "z", t=2))  # off the exported path
    entries.append(entry("label", "lab00000", "bbbb0000", t=3, targetId="aaaa0000", label="start"))
    path = tmp_path / "l.jsonl"
    path.write_bytes(to_bytes(entries))
    tree, _ = load_session(path)
    asked: list[Any] = []

    def new_id(taken: Any) -> str:
        asked.append([x in taken for x in ("side0000", "aaaa0000", "lab00000", "ffff0000", "gggg0000")])
        return "ffff0000" if len(asked) == 1 else "gggg0000"

    lines = fork.fork_lines(
        tree, EntryReader(path, tree).raw, tree.get("bbbb0000"), parent_session="p", cwd="/", new_id=new_id
    )
    assert asked == [[True, True, True, False, False]]  # every id of the source, off the path too
    assert b'"label":"start"' in lines[-1]


def test_command_line_progress_line(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    clock = iter([0.0, 0.2, 1.0, 1.05, 1.3, 1.31])
    monkeypatch.setattr(cli_progress.time, "monotonic", lambda: next(clock))
    show, clear = cli_progress.progress_printer(lambda d, t: f"{d} of {t}", 0.5)
    assert show is not None
    show(1, 10)  # at 0.2 s: not yet
    show(2, 10)  # at 1.0 s: shown
    show(3, 10)  # 0.05 s later: too soon
    show(10, 10)  # the last step is always shown
    clear()
    assert err.getvalue() == "\r2 of 10\x1b[K\r10 of 10\x1b[K\r\x1b[K"
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: no progress at all
    assert cli_progress.progress_printer(lambda d, t: "", 0)[0] is None


def test_commands_show_the_progress_of_reading_a_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command that reads a session (here `pitree tree --json`, `label` and `export`'s read) says how far
    the read is on a terminal's stderr (a big cold read takes ~10 s at 1M entries), under a safe file name, and
    clears the line after."""
    from pitree.cli import common, write

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(cli_progress, "READ_AFTER", 0.0)
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "x\x1b[31m.jsonl"
    path.write_bytes(to_bytes(tool_turns(50)))
    for read in (lambda: common.load(str(path)), lambda: write._load(path), lambda: common.read_session(path)):
        err = Tty()
        monkeypatch.setattr(sys, "stderr", err)
        read()
        size = path.stat().st_size
        shown = err.getvalue()
        assert shown.startswith("\rreading x␛[31m.jsonl: ") and "(100%)" in shown and shown.endswith("\r\x1b[K")
        assert "\x1b[31m" not in shown and f"of {size / 1e6:,.0f} MB" in shown
