"""Usage per model and per branch segment, the context curve along a path, and the text plot."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pitree.session.context import build_context, tokens_after
from pitree.session.context_curve import context_curve
from pitree.session.context_size import context_size
from pitree.session.load import load_bytes
from pitree.session.usage import Segment, Usage, model_key, segments, usage_report
from pitree.widgets.render.plot import buckets, context_plot

from tests.sessions import PI1_KINDS, assistant, entry, random_pi1_path, to_bytes, ts, user


def tree_of(entries: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    return load_bytes(to_bytes(entries))


def _forked() -> list[dict[str, Any]]:
    # u1 - a1 - u2 - a2 (leaf)      a1 forks: u3 - a3
    a_other = assistant("a3", "u3", t=6)
    a_other["message"]["model"] = "gpt"
    a_other["message"]["provider"] = "openai"
    a_other["message"]["usage"]["cost"] = {"total": 2.0}
    return [
        user("u1", None, t=1),
        assistant("a1", "u1", t=2),
        user("u3", "a1", t=3),
        a_other,
        user("u2", "a1", t=4),
        assistant("a2", "u2", t=5),
    ]


def test_segments_split_at_forks_and_add_up() -> None:
    tree = tree_of(_forked())
    segs = segments(tree)
    assert [(s.start.id, s.end.id, s.entries, s.forks) for s in segs] == [
        ("u1", "a1", 2, 0),
        ("u3", "a3", 2, 1),  # children in timestamp order, as the tree holds them
        ("u2", "a2", 2, 1),
    ]
    report = usage_report(tree)
    assert report["total"]["messages"] == 3 and report["total"]["cost"] == 3.0
    assert report["activePath"]["messages"] == 2 and report["activePath"]["cost"] == 1.0
    assert report["models"] == {
        "openai/gpt": {**report["models"]["openai/gpt"], "messages": 1, "cost": 2.0},
        "anthropic/claude": {**report["models"]["anthropic/claude"], "messages": 2, "cost": 1.0},
    }
    assert list(report["models"]) == ["openai/gpt", "anthropic/claude"]  # by cost, highest first
    by_start = {s["startId"]: s for s in report["segments"]}
    assert by_start["u2"]["holdsLeaf"] and by_start["u2"]["onActivePath"]
    assert not by_start["u3"]["onActivePath"] and by_start["u3"]["endsAtLeaf"]
    assert sum(s["entries"] for s in report["segments"]) == tree.entry_count
    assert sum(s["cost"] for s in report["segments"]) == report["total"]["cost"]


def _segments_entry_by_entry(tree: Any) -> list[tuple[Any, ...]]:
    """The segments as first written: every entry in pre-order, mapped to its segment."""
    out: list[Any] = []
    seg_of: dict[int, Any] = {}
    for node in tree.iter_tree():
        parent = node.parent
        if parent is None or len(parent.children) > 1:
            seg = Segment(start=node, end=node, forks=0 if parent is None else seg_of[id(parent)].forks + 1)
            out.append(seg)
        else:
            seg = seg_of[id(parent)]
        seg_of[id(node)] = seg
        seg.end = node
        seg.entries += 1
        if node.usage is not None:
            seg.usage.add(node.usage)
            seg.models.setdefault(model_key(node), Usage()).add(node.usage)
    return [_seg_tuple(s) for s in out]


def _seg_tuple(s: Segment) -> tuple[Any, ...]:
    models = {k: (v.messages, v.values) for k, v in s.models.items()}
    return s.start, s.end, s.entries, s.forks, s.usage.messages, s.usage.values, models


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 40), st.sampled_from(["user", "assistant", "usage"])), max_size=60))
def test_segments_equal_an_entry_by_entry_walk(shape: list[tuple[int, str]]) -> None:
    """Segments walked a chain at a time, on random forests (orphans, forks, usage on several kinds of entries):
    the same segments, figures and order as mapping every entry to its segment."""
    entries: list[dict[str, Any]] = []
    for i, (parent, kind) in enumerate(shape):
        pid = None if parent == -1 else "gone" if parent == -2 else f"i{parent % max(i, 1)}"
        if kind == "usage":
            used = {"input": parent, "output": 1, "cost": {"total": 0.5}}
            entries.append(
                entry("usage", f"i{i}", pid, t=i, kind="k", provider="p", model=f"m{parent % 3}", usage=used)
            )
        else:
            entries.append(user(f"i{i}", pid, "x", t=i) if kind == "user" else assistant(f"i{i}", pid, t=i))
    tree = tree_of(entries)
    assert [_seg_tuple(s) for s in segments(tree)] == _segments_entry_by_entry(tree)


def test_usage_of_an_empty_session() -> None:
    report = usage_report(tree_of([]))
    assert report["total"]["messages"] == 0 and report["segments"] == [] and report["models"] == {}


def _compacted(first_kept: str | None) -> list[dict[str, Any]]:
    out = [user("u1", None, "x" * 400, t=1), assistant("a1", "u1", "y" * 800, t=2), user("u2", "a1", "z" * 40, t=3)]
    fields: dict[str, Any] = {"summary": "s" * 80, "tokensBefore": 400}
    if first_kept is not None:
        fields["firstKeptEntryId"] = first_kept
    out.append(entry("compaction", "c1", "u2", t=4, **fields))
    out += [assistant("a2", "c1", "w" * 120, t=5), user("u3", "a2", "v" * 20, t=6)]
    return out


@pytest.mark.parametrize("first_kept", ["u2", "a1", "u1", "gone", None])
def test_curve_equals_build_context_at_every_point(first_kept: str | None) -> None:
    tree = tree_of(_compacted(first_kept))
    points = context_curve(tree, None)
    assert [p.node.id for p in points] == ["u1", "a1", "u2", "c1", "a2", "u3"]
    assert [p.compaction for p in points] == [False, False, False, True, False, False]
    for p in points:
        assert p.tokens == build_context(tree, p.node).size.tokens, p.node.id
    # u2 follows a1's usage (10 tokens): Pi sizes the context from it; after the compaction no usage counts
    # until a2 answers, so the size is the estimate of summary + kept entries; then a2's usage again
    assert points[2].tokens == 10 + 10 and points[4].tokens == 10 and points[5].tokens == 10 + 5
    assert points[3].tokens == build_context(tree, tree.get("c1")).tokens  # no system messages: the same
    assert tokens_after(tree, tree.get("c1")) == points[3].tokens  # type: ignore[arg-type]


@pytest.mark.parametrize("first_kept", ["u2", "u1", "gone", "c1", "b1"])
def test_tokens_after_a_compaction_reads_only_its_kept_range(first_kept: str) -> None:
    """As `build_context(tree, compaction).tokens`, also when the first kept entry is on another branch, is the
    compaction itself (retain-none), is missing, or has its id on two lines."""
    entries = _compacted(first_kept) + [user("b1", "u1", "q" * 44, t=7)]  # b1: a branch off u1
    tree = tree_of(entries)
    c1 = tree.get("c1")
    assert c1 is not None
    assert tokens_after(tree, c1) == build_context(tree, c1).tokens
    repeated = tree_of([*entries, {**entries[1], "timestamp": ts(9)}])  # a1 again: the later line wins
    c1 = repeated.get("c1")
    assert c1 is not None and any("duplicate id a1" in p.message for p in repeated.problems)
    assert tokens_after(repeated, c1) == build_context(repeated, c1).tokens


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-2, 6), st.booleans()), min_size=1, max_size=25))
def test_no_id_repeats_on_a_path(lines: list[tuple[int, int, bool]]) -> None:
    """What `select`, `tokens_after` and the compaction split rely on to walk back and stop: ids repeated on
    other lines, parents named before or after, missing or the entry's own, never put one id twice on the path
    of an entry of the tree (a repeated id's later line replaces the earlier one in it)."""
    entries = []
    for t, (eid, parent, compaction) in enumerate(lines):
        pid = None if parent == -1 else "gone" if parent == -2 else f"i{parent}"
        if compaction:
            entries.append(entry("compaction", f"i{eid}", pid, t=t, summary="s", firstKeptEntryId="i0"))
        else:
            entries.append(user(f"i{eid}", pid, "x", t=t))
    tree = tree_of(entries)
    for node in tree.iter_tree():
        ids = [n.id for n in tree.branch(node)]
        assert len(ids) == len(set(ids))
        if node.type == "compaction":
            assert tokens_after(tree, node) == build_context(tree, node).tokens


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PI1_KINDS), st.integers(0, 30)), max_size=25), st.data())
def test_curve_matches_build_context_on_random_paths(kinds: list[tuple[str, int]], data: st.DataObject) -> None:
    entries = random_pi1_path(kinds, data)
    tree = tree_of(entries)
    for p in context_curve(tree, None):
        assert p.tokens == build_context(tree, p.node).size.tokens, p.node.id
        assert context_size(tree, p.node) == build_context(tree, p.node).size, p.node.id  # the status bar's
        if p.compaction:  # a compaction's tree row: its kept range read, not the path above it
            assert tokens_after(tree, p.node) == build_context(tree, p.node).tokens, p.node.id


def test_buckets_take_the_largest_value_per_column() -> None:
    assert buckets([1, 5, 2, 8, 3, 0], 3) == [(0, 2, 5), (2, 4, 8), (4, 6, 3)]
    assert buckets([4, 2], 10) == [(0, 1, 4), (1, 2, 2)]
    assert buckets([], 10) == []


def test_plot_marks_compactions_and_the_window() -> None:
    values = [10, 20, 30, 40, 5, 15]
    text = context_plot(values, [4], window=50, width=7 + 1 + 6, height=4).plain
    lines = text.split("\n")
    assert len(lines) == 4 + 2
    assert lines[-2].endswith("────▲─")  # the axis under the 5th entry
    assert "┄" in text and "window 50" in lines[-1]
    off = context_plot(values, [], window=10_000, width=20, height=4).plain
    assert "off scale" in off and "┄" not in off
    assert "▲" not in off.split("\n")[-1] and "compaction" not in off  # no legend for what is not there
    assert "; ▲ 1 compaction;" in text
    assert context_plot([], [], None, 40).plain == "(no entries on the path)"
    big = context_plot(list(range(200_000)), [100_000], None, 80, height=6).plain
    assert big.split("\n")[-2].count("▲") == 1 and "200,000 entries" in big


def test_curve_brings_back_a_system_message_a_later_edit_stops_omitting() -> None:
    """An omit edit written before its system-message target, then a replace edit of the same target (the last
    edit wins: a system message is not replaceable, so it is sent again): the head comes back, as in Pi."""
    system = {**entry("message", "s1", "e1", 3), "message": {"role": "system", "content": "x" * 36, "timestamp": 1}}
    tree = tree_of(
        [
            user("u1", None, "hi", 1),
            entry("context_edit", "e1", "u1", 2, targetId="s1", replacement=None),
            system,
            entry("context_edit", "e2", "s1", 4, targetId="s1", replacement={"content": "y"}),
        ]
    )
    curve = context_curve(tree, tree.get("e2"))
    assert [p.tokens for p in curve] == [build_context(tree, p.node).size.tokens for p in curve]
    assert curve[-2].tokens < curve[-1].tokens == curve[0].tokens + 9


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PI1_KINDS), st.integers(0, 30)), max_size=25), st.data())
def test_context_header_equals_build_context(steps: list[tuple[str, int]], data: st.DataObject) -> None:
    """What an export's header says of the context (message count, model, thinking level, size) without
    keeping the messages: equal to `build_context`'s at every entry of random Pi 1.x paths."""
    from pitree.session.context_size import context_header

    tree = tree_of(random_pi1_path(steps, data))
    for node in tree.iter_tree():
        ctx = build_context(tree, node)
        header = context_header(tree, node, tree.branch(node))
        assert (header.messages, header.model, header.thinking_level, header.size) == (
            len(ctx.messages),
            ctx.model,
            ctx.thinking_level,
            ctx.size,
        ), node.id
