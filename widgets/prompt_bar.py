"""`PromptBar`: the one-line input under the tree for search (`/`) and go-to-id (`g`)."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input


class PromptBar(Input):
    """An Input that knows what it is asking for (`purpose`), and posts past-tense messages."""

    DEFAULT_CSS = """
    PromptBar { display: none; height: 3; border: tall $accent; }
    """

    class Edited(Message):
        """Posted on every edit (search is incremental)."""

        def __init__(self, purpose: str, value: str) -> None:
            self.purpose, self.value = purpose, value
            super().__init__()

    class Entered(Message):
        """Posted when the user pressed Enter."""

        def __init__(self, purpose: str, value: str) -> None:
            self.purpose, self.value = purpose, value
            super().__init__()

    class Cancelled(Message):
        """Posted when the user pressed Escape."""

        def __init__(self, purpose: str) -> None:
            self.purpose = purpose
            super().__init__()

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.purpose = "search"
        self._return_focus: Widget | None = None

    def ask(self, purpose: str, placeholder: str, value: str = "") -> None:
        self.purpose = purpose
        self.placeholder = placeholder
        self.value = value
        # An inline style takes effect at once, so the focus (and the keys typed next) land here.
        self.display = True
        if self.app.focused is not self:
            self._return_focus = self.app.focused
        self.screen.set_focus(self)

    def close(self) -> None:
        # Focus moves back at once (not on the next idle), so a key typed right after Enter reaches the tree.
        self.display = False
        back, self._return_focus = self._return_focus, None
        if self.has_focus:
            self.screen.set_focus(back if back is not None and back.is_attached else None)

    async def _on_key(self, event: events.Key) -> None:
        # Enter and Escape are handled here rather than by bindings, which run only once the key has bubbled up to
        # the App: a key typed right after them would by then have been typed into the bar.
        if self.display and event.key in ("enter", "escape"):
            event.stop()
            event.prevent_default()
            if event.key == "enter":
                self.close()
                self.post_message(self.Entered(self.purpose, self.value))
            else:
                self.action_cancel()
            return
        if self.display:
            return  # Textual runs Input's own handler next
        # A key that was already queued here when the bar closed goes to whatever has the focus now.
        event.stop()
        event.prevent_default()
        self.app.post_message(events.Key(event.key, event.character))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Edited(self.purpose, event.value))

    def action_cancel(self) -> None:
        self.close()
        self.post_message(self.Cancelled(self.purpose))
