"""The Textual fixes applied by the explorer: widgets that were removed are freed (Textual issue #6665), and
strips do not keep themselves in their own caches (so a dropped line is freed at once, not by a full collection)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pitree.widgets.app  # noqa: F401  (applies the fix, as running the explorer does)
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pitree.widgets import textual_fixes
from rich.segment import Segment
from textual._styles_cache import StylesCache
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.strip import Strip
from textual.widgets import Static


class Cards(App[None]):
    def compose(self) -> ComposeResult:
        yield Vertical(id="list")


async def removed_but_alive(rounds: int = 5) -> int:
    """Mount 20 widgets, remove them, `rounds` times; how many of the removed ones' render caches live on
    (the last round's are left out: Textual lets go of those at its next refresh)."""
    app = Cards()
    gone: list[weakref.ref[StylesCache]] = []
    async with app.run_test(size=(80, 30)) as pilot:
        box = app.query_one("#list")
        for round_ in range(rounds):
            cards = [Static(f"card {round_}.{i}") for i in range(20)]
            await box.mount(*cards)
            await pilot.pause()
            if round_ < rounds - 1:
                gone += [weakref.ref(card._styles_cache) for card in cards]
            await box.remove_children()
            del cards
            await pilot.pause()
        gc.collect()
        return sum(ref() is not None for ref in gone)


async def test_removed_widgets_are_freed() -> None:
    assert textual_fixes.apply() is False  # applied once, on import; a second call changes nothing
    assert await removed_but_alive() == 0


async def test_without_the_fix_they_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: Textual's own method (an lru_cache keyed by the instance too) keeps them."""
    assert textual_fixes.replaced is not None and hasattr(textual_fixes.replaced, "cache_info")
    monkeypatch.setattr(StylesCache, "get_inner_outer", textual_fixes.replaced)
    assert await removed_but_alive() == 80


class _Watched(Strip):
    __slots__ = ("__weakref__",)  # Textual's Strip takes no weak references


def _freed_without_a_collection(make_garbage: Any) -> bool:
    """Whether a strip used by `make_garbage` is freed as soon as it is dropped (no cycle through itself)."""
    gc.disable()
    try:
        strip = _Watched([Segment("hello "), Segment("world")])
        ref = weakref.ref(strip)
        make_garbage(strip)
        del strip
        return ref() is None
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("use", "cycle_in_textual"),
    [
        (lambda s: s.divide([s.cell_length]), True),  # a widget's line put on screen whole
        (lambda s: s.divide([s.cell_length, s.cell_length + 5]), True),  # cuts past the end are dropped first
        (lambda s: s.crop_extend(0, s.cell_length, None), True),
        (lambda s: (s.divide([3, s.cell_length]), s.crop_extend(2, 20, None), s.crop_extend(0, 4, None)), False),
    ],
)
def test_strips_do_not_keep_themselves(use: Any, cycle_in_textual: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    assert textual_fixes.apply_strips() is False  # applied on import
    assert _freed_without_a_collection(use)
    monkeypatch.setattr(Strip, "divide", textual_fixes.strip_originals["divide"])
    monkeypatch.setattr(Strip, "crop_extend", textual_fixes.strip_originals["crop_extend"])
    assert _freed_without_a_collection(use) is not cycle_in_textual  # Textual's own: freed by a full collection


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab 日", min_size=1, max_size=5), min_size=1, max_size=4),
    cuts=st.lists(st.integers(0, 25), max_size=4),
    start=st.integers(-2, 25),
    end=st.integers(0, 25),
)
def test_strips_answer_as_textual_does(texts: list[str], cuts: list[int], start: int, end: int) -> None:
    strip = Strip([Segment(t) for t in texts])
    divide, crop_extend = textual_fixes.strip_originals["divide"], textual_fixes.strip_originals["crop_extend"]
    for whole in (sorted(set(cuts)), [*sorted(set(cuts)), strip.cell_length], [strip.cell_length]):
        ours = [s.text for s in strip.divide(whole)]
        assert ours == [s.text for s in divide(Strip(strip), whole)]
    assert strip.crop_extend(start, end, None).text == crop_extend(Strip(strip), start, end, None).text
    assert strip.crop_extend(0, strip.cell_length, None) is strip
