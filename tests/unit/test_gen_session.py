"""Tests for bench/gen_session.py: valid v3 trees of the requested shape, sizes and determinism."""

from __future__ import annotations

import importlib.util
import re
import sys
import tracemalloc
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

_GEN_PATH = Path(__file__).resolve().parents[2] / "bench" / "gen_session.py"
_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
_ID = re.compile(r"^[0-9a-f]{8}$")


def _load_gen() -> ModuleType:
    # bench/ is not a package, so load the script by path.
    spec = importlib.util.spec_from_file_location("gen_session", _GEN_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


gen = _load_gen()


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"", "file must end with a newline"
    objs = [orjson.loads(line) for line in lines[:-1]]
    return objs[0], objs[1:]


def _check_tree(entries: list[dict[str, Any]]) -> Counter[str]:
    """Assert the structural invariants and return the number of children per parent id."""
    seen: set[str] = set()
    children: Counter[str] = Counter()
    last_ts = ""
    for i, e in enumerate(entries):
        assert _ID.match(e["id"]), e["id"]
        assert e["id"] not in seen, f"duplicate id {e['id']}"
        assert _ISO.match(e["timestamp"]), e["timestamp"]
        assert e["timestamp"] > last_ts, "timestamps must increase in file order"
        last_ts = e["timestamp"]
        if i == 0:
            assert e["parentId"] is None
        else:
            assert e["parentId"] in seen, f"entry {i} has parent {e['parentId']!r} not written before it"
            children[e["parentId"]] += 1
        seen.add(e["id"])
    return children


def _ancestors(entries: list[dict[str, Any]], entry_id: str) -> set[str]:
    parent = {e["id"]: e["parentId"] for e in entries}
    out: set[str] = set()
    cur = parent[entry_id]
    while cur is not None:
        out.add(cur)
        cur = parent[cur]
    return out


def test_normal_file_is_a_valid_tree_with_requested_features(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    stats = gen.generate(out, 400, branches=4, compactions=3, labels=5, seed=7)
    header, entries = _read(out)

    assert header["type"] == "session" and header["version"] == 3 and isinstance(header["id"], str)
    assert len(entries) == 400 == stats["entries"]
    assert stats["bytes"] == out.stat().st_size
    assert stats["leaf"] == entries[-1]["id"]

    children = _check_tree(entries)
    assert sum(1 for n in children.values() if n > 1) == 4 == stats["branches"]

    by_type = Counter(e["type"] for e in entries)
    assert by_type["compaction"] == 3
    assert by_type["label"] == 5
    assert by_type["session_info"] >= 1
    for e in entries:
        if e["type"] == "compaction":
            assert e["firstKeptEntryId"] in _ancestors(entries, e["id"]), "firstKeptEntryId must be on the path"
            assert isinstance(e["tokensBefore"], int) and e["summary"].startswith("## Goal")
            assert set(e["details"]) == {"readFiles", "modifiedFiles"}
        elif e["type"] == "branch_summary":
            assert e["fromId"] in {x["id"] for x in entries}
        elif e["type"] == "label":
            assert e["targetId"] in {x["id"] for x in entries}

    roles = Counter(e["message"]["role"] for e in entries if e["type"] == "message")
    assert roles["user"] > 0 and roles["assistant"] > 0 and roles["toolResult"] > 0
    tools = {
        c["name"]
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "assistant"
        for c in e["message"]["content"]
        if c["type"] == "toolCall"
    }
    assert tools == {"read", "write", "edit", "bash", "grep"}


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    gen.generate(a, 300, branches=3, compactions=2, labels=2, seed=11)
    gen.generate(b, 300, branches=3, compactions=2, labels=2, seed=11)
    gen.generate(c, 300, branches=3, compactions=2, labels=2, seed=12)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


@pytest.mark.parametrize(
    ("shape", "entries", "max_children", "forks", "max_avg_bytes"),
    [
        ("chain", 500, 1, 0, None),
        ("wide", 300, 299, 1, None),
        ("tiny", 3000, 2, 3, 250),
    ],
)
def test_shapes(
    tmp_path: Path, shape: str, entries: int, max_children: int, forks: int, max_avg_bytes: int | None
) -> None:
    out = tmp_path / f"{shape}.jsonl"
    stats = gen.generate(out, entries, shape=shape, seed=3)
    _, written = _read(out)
    assert len(written) == entries
    children = _check_tree(written)
    assert max(children.values()) == max_children
    assert sum(1 for n in children.values() if n > 1) == forks == stats["branches"]
    if shape == "chain":
        assert len(_ancestors(written, written[-1]["id"])) == entries - 1
    if max_avg_bytes is not None:
        assert out.stat().st_size / entries < max_avg_bytes


@pytest.mark.parametrize("avg_bytes", [700, 1000, 3000])
def test_size_tracks_avg_bytes(tmp_path: Path, avg_bytes: int) -> None:
    out = tmp_path / "s.jsonl"
    n = 2000
    gen.generate(out, n, seed=5, avg_bytes=avg_bytes)
    assert abs(out.stat().st_size - n * avg_bytes) <= 0.2 * n * avg_bytes


def test_streams_without_holding_the_file(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    gen.generate(out, 10, seed=1)  # builds the shared text pools outside the measurement
    tracemalloc.start()
    try:
        gen.generate(out, 3000, seed=1, avg_bytes=3000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = out.stat().st_size
    assert size > 8_000_000
    # About 1 MB of write buffer plus one entry at a time; the whole file would be 8 MB or more.
    assert peak < 3_000_000, f"peak {peak} bytes for a {size}-byte file"


def test_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        gen.generate(tmp_path / "x.jsonl", 10, shape="round")
    with pytest.raises(ValueError):
        gen.generate(tmp_path / "x.jsonl", 0)


def test_cli_writes_file_and_prints_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.jsonl"
    assert gen.main([str(out), "--entries", "120", "--branches", "2", "--seed", "4"]) == 0
    stats = orjson.loads(capsys.readouterr().out)
    assert stats["entries"] == 120 and stats["branches"] == 2 and stats["bytes"] == out.stat().st_size
