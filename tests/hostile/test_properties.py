"""Property-based tests (hypothesis) over the parser, the tree, context, layout and the summarizer.

Invariants: nothing raises; every line is the header, an entry or a reported skip (counted, one each);
each entry's offset/length points at a line that still parses; feeding the lines in pieces (as the tailer
does) builds the same tree as one read; every entry is reachable exactly once in the tree and in the 'all'
layout; the active path ends at the leaf; no raw control character survives into shown text.
"""

from __future__ import annotations

import os
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pitree.ops.jump import plan_jump
from pitree.session.context import build_context
from pitree.session.entries import HIDDEN_TOOL_ONLY
from pitree.session.layout import FILTERS, build_layout, tokens_of, visible_indices
from pitree.session.load import SessionBuilder, load_bytes
from pitree.session.parse import parse_line
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.summary.prepare import build_prompt_text, collect_for_summary, prepare_branch_entries
from pitree.summary.run import SummaryJob, extractive_summary

from tests.hostile.helpers import HOSTILE, unsafe_chars

SETTINGS = settings(
    max_examples=int(os.environ.get("PITREE_HYPOTHESIS_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # The same examples on every run (a suite must not fail once and pass the next time); set
    # PITREE_HYPOTHESIS_EXPLORE=1 (and PITREE_HYPOTHESIS_EXAMPLES=1000) to hunt with fresh ones.
    derandomize=os.environ.get("PITREE_HYPOTHESIS_EXPLORE") is None,
)

# ---- strategies --------------------------------------------------------------------------------------------

POOL = [f"{i:08x}" for i in range(10)]  # a small pool of ids, so duplicates and cycles are common
TEXT = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=24),
    st.sampled_from([HOSTILE, "", " ", "\n\t", "[bold]x[/bold]", "read src/a.py", "\x1b]52;c;aGk=\x07"]),
)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the right type, sometimes any JSON value."""
    return st.one_of(strategy, strategy, strategy, JSON)


STAMP = st.integers(0, 50).map(lambda i: f"2026-01-01T00:00:{i:02d}.000Z")
BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": maybe(TEXT)}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": maybe(TEXT)}),
    st.fixed_dictionaries(
        {
            "type": st.just("toolCall"),
            "id": maybe(st.sampled_from(["c1", "c2", "c3"])),
            "name": maybe(st.sampled_from(["read", "write", "edit", "bash", "grep", "find", "ls", "x\x1b[1m"])),
            "arguments": maybe(
                st.fixed_dictionaries(
                    {},
                    optional={"path": maybe(TEXT), "command": maybe(TEXT), "offset": JSON, "limit": JSON},
                )
            ),
        }
    ),
    st.fixed_dictionaries({"type": st.just("image"), "data": maybe(TEXT), "mimeType": maybe(TEXT)}),
    JSON,
)
CONTENT = st.one_of(TEXT, st.lists(BLOCK, max_size=4), JSON)

MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": st.just("user"), "content": CONTENT}),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": maybe(st.lists(BLOCK, max_size=4)),
            "provider": maybe(TEXT),
            "model": maybe(TEXT),
            "stopReason": maybe(st.sampled_from(["stop", "length", "toolUse", "error", "aborted"])),
        },
        optional={"errorMessage": maybe(TEXT), "usage": JSON},
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("toolResult"),
            "toolCallId": maybe(st.sampled_from(["c1", "c2", "c3"])),
            "toolName": maybe(TEXT),
            "content": CONTENT,
            "isError": JSON,
        }
    ),
    st.fixed_dictionaries(
        {"role": st.just("bashExecution"), "command": maybe(TEXT), "output": maybe(TEXT), "exitCode": JSON}
    ),
    st.fixed_dictionaries({"role": st.sampled_from(["custom", "hookMessage", "weird"]), "content": CONTENT}),
    JSON,
)

PARENT = st.one_of(st.none(), st.sampled_from(POOL), st.just("SELF"), st.just("gone0000"), JSON)
BODY = st.one_of(
    st.fixed_dictionaries({"type": st.just("message"), "message": MESSAGE}),
    st.fixed_dictionaries(
        {
            "type": st.just("compaction"),
            "summary": maybe(TEXT),
            "firstKeptEntryId": maybe(st.sampled_from(POOL)),
            "tokensBefore": maybe(st.integers(0, 10**6)),
        }
    ),
    st.fixed_dictionaries({"type": st.just("branch_summary"), "summary": maybe(TEXT), "fromId": JSON}),
    st.fixed_dictionaries({"type": st.just("custom_message"), "customType": maybe(TEXT), "content": CONTENT}),
    st.fixed_dictionaries({"type": st.just("model_change"), "provider": maybe(TEXT), "modelId": maybe(TEXT)}),
    st.fixed_dictionaries({"type": st.just("thinking_level_change"), "thinkingLevel": maybe(TEXT)}),
    st.fixed_dictionaries({"type": st.just("custom"), "customType": maybe(TEXT), "data": JSON}),
    st.fixed_dictionaries({"type": st.just("label"), "targetId": maybe(st.sampled_from(POOL)), "label": maybe(TEXT)}),
    st.fixed_dictionaries({"type": st.just("session_info"), "name": maybe(TEXT)}),
    st.fixed_dictionaries({"type": maybe(st.sampled_from(["telemetry", "session"]))}),
    # entries only oh-my-pi writes: the rest of the file then reads as its (`dialect_omp`)
    st.fixed_dictionaries({"type": st.sampled_from(["title_change", "service_tier_change"]), "title": maybe(TEXT)}),
)


@st.composite
def entry(draw: st.DrawFn) -> dict[str, Any]:
    body = dict(draw(BODY))
    eid = draw(st.one_of(st.sampled_from(POOL), st.sampled_from(POOL), JSON))
    parent = draw(PARENT)
    body["id"] = eid
    body["parentId"] = eid if parent == "SELF" else parent
    body["timestamp"] = draw(st.one_of(STAMP, STAMP, JSON))
    return body


HEADER = st.fixed_dictionaries(
    {
        "type": st.just("session"),
        "version": st.one_of(st.just(3), st.just(3), st.sampled_from([1, 2, "3", None])),
        "id": maybe(st.just("11111111-2222-3333-4444-555555555555")),
        "timestamp": STAMP,
        "cwd": maybe(TEXT),
    }
)

# A line as it may appear in a file Pi crashed on or someone edited by hand.
GARBAGE = st.sampled_from(
    [
        b"",
        b"   ",
        b"not json {",
        b"[1,2]",
        b'"a string"',
        b"42",
        b"null",
        b'{"type":"message","id":"x',
        b'{"a":"\xff\xfe"}',
        b'{"a":"\x00"}',
        b"\x00\x00\x00",
        b'{"a":"\\ud800"}',
        b"\xef\xbb\xbf{}",
        b"{}\r",
        b"{}}",
    ]
)


@st.composite
def session_bytes(draw: st.DrawFn, garbage: bool = True) -> bytes:
    """A header (usually), entries with random parent links, and (optionally) garbage lines, any endings."""
    out: list[bytes] = []
    if draw(st.integers(0, 9)):
        out.append(orjson.dumps(draw(HEADER)))
    for e in draw(st.lists(entry(), max_size=25)):
        out.append(orjson.dumps(e))
        if garbage and draw(st.integers(0, 5)) == 0:
            out.append(draw(GARBAGE))
    ending = draw(st.sampled_from([b"\n", b"\n", b"\r\n"]))
    data = ending.join(out) + (ending if out and draw(st.booleans()) else b"")
    if garbage and draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


# ---- invariants --------------------------------------------------------------------------------------------


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def check_accounting(tree: SessionTree, data: bytes) -> None:
    """Every line is the header, an entry or a skip, exactly once; every entry's bytes still parse."""
    total = line_count(data)
    taken = [n.line for n in tree.nodes] + [s.line for s in tree.skipped]
    assert len(taken) == len(set(taken)), "a line was counted twice"
    header = 1 if tree.header is not None else 0
    assert len(taken) + header == total
    assert set(taken) <= set(range(1, total + 1))
    for node in tree.nodes:
        raw = data[node.offset : node.offset + node.length]
        obj, why = parse_line(raw)
        assert obj is not None, (node, why, raw[:80])


def check_structure(tree: SessionTree) -> list[Any]:
    """The tree is a forest: every kept entry exactly once, parents and children agree, children in order."""
    kept = [n for n in tree.nodes if not tree.is_dropped(n)]
    seen = list(tree.iter_tree())
    assert len(seen) == len({id(n) for n in seen}), "an entry is reachable twice (a cycle or a shared child)"
    assert {id(n) for n in seen} == {id(n) for n in kept}, "an entry is unreachable"
    for root in tree.roots:
        assert root.parent is None
    for node in seen:
        for child in node.children:
            assert child.parent is node
        keys = [(c.ts if c.ts == c.ts else float("inf"), c.idx) for c in node.children]
        assert keys == sorted(keys)
        if node.parent is None:
            assert node in tree.roots
    assert tree.leaf is (kept[-1] if kept else None)
    path = tree.active_path()
    if kept:
        assert path[-1] is tree.leaf and path[0].parent is None
    return seen


def build(data: bytes) -> SessionTree:
    tree = load_bytes(data)
    check_accounting(tree, data)
    return tree


# ---- parser ------------------------------------------------------------------------------------------------


@SETTINGS
@given(st.binary(max_size=400))
def test_random_bytes_never_raise_and_every_line_is_counted(data: bytes) -> None:
    tree = build(data)
    check_structure(tree)


@SETTINGS
@given(st.lists(st.one_of(GARBAGE, st.binary(max_size=40)), max_size=20), st.sampled_from([b"\n", b"\r\n"]))
def test_random_line_mixes(lines: list[bytes], ending: bytes) -> None:
    data = ending.join(lines)
    build(data)


@SETTINGS
@given(session_bytes(), st.data())
def test_feeding_in_pieces_builds_the_same_tree(data: bytes, draw: st.DataObject) -> None:
    whole = build(data)
    # The tailer hands over complete lines in arbitrary batches; a torn tail arrives with the final read.
    cuts = sorted(draw.draw(st.sets(st.sampled_from([i + 1 for i, b in enumerate(data) if b == 0x0A] or [0]))))
    builder = SessionBuilder()
    start = 0
    for cut in cuts:
        builder.feed(data[start:cut], final=False)
        start = cut
    builder.feed(data[start:], final=True)
    pieces = builder.tree
    assert [(n.id, n.line, n.offset, n.length) for n in pieces.nodes] == [
        (n.id, n.line, n.offset, n.length) for n in whole.nodes
    ]
    assert [(s.line, s.reason) for s in pieces.skipped] == [(s.line, s.reason) for s in whole.skipped]

    def shape(tree: SessionTree) -> list[tuple[int, int | None]]:
        return [(n.idx, n.parent.idx if n.parent is not None else None) for n in tree.iter_tree()]

    assert shape(pieces) == shape(whole)
    assert pieces.labels == whole.labels and pieces.name == whole.name


# ---- tree, context, layout ---------------------------------------------------------------------------------


@SETTINGS
@given(session_bytes())
def test_tree_from_random_parent_links(data: bytes) -> None:
    tree = build(data)
    check_structure(tree)
    assert tree.leaf_count() == len(tree.leaves())  # the status bar's count, by its shortcut
    for node in tree.nodes:
        tree.depth(node)
        tree.search_text(node)
        assert not unsafe_chars(make_safe(tree.row_text(node), keep_newlines=False))


@SETTINGS
@given(session_bytes(), st.data())
def test_context_at_random_leaves(data: bytes, draw: st.DataObject) -> None:
    tree = build(data)
    nodes = list(tree.iter_tree())
    leaf = draw.draw(st.sampled_from(nodes)) if nodes else None
    ctx = build_context(tree, leaf)
    if leaf is None:
        assert ctx.path == tree.active_path()
        return
    assert ctx.path[-1] is leaf and ctx.path[0].parent is None
    on_path = {id(n) for n in ctx.path}
    assert all(id(m.node) in on_path for m in ctx.messages)
    assert ctx.tokens >= 0
    if ctx.compaction is not None:
        assert ctx.messages[0].role == "compactionSummary" and ctx.messages[0].node is ctx.compaction


@SETTINGS
@given(session_bytes(), st.sampled_from(FILTERS), st.data())
def test_layout_under_every_filter_and_search(data: bytes, mode: str, draw: st.DataObject) -> None:
    tree = build(data)
    seen = check_structure(tree)
    words = sorted({w for n in seen for w in tree.search_text(n).split()})
    query = " ".join(draw.draw(st.lists(st.sampled_from(words), max_size=2))) if words else ""
    query = draw.draw(st.sampled_from([query, query.upper(), "", "zz-no-match"]))
    layout = build_layout(tree, mode, query)
    rows = layout.rows
    assert len(rows) == len({id(r.node) for r in rows}), "an entry shown twice"
    tokens = tokens_of(query)
    for i, row in enumerate(rows):
        assert row.parent_row < i and i < row.end <= len(rows)
        assert all(t in tree.search_text(row.node) for t in tokens)
        layout.prefix(i)
        layout.prefix(i, folded=True)
    leaf = tree.leaf
    if mode == "all" and not query:
        expected = {id(n) for n in seen if not (n.flags & HIDDEN_TOOL_ONLY) or n is leaf}
        assert {id(r.node) for r in rows} == expected, "under 'all' every entry is on exactly one row"
    folded = {r.node.id for r in rows[::3]}
    shown = visible_indices(layout, folded)
    assert list(shown) == sorted(set(shown))
    from pitree.cli.textout import tree_lines

    lines = list(tree_lines(tree, layout))
    assert len(lines) == len(rows)
    for text in lines:
        assert not unsafe_chars(text.plain), text.plain


@SETTINGS
@given(session_bytes(), st.sampled_from(FILTERS), st.integers(4, 120), st.booleans())
def test_text_tree_equals_rich_printing_each_line(data: bytes, mode: str, width: int, colour: bool) -> None:
    """`print_tree` (batches of lines; without colours, plain strings cut and written directly; guides that fill the
    line never measured) prints what Rich printed for each whole line, at any width, in colour or not."""
    import io

    from pitree.cli import textout
    from rich.console import Console

    tree = build(data)
    layout = build_layout(tree, mode)
    colours: dict[str, Any] = {"force_terminal": True, "color_system": "standard"} if colour else {}
    fast, slow = io.StringIO(), io.StringIO()
    textout.print_tree(Console(file=fast, width=width, **colours), tree, layout)

    def each_whole(console: Console, lines: Any) -> None:
        for line in lines:
            console.print(line, no_wrap=True, overflow="ellipsis", crop=True)

    whole = textout.tree_lines
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(textout, "print_lines", each_whole)
        mp.setattr(textout, "tree_lines", lambda t, lay, room=None: whole(t, lay))
        mp.setattr(textout, "is_plain", lambda _console: False)  # Rich prints every line
        textout.print_tree(Console(file=slow, width=width, **colours), tree, layout)
    assert fast.getvalue() == slow.getvalue()


# ---- summarizer --------------------------------------------------------------------------------------------


@SETTINGS
@given(session_bytes(garbage=False), st.data(), st.integers(0, 400))
def test_summary_between_random_leaf_pairs(data: bytes, draw: st.DataObject, budget: int) -> None:
    tree = build(data)
    nodes = list(tree.iter_tree())
    assume(len(nodes) >= 1)
    old_leaf = draw.draw(st.sampled_from(nodes))
    target = draw.draw(st.sampled_from(nodes))
    out, ancestor = collect_for_summary(tree, old_leaf, target)
    if out:
        assert out[-1] is old_leaf
    if ancestor is not None:
        assert ancestor in tree.branch(old_leaf) and ancestor in tree.branch(target)
        assert ancestor not in out
    assert all(n in tree.branch(old_leaf) for n in out)
    assert tree.branch(target)[0] is tree.branch(old_leaf)[0] or ancestor is None
    plan = plan_jump(tree, target)
    assert isinstance(plan.noop, bool)
    entries = [orjson.loads(data[n.offset : n.offset + n.length].decode("utf-8", "replace")) for n in out]
    prepared = prepare_branch_entries(entries, budget)
    assert prepared.entry_count == len(entries)
    if budget:
        assert prepared.total_tokens <= budget or len(prepared.messages) >= 1
    text = build_prompt_text(prepared, draw.draw(st.one_of(st.none(), TEXT)))
    assert text.startswith("<conversation>\n")
    summary, read, modified = extractive_summary(SummaryJob(entries, prepared))
    assert isinstance(summary, str) and summary
    assert not set(read) & set(modified)
    assert read == sorted(read) and modified == sorted(modified)


@pytest.mark.parametrize("keep_newlines", [True, False])
@SETTINGS
@given(st.text(st.characters(codec="utf-8"), max_size=60) | st.just(HOSTILE))
def test_make_safe_leaves_nothing_a_terminal_acts_on(keep_newlines: bool, text: str) -> None:
    shown = make_safe(text, keep_newlines=keep_newlines)
    assert not unsafe_chars(shown, allow="\n\t" if keep_newlines else "")


@SETTINGS
@given(session_bytes())
def test_info_counts_equal_counting_each_entry(data: bytes) -> None:
    """`info_report` counts by kind of entry (their shared tags) and takes the timestamps from the columns: the
    figures of reading every entry's type, role, flags and timestamp one by one."""
    from collections import Counter

    from pitree.cli.report import info_report
    from pitree.session.entries import IS_ERROR

    tree = build(data)
    nodes = tree.nodes
    stamps = [n.ts for n in nodes if n.ts == n.ts]
    report = info_report(tree)
    assert report["types"] == dict(sorted(Counter(n.type for n in nodes).items()))
    assert report["roles"] == dict(sorted(Counter(n.role or "unknown" for n in nodes if n.type == "message").items()))
    assert report["errors"] == sum(1 for n in nodes if n.flags & IS_ERROR)
    assert report["errorKinds"] == dict(sorted(Counter(n.role or n.type for n in nodes if n.flags & IS_ERROR).items()))
    assert report["firstTimestamp"] == (min(stamps) if stamps else None)
    assert report["lastTimestamp"] == (max(stamps) if stamps else None)
