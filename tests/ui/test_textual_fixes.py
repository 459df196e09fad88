"""The Textual fix applied by the explorer: widgets that were removed are freed (Textual issue #6665)."""

from __future__ import annotations

import gc
import weakref

import pitree.widgets.app  # noqa: F401  (applies the fix, as running the explorer does)
import pytest
from pitree.widgets import textual_fixes
from textual._styles_cache import StylesCache
from textual.app import App, ComposeResult
from textual.containers import Vertical
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
