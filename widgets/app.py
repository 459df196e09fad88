"""`PitreeApp`: composes the explorer (`Explorer`) and the footer, and routes between the explorer, the sessions
browser and the other screens. The session itself — loading, following, keys — is the explorer's.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pitree.session.text import make_safe
from pitree.widgets import textual_fixes
from pitree.widgets.commands import explorer_commands
from pitree.widgets.explorer import Explorer
from pitree.widgets.explorer_state import EXACT_TOKENS_FROM
from pitree.widgets.screens.explorer_screens import asset_text, help_screen
from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Footer

textual_fixes.apply()
textual_fixes.apply_strips()

if TYPE_CHECKING:
    from pitree.store.session_index import SessionIndex
    from pitree.widgets.screens.browser import BrowserState

__all__ = ["EXACT_TOKENS_FROM", "PitreeApp", "run_app"]


INPUT_QUIET = 0.25  # seconds without a key or click before background work goes on


class PitreeApp(App[int]):
    """The explorer on one session file, or the sessions browser first."""

    TITLE = "pitree"
    CSS = asset_text("app.tcss")

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("escape", "sessions", "Sessions", show=False),
    ]

    def __init__(
        self,
        path: Path | None,
        *,
        select_id: str | None = None,
        watch: bool = True,
        config_overrides: dict[str, object] | None = None,
        browser: BrowserState | None = None,
    ) -> None:
        """`path=None` starts in the sessions browser (`browser` says where; default: Pi's folder)."""
        super().__init__()
        if browser is None and path is None:
            from pitree.widgets.screens.browser import BrowserState

            browser = BrowserState()
        self.browser_state = browser
        self.input_at = 0.0  # monotonic time of the last key or mouse press (`pause_for_input`)
        self._index: SessionIndex | None = None  # the browser's, opened on first use
        self.explorer = Explorer(
            path, select_id=select_id, watch=watch, config_overrides=config_overrides, freeze_first=browser is None
        )

    def compose(self) -> ComposeResult:
        if self.explorer.path != Path():  # else mounted when a session is chosen: the browser's first rows come sooner
            yield self.explorer
        yield Footer()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.MouseDown | events.MouseScrollDown | events.MouseScrollUp):
            self.input_at = time.monotonic()
        await super().on_event(event)

    def pause_for_input(self) -> None:
        """Called between chunks of background work, in its thread: waits while keys or the mouse were used in the
        last `INPUT_QUIET` seconds. That work (the other filters' layouts, the search index) would otherwise take the
        interpreter lock from the UI while the user moves (README: "How the figures got here")."""
        while time.monotonic() - self.input_at < INPUT_QUIET:
            time.sleep(0.02)

    def on_mount(self) -> None:
        self.console.size = (self.size.width, self.size.height)
        if self.explorer.path == Path():
            self.open_browser()

    def on_resize(self, event: events.Resize) -> None:
        # Rich asks the terminal for its size on each `console.options` (three ioctls), which DataTable reads for
        # every cell of every row added to it; Textual sizes screens from its driver, so the console holds the size.
        self.console.size = (event.size.width, event.size.height)

    async def action_quit(self) -> None:
        """Quit, keeping the session's first screen for its next open (`Explorer.keep_first_screen`)."""
        if self.explorer.is_mounted:
            self.explorer.keep_first_screen()
        self.exit()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "sessions":  # the explorer's Esc: not over another screen, nor without the browser
            return self.browser_state is not None and len(self.screen_stack) == 1
        return True

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification (widgets' and screens' go through here) as plain text: they quote ids, names and
        paths from session files, and a `[@click=app.quit]` in one must be neither parsed nor clickable."""
        super().notify(
            make_safe(str(message)),
            title=make_safe(str(title), keep_newlines=False),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.explorer.is_mounted:
            yield from explorer_commands(self.explorer)

    @on(Explorer.SessionOpened)
    def _session_opened(self, message: Explorer.SessionOpened) -> None:
        self.title = f"pitree — {make_safe(message.path.name, keep_newlines=False)}"

    def open_browser(self) -> None:
        """The sessions browser on top; choosing a session opens it in the explorer, Esc there comes back."""
        from pitree.cli.index_refresh import newest_indexed
        from pitree.widgets.screens.browser import BrowserScreen

        state = self.browser_state
        assert state is not None
        if self._index is None:
            from pitree.store.session_index import SessionIndex

            self._index = SessionIndex()

        newest_indexed()  # the child `pitree` started for the first rows (nothing to wait for after that)

        async def chosen(result: tuple[Path, str | None] | None) -> None:
            if result is None:
                self.exit(0)
                return
            if not self.explorer.is_mounted:
                base = self.screen_stack[0]
                await base.mount(self.explorer, before=base.query_one(Footer))
            self.explorer.open_session(*result)

        self.push_screen(BrowserScreen(state, self._index), callback=chosen)

    def action_sessions(self) -> None:
        if self.browser_state is not None:
            if self.explorer.stree is not None:
                self.browser_state.selected = str(self.explorer.path)
            self.open_browser()

    def action_help(self) -> None:
        self.push_screen(help_screen())


def run_app(path: Path | None, select_id: str | None = None, browser: BrowserState | None = None) -> int:
    """The explorer on `path`, or (path None) the sessions browser first."""
    app = PitreeApp(path, select_id=select_id, browser=browser)
    app.run()
    return app.return_code or 0
