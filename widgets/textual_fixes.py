"""Two fixes for Textual (pinned at 8.2.8 in pyproject.toml), applied when the explorer is imported.

`apply`: `StylesCache.get_inner_outer` is an `lru_cache(1024)` on an instance method, so its keys hold the
widget's `StylesCache` with every line it last rendered (Textual issue #6665, open). The entry pane builds new
widgets for each entry shown, so each entry viewed kept its rendered lines alive and memory grew with every
keypress, without a plateau. The colours are all the result depends on, so the cache here is keyed by them alone.

`apply_strips`: `Strip.divide` at a single cut (the strip's own length: a widget's line put on screen whole) and
`Strip.crop_extend` to the strip's own span return the strip itself and keep that answer in the strip's own
cache: the strip then refers to itself, so it is freed only by a full garbage collection. Nearly every line drawn
became such garbage (~370 caches a key in the explorer), and the full collections that freed it took 40-90 ms
every ten keys or so. Those two answers are no longer kept; every other one still is.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from textual._styles_cache import StylesCache
from textual.strip import Strip

replaced: Any = None  # Textual's own method, once `apply` replaced it (for the test that shows the leak)


def apply() -> bool:
    """Key the colour cache by colours only; True if this Textual has the leaking cache (and now does not)."""
    global replaced
    current = StylesCache.__dict__.get("get_inner_outer")
    original = getattr(current, "__wrapped__", None)
    if original is None or not hasattr(current, "cache_info"):
        return False  # already fixed here, or a Textual without the instance cache
    compute = original

    @lru_cache(1024)
    def by_colours(base_background: Any, background: Any) -> Any:
        return compute(None, base_background, background)  # the method never reads its first argument

    def get_inner_outer(self: StylesCache, base_background: Any, background: Any) -> Any:
        return by_colours(base_background, background)

    StylesCache.get_inner_outer = get_inner_outer  # type: ignore[method-assign,assignment]
    replaced = current
    return True


strip_originals: dict[str, Any] = {}  # Textual's own Strip methods, once `apply_strips` replaced them


def apply_strips() -> bool:
    """Strips that do not keep themselves in their caches (see the module docstring); True if applied now."""
    if strip_originals:
        return False
    divide, crop_extend = Strip.divide, Strip.crop_extend

    def divide_once(self: Strip, cuts: Any) -> Any:
        cuts = list(cuts)
        cell_length = self.cell_length
        if [cut for cut in cuts if cut <= cell_length] == [cell_length]:
            return [self]  # what Textual answers, not cached
        return divide(self, cuts)

    def crop_extend_once(self: Strip, start: int, end: int, style: Any) -> Strip:
        if start <= 0 and end == self.cell_length:
            return self  # extend_cell_length and crop both answer the strip itself here; not cached
        return crop_extend(self, start, end, style)

    strip_originals.update(divide=divide, crop_extend=crop_extend)
    Strip.divide = divide_once  # type: ignore[method-assign]
    Strip.crop_extend = crop_extend_once  # type: ignore[method-assign]
    return True
