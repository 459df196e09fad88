"""`PromptBar`: the one-line input under the tree for search (`/`) and go-to-id (`g`)."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class PromptBar(Input):
    """An Input that knows what it is asking for (`purpose`), and posts past-tense messages."""

    DEFAULT_CSS = """
    PromptBar { display: none; height: 3; border: tall $accent; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

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

    def ask(self, purpose: str, placeholder: str, value: str = "") -> None:
        self.purpose = purpose
        self.placeholder = placeholder
        self.value = value
        # An inline style takes effect at once, so the focus (and the keys typed next) land here.
        self.display = True
        self.focus()

    def close(self) -> None:
        self.display = False

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Edited(self.purpose, event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.close()
        self.post_message(self.Entered(self.purpose, event.value))

    def action_cancel(self) -> None:
        self.close()
        self.post_message(self.Cancelled(self.purpose))
