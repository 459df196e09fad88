"""`ContextScreen`: what the model gets at one leaf (key `c`), and how the context grew along the path.

On top, a plot of the context size (Pi's estimate) at every entry of root → leaf, compactions marked and
the model's window drawn where Pi's registry knows it. Below, the exact message list of
`build_context` (SPEC.md rules), one row per message: role, entry, Pi's estimate, tiktoken cl100k and a
running total; compaction and branch summaries stand out. tiktoken counts come from a cancellable
thread worker that fills the column in batches with a progress bar. Enter closes the screen on the
selected message's entry (the app selects it in the tree); Esc closes it where it was.
"""

from __future__ import annotations

from pitree.report import tiktoken_counts
from pitree.session.context import SessionContext, build_context, model_label
from pitree.session.context_curve import context_curve
from pitree.session.entries import Node
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.model_info import context_window
from pitree.store.session_file import EntryReader, SessionFileError
from pitree.tui.plot import context_plot
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, ProgressBar, Static
from textual.worker import get_current_worker

BATCH = 64  # messages per tiktoken batch: one progress step, and a cancel check between batches
ROW_BATCH = 400  # table rows added per turn of the event loop
SUMMARY_ROLES = {"compactionSummary": "magenta", "branchSummary": "yellow"}


class ContextPlot(Widget):
    """The context-size plot; redrawn at its own width."""

    DEFAULT_CSS = "ContextPlot { height: 11; }"

    def __init__(self, values: list[int], compactions: list[int], window: int | None, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.values, self.compactions, self.window = values, compactions, window

    def render(self) -> Text:
        return context_plot(self.values, self.compactions, self.window, self.size.width, height=self.size.height - 2)


class MessageTable(DataTable[object]):
    """The message list: a row table, so Home/End (and j/k) move the cursor to the first/last row."""

    BINDINGS = [
        Binding("home", "scroll_top", "First", show=False),
        Binding("end", "scroll_bottom", "Last", show=False),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]


class ContextScreen(Screen[str | None]):
    """The context at `leaf`; dismisses with the entry id to select, or None."""

    DEFAULT_CSS = """
    ContextScreen { layout: vertical; }
    ContextScreen #ctx-head { height: auto; padding: 0 1; background: $panel; }
    ContextScreen ContextPlot { margin: 0 1; }
    ContextScreen #ctx-progress { height: 1; margin: 0 1; }
    ContextScreen DataTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("escape,q,c", "close", "Back"),
        Binding("enter", "select_entry", "Go to entry"),  # the table's own Enter posts RowSelected, handled below
    ]

    class Counted(Message):
        """Posted by the tiktoken worker after each batch."""

        def __init__(self, start: int, counts: list[int]) -> None:
            self.start, self.counts = start, counts
            super().__init__()

    class CountFailed(Message):
        """Posted when the entries could not be re-read for counting."""

        def __init__(self, error: str) -> None:
            self.error = error
            super().__init__()

    def __init__(self, tree: SessionTree, reader: EntryReader, leaf: Node | None) -> None:
        super().__init__()
        self.stree, self.reader = tree, reader
        self.ctx: SessionContext = build_context(tree, leaf)
        model = self.ctx.model or {}
        self.window = context_window(model.get("provider"), model.get("modelId"))
        self.tiktoken: list[int | None] = [None] * len(self.ctx.messages)
        self.counted = 0

    def compose(self) -> ComposeResult:
        ctx = self.ctx
        curve = context_curve(self.stree, ctx.leaf)
        yield Static(self._head(), id="ctx-head")
        yield ContextPlot(
            [p.tokens for p in curve], [i for i, p in enumerate(curve) if p.compaction], self.window, id="ctx-plot"
        )
        yield ProgressBar(total=max(1, len(ctx.messages)), show_eta=False, id="ctx-progress")
        yield MessageTable(cursor_type="row", zebra_stripes=True, id="ctx-table")
        yield Footer()

    def _head(self) -> Text:
        ctx = self.ctx
        head = Text(no_wrap=False)
        head.append("Context at ", "bold")
        head.append(ctx.leaf.id if ctx.leaf else "(empty session)", "bold cyan")
        head.append(f"  ·  model {make_safe(model_label(ctx.model), keep_newlines=False)}")
        head.append(f"  ·  thinking {make_safe(str(ctx.thinking_level), keep_newlines=False)}")
        head.append(f"  ·  window {self.window:,}" if self.window else "  ·  window unknown (not in Pi's registry)")
        head.append(f"\n{len(ctx.messages)} messages · ~{ctx.tokens:,} tokens (Pi's chars/4)")
        if self.counted >= len(ctx.messages):
            total = sum(c or 0 for c, m in zip(self.tiktoken, ctx.messages, strict=True) if not m.excluded)
            head.append(f" · {total:,} tokens (tiktoken cl100k)")
            if self.window:
                head.append(f" · {total / self.window:.1%} of the window")
        else:
            head.append(f" · tiktoken: counting {self.counted}/{len(ctx.messages)} …", "dim")
        if ctx.compaction is not None:
            head.append(f"\nafter compaction {ctx.compaction.id}: its summary comes first", "magenta")
            head.append(f", then the kept entries from {ctx.kept_from.id}" if ctx.kept_from else ", nothing kept")
        if ctx.dialect == "omp":  # an oh-my-pi session: its buildSessionContext, not Pi's
            head.append("\nrules: oh-my-pi's (the file is in its dialect)", "yellow")
            for note in ctx.notes[:6]:
                head.append(f"\n  {make_safe(note, keep_newlines=False)}", "dim")
            if len(ctx.notes) > 6:
                head.append(f"\n  … {len(ctx.notes) - 6} more left out", "dim")
        return head

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("#", key="n")
        table.add_column("role", key="role")
        table.add_column("entry", key="entry")
        table.add_column("Pi est.", key="est")
        table.add_column("tiktoken", key="tik")
        table.add_column("running", key="run")
        table.add_column("text", key="text")
        self._running_total = 0
        self._rows_added = 0
        table.focus()
        self._fill()

    def _fill(self) -> None:
        """Add the next ROW_BATCH rows, then yield to the event loop: 9,000 messages never freeze the screen."""
        table = self.query_one(DataTable)
        messages = self.ctx.messages
        row_text = self.stree.context_text
        stop = min(len(messages), self._rows_added + ROW_BATCH)
        for i in range(self._rows_added, stop):
            m = messages[i]
            if not m.excluded:
                self._running_total += m.tokens
            role = Text(m.role, SUMMARY_ROLES.get(m.role, ""))
            if m.excluded:
                role.append(" (excluded)", "dim")
            body = make_safe(row_text(m.node), keep_newlines=False)[:160]
            table.add_row(
                Text(str(i + 1), "dim"),
                role,
                m.node.id,
                Text(f"{m.tokens:,}", justify="right"),
                Text("…", "dim", justify="right"),
                Text(f"{self._running_total:,}", justify="right"),
                Text(body, SUMMARY_ROLES.get(m.role, "")),
                key=str(i),
            )
        self._rows_added = stop
        if stop < len(messages):
            self.call_after_refresh(self._fill)
            return
        if messages and table.cursor_row == 0:  # start at the leaf, unless the user moved meanwhile
            table.move_cursor(row=len(messages) - 1)
        self.count_tokens()  # once every row exists: the counts fill cells by row key

    @work(thread=True, exclusive=True, group="context-count", description="Counting tokens", exit_on_error=False)
    def count_tokens(self) -> None:
        worker = get_current_worker()
        messages = self.ctx.messages
        for start in range(0, len(messages), BATCH):
            if worker.is_cancelled:
                return
            part = SessionContext(leaf=None, path=[], messages=messages[start : start + BATCH])
            try:
                counts = tiktoken_counts(self.reader, part)
            except SessionFileError as exc:
                self.post_message(self.CountFailed(str(exc)))
                return
            if worker.is_cancelled:
                return
            self.post_message(self.Counted(start, counts))

    def on_context_screen_counted(self, message: Counted) -> None:
        table = self.query_one(DataTable)
        for offset, count in enumerate(message.counts):
            i = message.start + offset
            self.tiktoken[i] = count
            table.update_cell(str(i), "tik", Text(f"{count:,}", justify="right"))
        self.counted = message.start + len(message.counts)
        self.query_one(ProgressBar).update(progress=self.counted)
        if self.counted >= len(self.ctx.messages):
            self.query_one(ProgressBar).display = False
        self.query_one("#ctx-head", Static).update(self._head())

    def on_context_screen_count_failed(self, message: CountFailed) -> None:
        self.notify(message.error, title="tiktoken count stopped", severity="error")

    def action_close(self) -> None:
        self.workers.cancel_group(self, "context-count")
        self.dismiss(None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_select_entry()

    def action_select_entry(self) -> None:
        table = self.query_one(DataTable)
        if not self.ctx.messages:
            return
        self.workers.cancel_group(self, "context-count")
        self.dismiss(self.ctx.messages[table.cursor_row].node.id)
