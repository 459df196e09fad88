"""`EntryView`: the selected entry in full (right pane), read from its byte offset in a worker.

Markdown for assistant text, collapsible thinking, tool calls and results, images as placeholders,
usage, timestamps and ids; `toggle_raw` shows the stored line pretty-printed.
"""

from __future__ import annotations

from typing import Any

import orjson
from pitree.session.entries import Node
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, SessionFileError
from pitree.summary.tokens import count_text
from pitree.tui.render import MAX_CHARS, entry_parts, header
from rich.console import RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Collapsible, Static
from textual.worker import get_current_worker


class EntryView(VerticalScroll, can_focus=True):
    """Shows one entry. The app calls `show`; the heavy read happens in a thread worker."""

    DEFAULT_CSS = """
    EntryView { padding: 0 1; background: $surface; }
    EntryView > Static { margin-bottom: 1; }
    EntryView > Collapsible { margin-bottom: 1; }
    """

    class Rendered(Message):
        """Posted by the worker with what to show for an entry."""

        def __init__(self, node: Node, parts: list[Any], head: Text) -> None:
            self.node, self.parts, self.head = node, parts, head
            super().__init__()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.node: Node | None = None
        self.stree: SessionTree | None = None
        self.reader: EntryReader | None = None
        self.raw = False

    def show(self, node: Node | None, tree: SessionTree, reader: EntryReader) -> None:
        self.node, self.stree, self.reader = node, tree, reader
        self.remove_children()
        if node is None:
            self.mount(Static(Text("No entry selected.", "dim")))
            return
        self.mount(Static(Text(f"loading line {node.line} …", "dim")))
        self._load(node, tree, reader, self.raw)

    def toggle_raw(self) -> None:
        self.raw = not self.raw
        if self.node is not None and self.stree is not None and self.reader is not None:
            self.show(self.node, self.stree, self.reader)

    @work(thread=True, exclusive=True, group="entry", description="Reading entry", exit_on_error=False)
    def _load(self, node: Node, tree: SessionTree, reader: EntryReader, raw: bool) -> None:
        worker = get_current_worker()
        parts: list[Any]
        tiktoken: int | None = None
        try:
            if raw:
                parts = [self._raw_view(reader.raw(node))]
            else:
                entry = reader.entry(node)
                tool_path = self._tool_path(tree, node)
                parts = entry_parts(entry, tool_path)
                if node.est < MAX_CHARS // 4:
                    tiktoken = count_text(_text_of(entry))
        except SessionFileError as exc:
            parts = [Text(make_safe(str(exc)), "bold red")]
        if worker.is_cancelled:
            return
        self.post_message(self.Rendered(node, parts, header(node, tree, tiktoken)))

    @staticmethod
    def _tool_path(tree: SessionTree, node: Node) -> str | None:
        if node.role != "toolResult":
            return None
        call = tree.calls.get((node.meta or {}).get("toolCallId"))  # type: ignore[arg-type]
        if call and call.startswith("[read: "):
            return call[len("[read: ") : -1].split(":")[0]
        return None

    @staticmethod
    def _raw_view(raw: bytes) -> RenderableType:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            text = raw[:MAX_CHARS].decode("utf-8", "replace")
            return Text(f"this line does not parse: {exc}\n\n", "bold red") + Text(make_safe(text))
        pretty = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        note = ""
        if len(pretty) > MAX_CHARS:
            note = f"\n… {len(pretty) - MAX_CHARS:,} more characters"
            pretty = pretty[:MAX_CHARS]
        return Syntax(make_safe(pretty) + note, "json", theme="ansi_dark", word_wrap=True)

    def on_entry_view_rendered(self, message: Rendered) -> None:
        if message.node is not self.node:
            return
        self.remove_children()
        widgets: list[Static | Collapsible] = [Static(message.head, classes="entry-head")]
        if self.raw:
            widgets.append(Static(Text("raw line (r to go back)", "dim italic")))
        for part in message.parts:
            if isinstance(part, tuple) and part and part[0] == "thinking":
                thinking = part[1]
                body = Static(Text(make_safe(thinking[:MAX_CHARS]), "italic dim"))
                widgets.append(Collapsible(body, title=f"thinking ({len(thinking):,} chars)", collapsed=True))
            else:
                widgets.append(Static(part))
        self.mount_all(widgets)
        self.scroll_home(animate=False)


def _text_of(entry: dict[str, Any]) -> str:
    """The text of an entry for a token count (message content, summaries)."""
    from pitree.summary.tokens import llm_text

    msg = entry.get("message")
    if isinstance(msg, dict):
        if msg.get("role") == "bashExecution":
            return f"{msg.get('command') or ''}\n{msg.get('output') or ''}"
        return llm_text(msg)
    summary = entry.get("summary")
    if isinstance(summary, str):
        return summary
    return llm_text({"content": entry.get("content")})
