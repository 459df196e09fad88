"""A row's guides cut to the screen (`cut_guides`) are the whole guides cut (`cut_prefix`), for any depth, cut and room;
and `Layout.prefix` of some levels is that part of the whole."""

from __future__ import annotations

import pytest
from pitree.session.layout import build_layout
from pitree.session.load import load_bytes
from pitree.widgets.tree_base import LEVEL, cut_guides, cut_prefix

from tests.sessions import to_bytes, user
from tests.unit.test_gen_session import gen


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A generated session with many branches (guides tens of levels deep) and a hand-made one 300 levels deep."""
    path = tmp_path_factory.mktemp("deep") / "s.jsonl"
    gen.generate(path, 4000, seed=7, branches=60)
    generated = load_bytes(path.read_bytes())
    entries = [user("r", None, t=1)]
    for i in range(300):  # each entry forks: a side child and the next, so every level has a connector
        parent = entries[-1]["id"] if i == 0 else f"n{i - 1}"
        entries += [user(f"s{i}", parent, t=10 * i + 2), user(f"n{i}", parent, t=10 * i + 3)]
    hand = load_bytes(to_bytes(entries))
    return [build_layout(generated, "default"), build_layout(generated, "all"), build_layout(hand, "all")]


def test_some_levels_are_that_part_of_the_whole(deep) -> None:  # type: ignore[no-untyped-def]
    for layout in deep:
        for i in range(0, len(layout.rows), max(1, len(layout.rows) // 300)):
            whole = layout.prefix(i)
            levels = layout.prefix_levels(i)
            assert len(whole) == levels * LEVEL
            for start, stop in ((0, levels), (1, 3), (levels // 2, levels // 2 + 5), (levels - 1, levels + 4)):
                assert layout.prefix(i, False, start, stop) == whole[start * LEVEL : stop * LEVEL]


@pytest.mark.parametrize("folded", [False, True])
def test_cut_guides_equal_the_whole_guides_cut(deep, folded: bool) -> None:  # type: ignore[no-untyped-def]
    deepest = max(layout.prefix_levels(i) for layout in deep for i in range(len(layout.rows)))
    assert deepest > 250, "some rows are far deeper than a screen is wide"
    for layout in deep:
        for i in range(0, len(layout.rows), max(1, len(layout.rows) // 200)):
            whole = layout.prefix(i, folded)
            for room in (None, 5, 12, 13, 40, 53):
                for shift in (0, 3, 4, 30, 300, len(whole) - 6, len(whole), len(whole) + 9):
                    got = cut_guides(layout, i, folded, max(0, shift), room)
                    assert got == cut_prefix(whole, max(0, shift), room), (i, room, shift)


def test_a_deep_row_shifted_to_its_end_makes_only_the_levels_shown(deep, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The view shifts a deep cursor row's guides so that their end shows: what is drawn is about `room` columns
    whatever the depth, and so is what is made (not the thousands of columns left of the cut)."""
    layout = deep[2]
    i = max(range(len(layout.rows)), key=layout.prefix_levels)
    width = layout.prefix_levels(i) * LEVEL
    made: list[int] = []
    whole = layout.prefix(i)
    original = type(layout).prefix

    def prefix(self, row, folded=False, start=0, stop=None):  # type: ignore[no-untyped-def]
        out = original(self, row, folded, start, stop)
        made.append(len(out))
        return out

    monkeypatch.setattr(type(layout), "prefix", prefix)
    room = 53
    for shift in (width - room // 2, width - room + 4, width - 9, width // 2):
        made.clear()
        assert cut_guides(layout, i, False, shift, room) == cut_prefix(whole, shift, room)
        assert sum(made) <= room + 2 * LEVEL, (shift, made)
