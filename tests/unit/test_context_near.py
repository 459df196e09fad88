"""`near_context`: `build_context` from the part of the path Pi's selection reads, with the settings walk
stopping at entries already walked; what the compaction audits use."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pitree.cli import report_context
from pitree.cli.report import compactions_report
from pitree.session.context import SessionContext, Settings, build_context
from pitree.session.context_near import near_context, near_path
from pitree.session.load import load_bytes

from tests.sessions import PI1_KINDS, assistant, entry, random_pi1_path, to_bytes, user

KINDS = [*PI1_KINDS, "thinking"]


def _branched(steps: list[tuple[str, int]], data: st.DataObject) -> list[dict[str, Any]]:
    """Random Pi 1.x paths with thinking level changes, some entries moved under an earlier one (branches)."""
    entries = random_pi1_path([(k if k != "thinking" else "user", n) for k, n in steps], data)
    for i, (kind, size) in enumerate(steps):
        if kind == "thinking":
            entries[i] = entry("thinking_level_change", entries[i]["id"], entries[i]["parentId"], t=i)
            entries[i]["thinkingLevel"] = ("low", "high", None)[size % 3]
        if i > 1 and data.draw(st.integers(0, 4)) == 0:
            entries[i]["parentId"] = f"e{data.draw(st.integers(0, i - 1)):07d}"
    return entries


def _same(near: SessionContext, full: SessionContext) -> None:
    assert near.messages == full.messages
    assert (near.model, near.thinking_level) == (full.model, full.thinking_level)
    assert (near.compaction, near.kept_from, near.dropped_system) == (
        full.compaction,
        full.kept_from,
        full.dropped_system,
    )
    assert [(p.node, p.messages, p.edit) for p in near.entries] == [(p.node, p.messages, p.edit) for p in full.entries]
    assert near.size == full.size and near.tokens == full.tokens
    assert near.path == full.path[len(full.path) - len(near.path) :]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 30)), max_size=30), st.data(), st.randoms())
def test_near_context_equals_build_context(
    steps: list[tuple[str, int]], data: st.DataObject, rnd: random.Random
) -> None:
    """At every entry of random branched Pi 1.x trees, visited in any order with one shared `Settings` (as an
    audit of many compactions shares it), and with none: `build_context`'s context but for the path's start."""
    tree = load_bytes(to_bytes(_branched(steps, data)))
    nodes = list(tree.iter_tree())
    rnd.shuffle(nodes)
    found = Settings()
    for node in nodes:
        full = build_context(tree, node)
        _same(near_context(tree, node, found), full)
        _same(near_context(tree, node), full)


def _chain_with_compactions(n: int) -> list[dict[str, Any]]:
    """A thinking level change at the root, then turns, with a compaction every 100 entries keeping the last 10."""
    out: list[dict[str, Any]] = [entry("thinking_level_change", "e0000000", None, t=0, thinkingLevel="high")]
    for i in range(1, n):
        eid, parent = f"e{i:07d}", f"e{i - 1:07d}"
        if i % 100 == 0:
            out.append(entry("compaction", eid, parent, t=i, summary="s", firstKeptEntryId=f"e{i - 10:07d}"))
        else:
            out.append(user(eid, parent, "u", t=i) if i % 2 else assistant(eid, parent, "a", t=i))
    return out


def test_near_path_stops_at_the_first_kept_entry() -> None:
    tree = load_bytes(to_bytes(_chain_with_compactions(1000)))
    leaf = tree.get("e0000950")
    assert leaf is not None
    assert [n.id for n in near_path(leaf)] == [f"e{i:07d}" for i in range(890, 951)]
    retain_none = tree.get("e0000900")
    assert retain_none is not None and retain_none.meta is not None
    retain_none.meta["firstKeptEntryId"] = retain_none.id  # Pi 1.x's retain-none: nothing above is read
    assert [n.id for n in near_path(leaf)] == [f"e{i:07d}" for i in range(900, 951)]
    assert near_context(tree, leaf).messages == build_context(tree, leaf).messages


def test_settings_walk_stops_at_an_entry_walked_before() -> None:
    """A walk up meets an entry an earlier call ended at and takes what it found there: the thinking level
    comes from the memo, not from the root (changed here behind its back to show where it came from)."""
    tree = load_bytes(to_bytes(_chain_with_compactions(1000)))
    found = Settings()
    first, later = tree.get("e0000500"), tree.get("e0000950")
    assert first is not None and later is not None
    assert near_context(tree, first, found).thinking_level == "high"
    node, (thinking, _level, model, chosen) = found.at[id(first)]
    found.at[id(first)] = (node, (thinking, "from the memo", model, chosen))
    assert near_context(tree, later, found).thinking_level == "from the memo"
    assert near_context(tree, later).thinking_level == "high"


def test_compactions_report_equals_one_built_from_whole_paths(monkeypatch: Any) -> None:
    """The audits of every compaction with the near contexts and the shared settings, against the same audits
    with `build_context` over whole paths."""
    entries = _chain_with_compactions(1000)
    entries.append(entry("compaction", "x1", "e0000555", t=2000, summary="t", firstKeptEntryId="e0000540"))
    entries.append(entry("compaction", "x2", "x1", t=2001, summary="", firstKeptEntryId="e0000990"))  # off path
    tree = load_bytes(to_bytes(entries))
    near = compactions_report(tree, None)
    tree.memo.pop("compaction_split", None)
    monkeypatch.setattr(report_context, "near_context", lambda t, leaf, _found: build_context(t, leaf))
    assert compactions_report(tree, None) == near
    assert len(near["compactions"]) == 11
