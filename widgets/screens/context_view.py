"""`ContextScreen`: what the model gets at one leaf (key `c`), and how the context grew along the path.

On top, a plot of the context size (Pi 1.6's estimateProjectedContextTokens) at every entry of root → leaf,
compactions marked and the model's window drawn where Pi's registry knows it. Below, the exact message list of
`build_context` (Pi 1.6's projection), one row per message: role, entry, Pi's estimate, tiktoken cl100k and a
running total; compaction and branch summaries stand out. The collapsed system head (what a request carries
as its prompt and tools) is the first row; the system messages it folds stay in place, dimmed and not added
to the total. A message a context edit replaced names the edit; an entry an edit omits has a dim row of its
own. tiktoken counts come from a cancellable thread worker that fills the column in batches with a progress
bar. Enter closes the screen on the selected row's entry (the app selects it in the tree); Esc closes it
where it was.
"""

from __future__ import annotations

import time

from pitree.cli.report import head_tiktoken, tiktoken_counts
from pitree.session.context import Projected, SessionContext, build_context
from pitree.session.context_curve import CurvePoint, context_curve
from pitree.session.entries import Node
from pitree.session.text import count as count_of
from pitree.session.text import extract_content, make_safe, normalize
from pitree.session.tree import SessionTree
from pitree.store.model_info import context_window
from pitree.store.session_file import EntryReader, SessionFileError
from pitree.widgets import explorer_status
from pitree.widgets.render.context_head import context_head
from pitree.widgets.render.plot import context_plot
from pitree.widgets.screens.table_keys import TABLE_KEYS
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, ProgressBar, Static
from textual.worker import get_current_worker

BATCH = 64  # messages per tiktoken batch at least: one progress step, and a cancel check between batches
BATCHES = 200  # batches at most, for a big context (each redraws cells and the bar)
HEAD_EVERY = 0.25  # seconds between two redraws of the head while counting
ROW_BATCH = 400  # table rows added per turn of the event loop
SUMMARY_ROLES = {"compactionSummary": "magenta", "branchSummary": "yellow"}


class ContextPlot(Widget):
    """The context-size plot; redrawn at its own width."""

    DEFAULT_CSS = "ContextPlot { height: 11; }"

    def __init__(self, values: list[int] | None, compactions: list[int], window: int | None, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.values, self.compactions, self.window = values, compactions, window  # values None: being measured

    def render(self) -> Text:
        if self.values is None:
            return Text("measuring the context size along the path …", "dim")
        return context_plot(self.values, self.compactions, self.window, self.size.width, height=self.size.height - 2)


class MessageTable(DataTable[object]):
    """The message list: a row table, so Home/End (and j/k) move the cursor to the first/last row."""

    BINDINGS = TABLE_KEYS


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

    class HeadCounted(Message):
        """Posted by the tiktoken worker once the collapsed system head is counted."""

        def __init__(self, count: int | None) -> None:
            self.count = count
            super().__init__()

    class CountFailed(Message):
        """Posted when the entries could not be re-read for counting."""

        def __init__(self, error: str) -> None:
            self.error = error
            super().__init__()

    class Measured(Message):
        """Posted by the measuring worker (a big session): the context and its curve."""

        def __init__(self, ctx: SessionContext, curve: list[CurvePoint]) -> None:
            self.ctx, self.curve = ctx, curve
            super().__init__()

    def __init__(self, tree: SessionTree, reader: EntryReader, leaf: Node | None) -> None:
        super().__init__()
        self.stree, self.reader, self.leaf = tree, reader, leaf
        self.ctx: SessionContext = SessionContext(leaf=leaf, path=[])  # measured (see `measured`)
        self.measured = False
        self.curve: list[CurvePoint] = []
        self.window: int | None = None
        self.tiktoken: list[int | None] = []
        self.head_count: int | None = None
        self.counted = 0
        self._head_drawn = 0.0
        self.estimate = 0
        self.omitted: list[Projected] = []
        self.rows: list[tuple[str, str]] = []  # (row key, entry id to go to) in display order
        self.replaced: dict[str, str] = {}  # edit id -> the replacement's text, as the model reads it
        if len(tree.nodes) < explorer_status.MEASURE_IN_THREAD:
            self._take(build_context(tree, leaf), context_curve(tree, leaf))

    def _take(self, ctx: SessionContext, curve: list[CurvePoint]) -> None:
        self.ctx, self.curve, self.measured = ctx, curve, True
        model = ctx.model or {}
        self.window = context_window(model.get("provider"), model.get("modelId"))
        self.tiktoken = [None] * len(ctx.messages)
        self.estimate = ctx.tokens  # sums over every message: once, not at each redraw of the head
        self.omitted = ctx.omitted
        self.rows = self._rows()
        self.replaced = self._replacement_texts()

    def compose(self) -> ComposeResult:
        yield Static(self._head() if self.measured else self._measuring(), id="ctx-head")
        yield ContextPlot(None, [], None, id="ctx-plot")
        yield ProgressBar(total=None, show_eta=False, id="ctx-progress")
        yield MessageTable(cursor_type="row", zebra_stripes=True, id="ctx-table")
        yield Footer()

    def _measuring(self) -> Text:
        leaf = self.leaf or self.stree.leaf
        head = Text("Context at ", "bold")
        head.append(make_safe(leaf.id, keep_newlines=False) if leaf else "(empty session)", "bold cyan")
        head.append(f"\nmeasuring: Pi's projection and the size at every entry of the path "
                    f"({self.stree.entry_count:,} entries in the session) …", "dim")
        return head

    @work(thread=True, exclusive=True, group="context-measure", description="Measuring the context",
          exit_on_error=False)
    def _measure(self) -> None:
        worker = get_current_worker()
        ctx = build_context(self.stree, self.leaf)
        if worker.is_cancelled:
            return
        curve = context_curve(self.stree, ctx.leaf, cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(self.Measured(ctx, curve))

    def on_context_screen_measured(self, message: Measured) -> None:
        self._take(message.ctx, message.curve)
        self._show()

    def _show(self) -> None:
        """The measured context on screen: head, plot, then the rows (in turns) and their tiktoken counts."""
        curve = self.curve
        plot = self.query_one(ContextPlot)
        plot.values = [p.tokens for p in curve]
        plot.compactions = [i for i, p in enumerate(curve) if p.compaction]
        plot.window = self.window
        plot.refresh()
        self.query_one("#ctx-head", Static).update(self._head())
        self.query_one(ProgressBar).update(total=max(1, len(self.ctx.messages)), progress=0)
        self._fill()

    def _replacement_texts(self) -> dict[str, str]:
        edits = list({id(m.edit): m.edit for m in self.ctx.messages if m.edit is not None}.values())
        try:
            entries = self.reader.entries(edits) if edits else []
        except SessionFileError:
            return {}  # the rows fall back to the original text, marked
        out = {}
        for node, entry in zip(edits, entries, strict=True):
            replacement = entry.get("replacement")
            content = replacement.get("content") if isinstance(replacement, dict) else None
            out[node.id] = normalize(extract_content(content))
        return out

    def _head(self) -> Text:
        ctx = self.ctx
        total = None
        if self.counted >= len(ctx.messages):
            sent = zip(self.tiktoken, ctx.messages, strict=True)
            total = sum(c or 0 for c, m in sent if not m.excluded and m.role != "system") + (self.head_count or 0)
        return context_head(ctx, self.window, self.estimate, len(self.omitted), self.counted, total)

    def _rows(self) -> list[tuple[str, str]]:
        """The table's rows: the system head, then the messages with each omitted entry where it would be."""
        ctx = self.ctx
        rows: list[tuple[str, str]] = []
        omitted = {id(p) for p in self.omitted}
        if ctx.head.exists and ctx.head.sources:
            rows.append(("head", ctx.head.sources[0].node.id))
        i = 0
        for j, projected in enumerate(ctx.entries):
            if not projected.messages and projected.edit is not None and id(projected) in omitted:
                rows.append((f"omit{j}", projected.node.id))
            for _ in projected.messages:
                rows.append((str(i), ctx.messages[i].node.id))
                i += 1
        return rows

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
        if self.measured:
            self._show()
        else:
            self._measure()

    def _fill(self) -> None:
        """Add the next ROW_BATCH rows, then yield to the event loop: 9,000 messages never freeze the screen."""
        table = self.query_one(DataTable)
        stop = min(len(self.rows), self._rows_added + ROW_BATCH)
        for key, _ in self.rows[self._rows_added : stop]:
            table.add_row(*self._cells(key), key=key)
        self._rows_added = stop
        if stop < len(self.rows):
            self.call_after_refresh(self._fill)
            return
        if self.rows and table.cursor_row == 0:  # start at the leaf, unless the user moved meanwhile
            table.move_cursor(row=len(self.rows) - 1)
        self.count_tokens()  # once every row exists: the counts fill cells by row key

    def _cells(self, key: str) -> tuple[Text, ...]:
        """One row's cells. Entry ids and texts come from the file: plain `Text`, made safe, never markup."""
        ctx = self.ctx
        if key == "head":
            self._running_total += ctx.head.tokens
            names = ", ".join(str(name) for name in ctx.head.sections) or "no sections"
            about = f"collapsed system prompt: {names}; {count_of(len(ctx.head.tools), 'tool')}"
            return (
                Text("·", "dim"),
                Text("system head", "bold cyan"),
                Text(count_of(len(ctx.head.sources), "msg", "msgs"), "dim"),
                Text(f"{ctx.head.tokens:,}", justify="right"),
                Text("…", "dim", justify="right"),
                Text(f"{self._running_total:,}", justify="right"),
                Text(make_safe(about, keep_newlines=False)[:160], "cyan"),
            )
        if key.startswith("omit"):
            projected = ctx.entries[int(key[4:])]
            edit = projected.edit.id if projected.edit is not None else "?"
            return (
                Text("–", "dim"),
                Text("omitted", "dim yellow"),
                Text(make_safe(projected.node.id, keep_newlines=False), "dim"),
                Text("0", "dim", justify="right"),
                Text("", justify="right"),
                Text(f"{self._running_total:,}", "dim", justify="right"),
                Text(f"omitted by context edit {make_safe(edit, keep_newlines=False)}", "dim yellow"),
            )
        i = int(key)
        m = ctx.messages[i]
        folded = m.role == "system"  # counted in the head row
        if not m.excluded and not folded:
            self._running_total += m.tokens
        role = Text(m.role, SUMMARY_ROLES.get(m.role, "dim" if folded else ""))
        if m.excluded:
            role.append(" (excluded)", "dim")
        if folded:
            role.append(" (checkpoint, in head)" if m.checkpoint else " (in head)", "dim")
        shown = self.stree.context_text(m.node) if not m.checkpoint else "[checkpoint of the compaction]"
        body = Text(make_safe(shown, keep_newlines=False)[:160], SUMMARY_ROLES.get(m.role, "dim" if folded else ""))
        if m.edit is not None:
            new = self.replaced.get(m.edit.id)
            if new is not None:
                body = Text(make_safe(f"{m.role}: {new}", keep_newlines=False)[:160])
            else:
                body.append(" (original text: the edit could not be read)", "dim")
            body = Text.assemble((f"✎ replaced by {make_safe(m.edit.id, keep_newlines=False)}: ", "yellow"), body)
        return (
            Text(str(i + 1), "dim"),
            role,
            Text(make_safe(m.node.id, keep_newlines=False)),
            Text(f"{m.tokens:,}", "dim" if folded else "", justify="right"),
            Text("…", "dim", justify="right"),
            Text(f"{self._running_total:,}", justify="right"),
            body,
        )

    @work(thread=True, exclusive=True, group="context-count", description="Counting tokens", exit_on_error=False)
    def count_tokens(self) -> None:
        worker = get_current_worker()
        messages = self.ctx.messages
        batch = max(BATCH, len(messages) // BATCHES)
        for start in range(0, len(messages), batch):
            if worker.is_cancelled:
                return
            part = SessionContext(leaf=None, path=[], messages=messages[start : start + batch])
            try:
                counts = tiktoken_counts(self.reader, part)
            except SessionFileError as exc:
                self.post_message(self.CountFailed(str(exc)))
                return
            if worker.is_cancelled:
                return
            self.post_message(self.Counted(start, counts))
        if self.ctx.head.exists:
            try:
                self.post_message(self.HeadCounted(head_tiktoken(self.reader, self.ctx)))
            except SessionFileError as exc:
                self.post_message(self.CountFailed(str(exc)))

    def on_context_screen_head_counted(self, message: HeadCounted) -> None:
        self.head_count = message.count
        if message.count is not None and any(key == "head" for key, _ in self.rows):
            self.query_one(DataTable).update_cell("head", "tik", Text(f"{message.count:,}", justify="right"))
        self.query_one("#ctx-head", Static).update(self._head())

    def on_context_screen_counted(self, message: Counted) -> None:
        table = self.query_one(DataTable)
        for offset, count in enumerate(message.counts):
            i = message.start + offset
            self.tiktoken[i] = count
            table.update_cell(str(i), "tik", Text(f"{count:,}", justify="right"))
        self.counted = message.start + len(message.counts)
        self.query_one(ProgressBar).update(progress=self.counted)
        done = self.counted >= len(self.ctx.messages)
        if done:
            self.query_one(ProgressBar).display = False
        now = time.monotonic()
        if done or now - self._head_drawn >= HEAD_EVERY:  # the bar shows the progress; the head now and then
            self._head_drawn = now
            self.query_one("#ctx-head", Static).update(self._head())

    def on_context_screen_count_failed(self, message: CountFailed) -> None:
        self.notify(message.error, title="tiktoken count stopped", severity="error")

    def action_close(self) -> None:
        self.workers.cancel_group(self, "context-measure")
        self.workers.cancel_group(self, "context-count")
        self.dismiss(None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_select_entry()

    def action_select_entry(self) -> None:
        table = self.query_one(DataTable)
        if not self.rows:
            return
        self.workers.cancel_group(self, "context-count")
        self.dismiss(self.rows[table.cursor_row][1])
