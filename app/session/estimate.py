"""Pi 1.6's token estimate (`estimateTokens`, compaction.js: characters / 4, rounded up) and the compact facts
of a system message that the collapsed system head needs (pi-ai `getCurrentSystemMessage`).

Pure: plain JSON values in, ints out; nothing here raises on wrong types (Pi would throw on some of them, a
file is still shown). JavaScript lengths are UTF-16 code units (`js_len`).
"""

from __future__ import annotations

import sys
from typing import Any

from pitree.session.content import blocks, text_of
from pitree.session.text import as_str, json_compact

IMAGE_CHARS = 4800  # Pi counts an image as 4,800 characters (1,200 tokens)


def js_len(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript's `.length` counts (Pi's estimate uses it).

    Only characters beyond U+FFFF count twice. CPython stores a string with any such character 4 bytes
    per character, which its size shows in O(1); only those strings are re-encoded to count exactly.
    """
    n = len(text)
    if text.isascii() or sys.getsizeof(text) < 4 * n + 56:
        return n
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def ceil4(chars: int) -> int:
    return -(-chars // 4)


def text_image_chars(content: Any) -> int:
    """Pi's estimateTextAndImageContentChars: a string's length, or the text blocks plus 4,800 per image."""
    if isinstance(content, str):
        return js_len(content)
    if not isinstance(content, list):
        return 0
    chars = 0
    for block in content:  # `blocks`, inlined: every tool result's load runs this
        if isinstance(block, dict):
            btype = block.get("type")
            if btype == "text":
                text = block.get("text")
                if isinstance(text, str):
                    chars += len(text) if text.isascii() else js_len(text)
            elif btype == "image":
                chars += IMAGE_CHARS
    return chars


def assistant_chars(content: Any) -> int:
    """An assistant's text + thinking + (name + JSON arguments) per tool call; images are not counted."""
    if isinstance(content, str):  # a context edit's string replacement becomes one text block
        return js_len(content)
    chars = 0
    for btype, block in blocks(content):
        if btype == "text":
            chars += js_len(as_str(block.get("text")))
        elif btype == "thinking":
            chars += js_len(as_str(block.get("thinking")))
        elif btype == "toolCall":
            chars += js_len(as_str(block.get("name"))) + js_len(json_compact(block.get("arguments")))
    return chars


def _sections(message: dict[str, Any]) -> dict[str, Any]:
    sections = message.get("sections")
    return sections if isinstance(sections, dict) else {}


def _tools(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def system_chars(message: dict[str, Any]) -> int:
    """A system message: content (text and images) + every non-empty section + `JSON.stringify(toolsAdded)`."""
    chars = text_image_chars(message.get("content"))
    for value in _sections(message).values():
        if isinstance(value, str):
            chars += js_len(value)
    tools = message.get("toolsAdded")
    if tools or isinstance(tools, list | dict):  # JavaScript's truth: an empty list still adds "[]"
        chars += js_len(json_compact(tools))
    return chars


def estimate_message_tokens(role: Any, msg: dict[str, Any]) -> int:
    """Pi 1.6's `estimateTokens(message)`: characters / 4, rounded up, per role (0 for unknown roles)."""
    if role == "system":
        return ceil4(system_chars(msg))
    if role in ("user", "custom", "toolResult"):
        chars = text_image_chars(msg.get("content"))
    elif role == "assistant":
        chars = assistant_chars(msg.get("content"))
    elif role == "bashExecution":
        chars = js_len(as_str(msg.get("command"))) + js_len(as_str(msg.get("output")))
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_len(as_str(msg.get("summary")))
    else:
        return 0
    return ceil4(chars)


# ---- the collapsed system head, from compact facts ------------------------------------------------------------

# A system message as the head needs it: (length of its contentText, {section: length or None}, ((tool name,
# length of JSON.stringify(tool)), ...) added, (names,) removed, has a timestamp). Marshal-able (tree cache).
SystemFacts = tuple[int, dict[str, Any], tuple[tuple[Any, int], ...], tuple[Any, ...], bool]


def _key(name: Any) -> Any:
    """A Map key of JavaScript as a dict key: strings as they are, anything else by its JSON."""
    return name if isinstance(name, str) else "\0" + json_compact(name)


def system_facts(message: dict[str, Any]) -> SystemFacts:
    sections = {
        str(name): (None if value is None else js_len(value) if isinstance(value, str) else 0)
        for name, value in _sections(message).items()
    }
    added = tuple(
        (_key(t.get("name") if isinstance(t, dict) else None), js_len(json_compact(t)))
        for t in _tools(message.get("toolsAdded"))
    )
    removed = tuple(_key(t.get("name") if isinstance(t, dict) else None) for t in _tools(message.get("toolsRemoved")))
    stamp = message.get("timestamp")
    return (js_len(text_of(message.get("content"))), sections, added, removed, stamp is not None)


class SystemHead:
    """pi-ai's getCurrentSystemMessage replayed over `SystemFacts` in order, for its estimate: contents
    appended (joined by a blank line), sections set or deleted by name, tools removed then added by name."""

    __slots__ = ("contents", "content_chars", "sections", "tools", "stamped", "sources")

    def __init__(self) -> None:
        self.contents = 0  # non-empty contents so far
        self.content_chars = 0
        self.sections: dict[str, int] = {}
        self.tools: dict[Any, int] = {}
        self.stamped = False
        self.sources: list[Any] = []  # what was added, in order (the caller's objects)

    def add(self, facts: SystemFacts, source: Any = None) -> None:
        length, sections, added, removed, stamped = facts
        if length > 0:
            self.content_chars += length + (2 if self.contents else 0)
            self.contents += 1
        for name, value in sections.items():
            if value is None:
                self.sections.pop(name, None)
            else:
                self.sections[name] = value
        for name in removed:
            self.tools.pop(name, None)
        for name, value in added:
            self.tools[name] = value
        self.stamped = self.stamped or stamped
        self.sources.append(source)

    @property
    def exists(self) -> bool:
        """getCurrentSystemMessage returns undefined without a timestamp and without tools."""
        return self.stamped or bool(self.tools)

    @property
    def tokens(self) -> int:
        if not self.exists:
            return 0
        chars = self.content_chars + sum(self.sections.values())
        if self.tools:
            chars += 1 + sum(self.tools.values()) + len(self.tools)  # "[" + objects joined by "," + "]"
        return ceil4(chars)
