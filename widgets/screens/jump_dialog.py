"""`JumpDialog`: what pressing Enter on an entry will do, and the choice of summary before anything is written.

Shows where the leaf moves (the target, or its parent for a user message, whose text can be copied),
what is left behind (entries; messages and tokens as Pi's branch-summary preparation counts them; files),
warnings (Pi running, written recently, old file version), then: no summary / summarize / summarize with instructions.
Every choice has a key and the first focus is on Cancel, so a stray Enter or Tab writes nothing and sends
nothing. The summarizer list offers the offline summary and the model `choose` found (pitree's config, else
the session's own model through Pi's agent folder); choosing Summarize with a model is the consent to send
the branch to it, and the dialog says where it goes first. A `!command` key runs only after "Allow key
command". A summary streams into an editable text area; Esc cancels at any point and nothing is written.
The dialog returns the entry to append (a dict) or None.
"""

from __future__ import annotations

from typing import Any

from pitree.ops.jump import (
    JumpPlan,
    Summary,
    editor_text,
    marker_entry,
    model_summary,
    offline_summary,
    prepare_job,
    summary_entry,
)
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, SessionFileError
from pitree.summary.run import SummaryJob, left_behind, no_content
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, LoadingIndicator, Select, Static, TextArea
from textual.worker import get_current_worker


class JumpDialog(ModalScreen[dict[str, Any] | None]):
    DEFAULT_CSS = """
    JumpDialog { align: center middle; }
    JumpDialog > Vertical { width: 90%; height: 90%; border: thick $accent; background: $surface; padding: 0 1; }
    JumpDialog #info { height: auto; max-height: 45%; }
    JumpDialog #instructions, JumpDialog #summary { height: 1fr; min-height: 5; display: none; }
    JumpDialog #busy { height: 1; display: none; }
    JumpDialog Horizontal { height: auto; margin-top: 1; }
    JumpDialog Button { margin-right: 1; }
    /* A grid, not a row: at 80 columns the choices wrap and the summarizer keeps the room its name needs. */
    JumpDialog #choices { layout: grid; grid-size: 4; grid-columns: auto; grid-rows: auto; height: auto; }
    JumpDialog #summarizer { column-span: 2; width: 1fr; min-width: 24; margin-right: 1; }
    JumpDialog #status { height: auto; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel (nothing is written)"),
        Binding("c", "cancel", "Cancel", show=False),
        Binding("n", "press('none')", "No summary"),
        Binding("s", "press('summarize')", "Summarize"),
        Binding("i", "press('with-instructions')", "With instructions"),
        Binding("m", "focus_summarizer", "Summarizer"),
        Binding("k", "press('allow-command')", "Allow key command"),
        Binding("a", "press('append')", "Append"),
        Binding("ctrl+s", "submit", "Summarize / Append", show=False),
        Binding("y", "press('copy')", "Copy editor text"),
    ]

    class Streamed(Message):
        """Posted by the summary worker with more text (or the whole text for extractive)."""

        def __init__(self, text: str, done: bool, files: tuple[list[str], list[str]] | None = None) -> None:
            self.text, self.done, self.files = text, done, files
            super().__init__()

    class Failed(Message):
        """Posted when the summary could not be made."""

        def __init__(self, error: str) -> None:
            self.error = error
            super().__init__()

    class Progress(Message):
        """Posted by the model worker while it waits (a rate-limit retry)."""

        def __init__(self, text: str) -> None:
            self.text = text
            super().__init__()

    def __init__(
        self,
        plan: JumpPlan,
        tree: SessionTree,
        reader: EntryReader,
        summarizer: str,
        config: Any,
        warnings: list[str],
    ) -> None:
        super().__init__()
        self.plan, self.stree, self.reader = plan, tree, reader
        self.summarizer = summarizer
        self.config = config
        self.warnings = warnings
        self.job: SummaryJob | None = None
        self.text_for_editor: str | None = None
        self.files: tuple[list[str], list[str]] = ([], [])
        self.model_text = ""
        self.phase = "choose"  # choose -> instructions -> summarizing -> review
        self.choice: Any = None  # summary.choose.Choice, once prepared
        self.usage: dict[str, Any] | None = None
        self.note = ""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Jump to this entry", "bold"), id="title")
            with VerticalScroll(id="info"):
                yield Static(self._describe(), id="plan")
            yield TextArea(id="instructions")
            yield LoadingIndicator(id="busy")
            yield TextArea(id="summary")
            yield Static("", id="status")
            with Horizontal(id="choices"):
                yield Button("Cancel [c]", id="cancel-choose", variant="error")
                yield Button("No summary [n]", id="none", variant="default")
                yield Button("Summarize [s]", id="summarize", variant="primary")
                yield Button("With instructions… [i]", id="with-instructions")
                yield Select(
                    [("offline (extractive)", "extractive")], value="extractive", allow_blank=False, id="summarizer"
                )
                yield Button("Allow key command [k]", id="allow-command")
            with Horizontal(id="review"):
                yield Button("Cancel [esc]", id="cancel", variant="error")
                yield Button("Append summary [ctrl+s]", id="append", variant="success")
                yield Button("Copy editor text [y]", id="copy")

    def on_mount(self) -> None:
        self.query_one("#append").display = False
        self.query_one("#allow-command").display = False
        if not self.plan.needs_editor_text:
            self.query_one("#copy").display = False
        if not self.plan.to_summarize:
            for b in ("#summarize", "#with-instructions", "#summarizer"):
                self.query_one(b).display = False
            self.query_one("#none", Button).label = "Move the leaf (marker entry) [n]"
        self.query_one("#cancel-choose", Button).focus()  # the safe choice: nothing written, nothing sent
        self._prepare()

    def action_press(self, button: str) -> None:
        """A choice's key: the same as pressing its button, when that button is shown."""
        found = self.query(f"#{button}")
        if not found:
            return
        widget = found.first()
        if isinstance(widget, Button) and widget.display and widget.parent is not None and widget.parent.display:
            widget.press()

    def action_submit(self) -> None:
        """ctrl+s, which works inside the text areas too: summarize with the typed instructions, or append."""
        if self.phase == "instructions":
            self.action_press("summarize")
        elif self.phase == "review":
            self.action_press("append")

    def action_focus_summarizer(self) -> None:
        select = self.query_one("#summarizer", Select)
        if select.display and self.phase in ("choose", "instructions"):
            select.focus()

    def _describe(self) -> Text:
        plan, tree = self.plan, self.stree
        t = Text()
        t.append("target: ", "bold")
        t.append(make_safe(tree.row_text(plan.target), keep_newlines=False)[:160])
        t.append(f"  ({make_safe(plan.target.id, keep_newlines=False)})\n", "dim")
        t.append("new leaf: ", "bold")
        if plan.new_leaf is None:
            t.append("before the first entry (the next message starts a new root)\n")
        else:
            t.append(make_safe(tree.row_text(plan.new_leaf), keep_newlines=False)[:160])
            t.append(f"  ({make_safe(plan.new_leaf.id, keep_newlines=False)})\n", "dim")
        if plan.needs_editor_text:
            t.append("its text goes back to Pi's editor: ", "bold")
            t.append(make_safe(self.text_for_editor or "…", keep_newlines=False)[:300] + "\n")
        t.append("left behind: ", "bold")
        t.append(left_behind(len(plan.to_summarize), self.job.prepared if self.job is not None else None))
        t.append("\n")
        read, modified = self.files
        if read or modified:
            shown = f"files read: {', '.join(read) or '—'}\nfiles modified: {', '.join(modified) or '—'}\n"
            t.append(make_safe(shown))  # paths come from the session
        for w in self.warnings:
            t.append("⚠ " + make_safe(w, keep_newlines=False) + "\n", "bold yellow")
        return t

    @work(
        thread=True,
        exclusive=True,
        group="jump-prepare",
        description="Reading the abandoned branch",
        exit_on_error=False,
    )
    def _prepare(self, allow_command: bool = False) -> None:
        from pitree.summary.backends.base import BackendError
        from pitree.summary.choose import choose

        try:
            choice = choose(self.config, self.stree, allow_command=allow_command)
        except BackendError as exc:
            choice = None
            self.app.call_from_thread(self._fail, str(exc))
        window = choice.context_window if choice is not None else self.config.context_window
        reserve = choice.reserve_tokens if choice is not None else self.config.reserve_tokens
        try:
            job = prepare_job(self.stree, self.reader, self.plan, window, reserve)
            text = editor_text(self.reader.entry(self.plan.target)) if self.plan.needs_editor_text else None
        except SessionFileError as exc:
            self.app.call_from_thread(self._fail, str(exc))
            return
        self.app.call_from_thread(self._prepared, job, text, choice)

    def _prepared(self, job: SummaryJob, text: str | None, choice: Any) -> None:
        self.job, self.text_for_editor, self.choice = job, text, choice
        self.files = job.prepared.file_ops.lists()
        self.query_one("#plan", Static).update(self._describe())
        if choice is None:
            return
        select = self.query_one("#summarizer", Select)
        options: list[tuple[str, str]] = [("offline (extractive)", "extractive")]
        if choice.is_model:
            options.insert(0, (make_safe(choice.where, keep_newlines=False)[:100], "model"))
        select.set_options(options)
        select.value = "model" if choice.is_model else "extractive"
        self.query_one("#allow-command").display = choice.command is not None
        status = ""
        if choice.is_model:
            tokens = job.prepared.total_tokens
            status = f"Summarize sends this branch (~{tokens:,} tokens) to {choice.where}."
        if choice.note:
            status = (status + " " if status else "") + f"{choice.note}; the offline summary is offered."
        if status:
            self.query_one("#status", Static).update(Text(make_safe(status, keep_newlines=False)))

    @on(Button.Pressed, "#allow-command")
    def _allow_command(self) -> None:
        self.query_one("#allow-command").display = False
        self.query_one("#status", Static).update("Running the key command…")
        self._prepare(allow_command=True)

    def _fail(self, error: str) -> None:
        self.query_one("#status", Static).update(Text(make_safe(error, keep_newlines=False), "bold red"))
        self.query_one("#busy").display = False

    # ---- choices ------------------------------------------------------------------------------------------

    @on(Button.Pressed, "#none")
    def _no_summary(self) -> None:
        self.dismiss(marker_entry(self.stree, self.plan, self.plan.marker_reason))

    @on(Button.Pressed, "#summarize")
    def _summarize(self) -> None:
        if self.phase == "instructions":
            self._start(self.query_one("#instructions", TextArea).text.strip() or None)
        else:
            self._start(None)

    @on(Button.Pressed, "#with-instructions")
    def _ask_instructions(self) -> None:
        self.phase = "instructions"
        area = self.query_one("#instructions", TextArea)
        area.display = True
        area.focus()
        self.query_one("#status", Static).update("Type extra instructions, then Summarize (ctrl+s).")
        self.query_one("#with-instructions").display = False

    @on(Button.Pressed, "#copy")
    def _copy(self) -> None:
        if self.text_for_editor:
            self.app.copy_to_clipboard(self.text_for_editor)
            self.notify("copied the message text to the clipboard")

    @on(Button.Pressed, "#cancel")
    @on(Button.Pressed, "#cancel-choose")
    def action_cancel(self) -> None:
        self.workers.cancel_group(self, "jump-summary")
        self.dismiss(None)

    @on(Button.Pressed, "#append")
    def _append(self) -> None:
        text = self.query_one("#summary", TextArea).text
        if not text.strip():
            self.query_one("#status", Static).update(
                Text("The summary is empty; write one or choose No summary.", "red")
            )
            return
        read, modified = self.files
        self.dismiss(summary_entry(self.stree, self.plan, Summary(text, read, modified, self.usage)))

    def _start(self, instructions: str | None) -> None:
        if self.job is None:
            self.query_one("#status", Static).update("Still reading the branch; try again in a moment.")
            return
        self.phase = "summarizing"
        self.query_one("#choices").display = False
        self.query_one("#instructions").display = False
        self.query_one("#busy").display = True
        area = self.query_one("#summary", TextArea)
        area.display = True
        area.text = ""
        model = str(self.query_one("#summarizer", Select).value) == "model" and self.choice is not None
        self.usage = None
        self.note = ""
        if self.job.empty:
            # Pi 1.6: the literal, empty file lists, no model call
            self.post_message(self.Streamed(no_content()[0], True, ([], [])))
            return
        if not model and instructions:
            self.note = "The offline summary cannot follow instructions; they were not used. "
        where = self.choice.where if model else "the offline summarizer"
        self.query_one("#status", Static).update(
            Text(make_safe(f"Summarizing with {where}… (Esc cancels; nothing is written)", keep_newlines=False))
        )
        if model:
            self._model(instructions)
        else:
            self._extractive()

    @work(thread=True, exclusive=True, group="jump-summary", description="Summarizing", exit_on_error=False)
    def _extractive(self) -> None:
        assert self.job is not None
        try:
            summary = offline_summary(self.job)
        except Exception as exc:  # a summary that fails must say so, never leave the dialog waiting
            self.post_message(self.Failed(f"offline summary failed: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.Streamed(summary.text, True, (summary.read_files, summary.modified_files)))

    @work(exclusive=True, group="jump-summary", description="Summarizing with a model", exit_on_error=False)
    async def _model(self, instructions: str | None) -> None:
        import asyncio

        from pitree.summary.backends.base import BackendError

        assert self.job is not None and self.choice is not None
        try:
            summary = await model_summary(
                self.job,
                self.choice,
                instructions,
                on_text=lambda text: self.post_message(self.Streamed(text, False)),
                on_retry=lambda text: self.post_message(self.Progress(text)),
            )
        except asyncio.CancelledError:
            raise
        except BackendError as exc:
            self.post_message(self.Failed(str(exc)))
            return
        except Exception as exc:  # an SDK surprise must end the wait with a message, not hang on "Summarizing…"
            self.post_message(self.Failed(f"{type(exc).__name__}: {exc}"))
            return
        self.usage = summary.usage
        self.post_message(self.Streamed(summary.text, True, (summary.read_files, summary.modified_files)))

    def on_jump_dialog_progress(self, message: Progress) -> None:
        self.query_one("#status", Static).update(Text(make_safe(message.text, keep_newlines=False)))

    def on_jump_dialog_streamed(self, message: Streamed) -> None:
        if message.files is not None:
            self.files = message.files  # the lists the summary text ends with go into details too
        area = self.query_one("#summary", TextArea)
        area.text = message.text
        if message.done:
            self.phase = "review"
            self.query_one("#busy").display = False
            self.query_one("#append").display = True
            self.query_one("#status", Static).update(
                self.note + "Review or edit the summary, then Append (ctrl+s; Esc cancels)."
            )
            area.focus()

    def on_jump_dialog_failed(self, message: Failed) -> None:
        self._fail(f"summary failed, nothing written: {message.error}")
        self.phase = "choose"
        self.query_one("#choices").display = True
