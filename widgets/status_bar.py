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
        return self.render_status(self.status)

    @staticmethod
    def render_status(s: Status) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(make_safe(s.file, keep_newlines=False), "bold")
        if s.audit:  # first: it explains marks now on screen
            t.append(" · ")
            t.append(make_safe(s.audit, keep_newlines=False), "bold magenta")
        if s.name:
            t.append(" · ")
            t.append(make_safe(s.name, keep_newlines=False), "italic")
        t.append(f" · {s.entries} entries · {s.branches} branches")
        if s.leaf:
            t.append(f" · leaf {make_safe(s.leaf, keep_newlines=False)}")
        if s.context_tokens is not None:
            t.append(f" · ctx ~{s.context_tokens:,} tok")
        if s.filter != "default":
            t.append(f" · [{s.filter}]", "bold yellow")
        if s.skipped:
            t.append(f" · {s.skipped} skipped (s)", "yellow")
        t.append(" · follow " + ("on" if s.follow else "off"), "green" if s.follow else "dim")
        if s.matches:
            t.append(f" · {make_safe(s.matches, keep_newlines=False)}", "bold cyan")
        if s.file_state:
            style = "bold red" if "deleted" in s.file_state else "bold yellow"
            t.append(f" · {make_safe(s.file_state, keep_newlines=False)}", style)
        return t
