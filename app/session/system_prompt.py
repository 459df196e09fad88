"""Pi 1.x system messages as full JSON: pi-ai's `getCurrentSystemMessage` (the collapsed head, transcript.js)
and `getSystemMessageText` (text.js), for what pitree shows and counts of the prompt itself. The estimate of
the head, which needs no file access, is `estimate.SystemHead`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pitree.session.content import text_of

_INDEX = re.compile(r"0|[1-9][0-9]*")


def js_entries(obj: dict[str, Any]) -> list[tuple[str, Any]]:
    """`Object.entries` order: array-index keys (up to 2^32 - 2) ascending first, then the rest as inserted."""
    index = [(k, v) for k, v in obj.items() if _INDEX.fullmatch(k) and int(k) < 2**32 - 1]
    if not index:
        return list(obj.items())
    index.sort(key=lambda kv: int(kv[0]))
    return index + [(k, v) for k, v in obj.items() if not (_INDEX.fullmatch(k) and int(k) < 2**32 - 1)]


def _tools(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _name(tool: Any) -> Any:
    name = tool.get("name") if isinstance(tool, dict) else None
    return name if isinstance(name, str) else repr(name)


def current_system_message(messages: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The system messages among `messages` replayed into one: contents appended (blank line between), sections
    set or deleted by name (a re-added one goes last), tools removed then added by name; None when there is
    no system message with a timestamp and no tool."""
    content: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp = None
    for message in messages:
        if message.get("role") != "system":
            continue
        if timestamp is None:
            timestamp = message.get("timestamp")
        text = text_of(message.get("content"))
        if text:
            content.append(text)
        raw = message.get("sections")
        for name, value in js_entries(raw) if isinstance(raw, dict) else []:
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in _tools(message.get("toolsRemoved")):
            tools.pop(_name(tool), None)
        for tool in _tools(message.get("toolsAdded")):
            tools[_name(tool)] = tool
    if timestamp is None and not tools:
        return None
    head: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        head["sections"] = dict(js_entries(sections))
    if tools:
        head["toolsAdded"] = list(tools.values())
    head["timestamp"] = timestamp if timestamp is not None else 0
    return head


def system_message_text(message: dict[str, Any]) -> str:
    """The prompt a system message renders to: its content, then its non-null sections, empty parts skipped,
    joined by a blank line."""
    parts = [text_of(message.get("content"))]
    raw = message.get("sections")
    for _, value in js_entries(raw) if isinstance(raw, dict) else []:
        if value is not None:
            parts.append(value if isinstance(value, str) else "")
    return "\n\n".join(p for p in parts if p)
