"""A fix for Textual (pinned at 8.2.8 in pyproject.toml), applied when the explorer is imported.

`StylesCache.get_inner_outer` is an `lru_cache(1024)` on an instance method, so its keys hold the widget's
`StylesCache` with every line it last rendered (Textual issue #6665, open). The entry pane builds new widgets
for each entry shown, so each entry viewed kept its rendered lines alive and memory grew with every keypress,
without a plateau. The colours are all the result depends on, so the cache here is keyed by them alone.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from textual._styles_cache import StylesCache

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
