"""`TextScreen`: a modal that shows a block of text (help, skipped lines, problems); Esc or q closes it."""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static


class Lines(list[Strip]):
    """A body laid out to lines (`explorer_screens.rendered`): thousands of them show at once."""


class LinesView(ScrollView, can_focus=True):
    """Lines already laid out, scrolled; only those on screen are drawn."""

    BINDINGS = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("pageup", "move(-0.9)", show=False),
        Binding("pagedown", "move(0.9)", show=False),
        Binding("home", "move(-1e9)", show=False),
        Binding("end", "move(1e9)", show=False),
    ]

    def __init__(self, lines: Lines) -> None:
        super().__init__()
        self.lines = lines
        self.virtual_size = Size(max((line.cell_length for line in lines), default=0), len(lines))

    def action_move(self, by: float) -> None:
        """Scroll by lines (a whole number) or by screens (a fraction of one), without animation."""
        lines = int(by) if by == int(by) else int(by * self.scrollable_content_region.height)
        self.scroll_to(y=self.scroll_offset.y + lines, animate=False)

    def render_line(self, y: int) -> Strip:
        x, top = self.scroll_offset
        i = top + y
        width = self.scrollable_content_region.width
        if i >= len(self.lines):
            return Strip.blank(width, self.rich_style)
        return self.lines[i].crop_extend(x, x + width, self.rich_style)


def text_width(screen_width: int) -> int:
    """The width of a `TextScreen`'s text on a screen this wide: 90% of it, less border, padding and scrollbar."""
    return max(20, screen_width * 9 // 10 - 6)


class TextScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    TextScreen { align: center middle; }
    TextScreen > .frame { width: 90%; height: 85%; border: thick $accent; background: $surface; padding: 0 1; }
    TextScreen LinesView { height: 1fr; }
    TextScreen .title { text-style: bold; color: $accent; margin-bottom: 1; }
    """
    BINDINGS = [Binding("escape,q", "dismiss_screen", "Close")]

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        if isinstance(self.body, Lines):  # laid out already: only the lines on screen are drawn
            with Vertical(classes="frame"):
                yield Static(self.title_text, classes="title", markup=False)
                yield LinesView(self.body)
            return
        with VerticalScroll(classes="frame"):
            yield Static(self.title_text, classes="title", markup=False)
            yield Static(self.body)

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
