"""`StatusBar`: one line under the panes: file, session name, counts, leaf, skipped lines, follow, context."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pitree.session.text import make_safe
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


@dataclass(frozen=True)
class Status:
    file: str = ""
    name: str | None = None
    entries: int = 0
    branches: int = 0
    leaf: str | None = None
    skipped: int = 0
    follow: bool = True
    context_tokens: int | None = None
    context_pending: bool = False  # being measured (a big session): shown as `ctx …`
    filter: str = "default"
    file_state: str = ""  # "", "waiting for file", "deleted", "reloaded" ...
    matches: str = ""
    audit: str = ""  # the selected compaction's legend: what the tree's gutter marks mean


class StatusBar(Widget):
    """Shows a `Status`; the app replaces `status` (a frozen value) to update it.

    A fixed one-line widget that only repaints itself: a Static's update would re-lay out the whole
    screen on every cursor move."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    status: reactive[Status] = reactive(Status, layout=False)

    def update_status(self, **changes: object) -> None:
        self.status = replace(self.status, **changes)  # type: ignore[arg-type]

    def render(self) -> Text:
        return self.render_status(self.status, self.content_region.width or None)

    @staticmethod
    def render_status(s: Status, width: int | None = None) -> Text:
        """The bar as text, at most `width` cells: a long file or session name is shortened first (the file in
        the middle), then the branch, entry and leaf counts are left out, so the context size and the follow
        state always show."""
        # (text, style, how soon it goes when there is no room: 0 never, higher first)
        parts: list[tuple[str, str, int]] = []
        audit = make_safe(s.audit, keep_newlines=False)
        parts.append((f"{s.entries:,} {plural(s.entries, 'entry', 'entries')}", "", 2))
        parts.append((f"{s.branches:,} {plural(s.branches, 'branch', 'branches')}", "", 3))
        if s.leaf:
            parts.append((f"leaf {make_safe(s.leaf, keep_newlines=False)}", "", 1))
        if s.context_pending:
            parts.append(("ctx …", "dim", 0))
        elif s.context_tokens is not None:
            parts.append((f"ctx ~{s.context_tokens:,} tok", "", 0))
        if s.filter != "default":
            parts.append((f"[{s.filter}]", "bold yellow", 0))
        if s.skipped:
            parts.append((f"{s.skipped} skipped (s)", "yellow", 1))
        parts.append(("follow " + ("on" if s.follow else "off"), "green" if s.follow else "dim", 0))
        if s.matches:
            parts.append((make_safe(s.matches, keep_newlines=False), "bold cyan", 0))
        if s.file_state:
            state_style = "bold red" if "deleted" in s.file_state else "bold yellow"
            parts.append((make_safe(s.file_state, keep_newlines=False), state_style, 0))
        file = make_safe(s.file, keep_newlines=False)
        name = make_safe(s.name, keep_newlines=False) if s.name else ""

        def fixed() -> int:
            return sum(len(text) + len(SEP) for text, _, _ in parts) + (len(audit) + len(SEP) if audit else 0)

        if width is not None:
            while fixed() + min(len(file), MIN_FILE) > width and any(p[2] for p in parts):
                parts.remove(max(parts, key=lambda p: p[2]))
            room = width - fixed()
            if len(file) + (len(SEP) + len(name) if name else 0) > room:
                keep = min(len(file), max(MIN_FILE, room // 2))
                if name and room - keep - len(SEP) >= MIN_NAME:
                    name = cut_end(name, room - keep - len(SEP))
                else:
                    name, keep = "", room
                file = cut_middle(file, keep)
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(file, "bold")
        if audit:  # first: it explains marks now on screen
            t.append(SEP)
            t.append(audit, "bold magenta")
        if name:
            t.append(SEP)
            t.append(name, "italic")
        for text, style, _ in parts:
            t.append(SEP)
            t.append(text, style)
        if width is not None:
            t.truncate(width, overflow="ellipsis")
        return t


SEP = " · "
MIN_FILE, MIN_NAME = 12, 8


def plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def cut_end(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def cut_middle(text: str, width: int) -> str:
    """`2026-11-28T09-0…1a2b.jsonl`: the start (the date) and the end of a long file name."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[:width]
    head = (width - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
