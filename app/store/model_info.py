"""Context windows of the models Pi knows, from `assets/context_windows.json` (Pi's model registry).

The table is generated from npm `@mariozechner/pi-ai` by `node bench/context_windows.mjs`. A model is
looked up by provider and id, then by id alone under any provider (a session may name a provider
the table spells differently); unknown models have no window and the views say so.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import orjson


@cache
def _table() -> dict[str, dict[str, int]]:
    raw: dict[str, Any] = orjson.loads((resources.files("pitree.assets") / "context_windows.json").read_bytes())
    return {k: v for k, v in raw.items() if isinstance(v, dict)}


def context_window(provider: Any, model_id: Any) -> int | None:
    """The model's context window in tokens, or None when Pi's registry does not list it."""
    if not isinstance(model_id, str) or not model_id:
        return None
    table = _table()
    if isinstance(provider, str) and model_id in table.get(provider, {}):
        return table[provider][model_id]
    for models in table.values():
        if model_id in models:
            return models[model_id]
    return None
