"""`JumpDialog`: what pressing Enter on an entry will do, and the choice of summary before anything is written.

Shows where the leaf moves (the target, or its parent for a user message, whose text can be copied),
what is left behind (entries, Pi's token estimate, files read and modified), warnings (Pi running,
written recently, old file version), then: no summary / summarize / summarize with instructions.
A summary streams into an editable text area; Esc cancels at any point and nothing is written.
The dialog returns the entry to append (a dict) or None.
"""

from __future__ import annotations

from typing import Any

from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, SessionFileError
from pitree.summary.jump import JumpPlan, editor_text, marker_entry, summary_entry
from pitree.summary.run import SummaryJob, extractive_summary, finish_model_summary, prepare_job, stream_model_summary
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
    JumpDialog #status { height: auto; color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel (nothing is written)")]

    class Streamed(Message):
        """Posted by the summary worker with more text (or the whole text for extractive)."""

        def __init__(self, text: str, done: bool) -> None:
            self.text, self.done = text, done
            super().__init__()

    class Failed(Message):
        """Posted when the summary could not be made."""

        def __init__(self, error: str) -> None:
            self.error = error
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
                yield Button("No summary", id="none", variant="default")
                yield Button("Summarize", id="summarize", variant="primary")
                yield Button("Summarize with instructions…", id="with-instructions")
                yield Select(
                    [(name, name) for name in ("extractive", "openai", "anthropic")],
                    value=self.summarizer if self.summarizer in ("extractive", "openai", "anthropic") else "extractive",
                    allow_blank=False,
                    id="summarizer",
                )
            with Horizontal(id="review"):
                yield Button("Append summary", id="append", variant="success")
                yield Button("Copy editor text", id="copy")
                yield Button("Cancel", id="cancel", variant="error")

    def on_mount(self) -> None:
        self.query_one("#append").display = False
        if not self.plan.needs_editor_text:
            self.query_one("#copy").display = False
        if not self.plan.to_summarize:
            for b in ("#summarize", "#with-instructions", "#summarizer"):
                self.query_one(b).display = False
            self.query_one("#none", Button).label = "Move the leaf (marker entry)"
        self._prepare()

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
        n = len(plan.to_summarize)
        tokens = sum(node.est for node in plan.to_summarize)
        t.append("left behind: ", "bold")
        t.append(f"{n} entries, ~{tokens:,} tokens (Pi's estimate)" if n else "nothing (no summary needed)")
        t.append("\n")
        read, modified = self.files
        if read or modified:
            t.append(f"files read: {', '.join(read) or '—'}\nfiles modified: {', '.join(modified) or '—'}\n")
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
    def _prepare(self) -> None:
        try:
            job = prepare_job(
                self.stree, self.reader, self.plan, self.config.context_window, self.config.reserve_tokens
            )
            text = editor_text(self.reader.entry(self.plan.target)) if self.plan.needs_editor_text else None
        except SessionFileError as exc:
            self.app.call_from_thread(self._fail, str(exc))
            return
        self.app.call_from_thread(self._prepared, job, text)

    def _prepared(self, job: SummaryJob, text: str | None) -> None:
        self.job, self.text_for_editor = job, text
        self.files = job.prepared.file_ops.lists()
        self.query_one("#plan", Static).update(self._describe())

    def _fail(self, error: str) -> None:
        self.query_one("#status", Static).update(Text(make_safe(error, keep_newlines=False), "bold red"))
        self.query_one("#busy").display = False

    # ---- choices ------------------------------------------------------------------------------------------

    @on(Button.Pressed, "#none")
    def _no_summary(self) -> None:
        reason = "no summary requested" if self.plan.to_summarize else "nothing to summarize"
        self.dismiss(marker_entry(self.stree, self.plan, reason))

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
        self.query_one("#status", Static).update("Type extra instructions, then press Summarize.")
        self.query_one("#with-instructions").display = False

    @on(Button.Pressed, "#copy")
    def _copy(self) -> None:
        if self.text_for_editor:
            self.app.copy_to_clipboard(self.text_for_editor)
            self.notify("copied the message text to the clipboard")

    @on(Button.Pressed, "#cancel")
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
        self.dismiss(summary_entry(self.stree, self.plan, text, read, modified))

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
        name = str(self.query_one("#summarizer", Select).value)
        self.query_one("#status", Static).update(f"Summarizing with {name}… (Esc cancels; nothing is written)")
        if name == "extractive":
            self._extractive()
        else:
            self._model(name, instructions)

    @work(thread=True, exclusive=True, group="jump-summary", description="Summarizing", exit_on_error=False)
    def _extractive(self) -> None:
        assert self.job is not None
        text, read, modified = extractive_summary(self.job)
        if not get_current_worker().is_cancelled:
            self.post_message(self.Streamed(text, True))

    @work(exclusive=True, group="jump-summary", description="Summarizing with a model", exit_on_error=False)
    async def _model(self, name: str, instructions: str | None) -> None:
        from dataclasses import replace

        from pitree.config import ConfigError, make_backend
        from pitree.summary.backends.base import BackendError

        assert self.job is not None
        try:
            backend = make_backend(replace(self.config, summarizer=name))
            parts: list[str] = []
            async for delta in stream_model_summary(self.job, backend, instructions):
                parts.append(delta)
                self.post_message(self.Streamed("".join(parts), False))
            text, _, _ = finish_model_summary(self.job, "".join(parts))
        except (BackendError, ConfigError) as exc:
            self.post_message(self.Failed(str(exc)))
            return
        self.post_message(self.Streamed(text, True))

    def on_jump_dialog_streamed(self, message: Streamed) -> None:
        area = self.query_one("#summary", TextArea)
        area.text = message.text
        if message.done:
            self.phase = "review"
            self.query_one("#busy").display = False
            self.query_one("#append").display = True
            self.query_one("#status", Static).update("Review or edit the summary, then Append (Esc cancels).")
            area.focus()

    def on_jump_dialog_failed(self, message: Failed) -> None:
        self._fail(f"summary failed, nothing written: {message.error}")
        self.phase = "choose"
        self.query_one("#choices").display = True
