"""One walk over a message's `content`: a string, or a list of blocks.

Block types: `text`, `thinking`, `toolCall`, `image`, and Pi 1.x / oh-my-pi's `redactedThinking`,
`anthropicServerTool`, `fallback` (../shared/SPEC-pi1.md). A file can hold any JSON, so a list may also hold
things that are not objects, and content may be neither a string nor a list; nothing here raises on those.

Readers differ, on purpose, in how they read a block's fields (Pi's estimate counts `as_str` of a text, its
editor only string texts), so the walkers hand out blocks and leave the reading to the caller.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pitree.session.text import as_str


def blocks(content: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(type, block) for each object in a content list, in order; nothing for a string or any other value."""
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                yield block.get("type"), block


def each_block(content: Any) -> Iterator[tuple[Any, Any]]:
    """(type, item) for every item of a content list, objects or not (type None for an item that is not an
    object): for views that show what they cannot read."""
    if isinstance(content, list):
        for block in content:
            yield (block.get("type") if isinstance(block, dict) else None), block


def tool_calls(content: Any) -> Iterator[dict[str, Any]]:
    """The `toolCall` blocks of a content list, in order."""
    for btype, block in blocks(content):
        if btype == "toolCall":
            yield block


def text_of(content: Any, joiner: str = "\n", only_strings: bool = False) -> str:
    """pi-ai's `contentText`: a string as it is, or the text blocks joined (anything else reads as "").
    `only_strings`: a text block whose `text` is not a string is left out rather than read with `as_str`."""
    if isinstance(content, str):
        return content
    if only_strings:
        return joiner.join(b["text"] for t, b in blocks(content) if t == "text" and isinstance(b.get("text"), str))
    return joiner.join(as_str(b.get("text")) for t, b in blocks(content) if t == "text")
