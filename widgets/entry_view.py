"""`EntryView`: the selected entry in full (the right pane), read back from its byte offset in a worker.

`show(node, tree, reader)` puts the header (from the compact `Node`) and "loading…" up at once; a thread
worker re-reads the entry, builds its parts with `pitree.widgets.render.entry` and posts them back, with what a context
edit on the active path does to the entry (a line under the header that goes to the edit); a second
message brings the tiktoken count, when `exact_tokens` is set or the encoder is built anyway (its tables
cost as much memory as a mid-sized session's tree, so the app leaves it off for big sessions until
`count_exactly()`). `toggle_raw()` switches
to the stored line pretty-printed (the mode stays on for the next entries until toggled off). Folds become
collapsed `Collapsible`s, so long output costs nothing until it is opened. `o` (or a click) on a line naming
another entry posts `EntryLink.Chosen`; the app moves the tree there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pitree.session.edits import PathEdits, leaf_edits
from pitree.session.entries import Node
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, SessionFileError
from pitree.summary.tokens import count_text, encoder_built
from pitree.widgets.entry_link import EntryLink
from pitree.widgets.render.entry import Fold, GoTo, Part, entry_parts, raw_parts, token_text
from pitree.widgets.render.entry_header import header
from pitree.widgets.render.pi1 import edit_note
from rich.console import RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.await_remove import AwaitRemove
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import AwaitMount, Widget
from textual.widgets import Collapsible, Static
from textual.worker import get_current_worker

NOT_COUNTED = "press t to count"  # the header's tiktoken note while exact counts are off
TOKEN_CHUNK = 16_000  # characters per tiktoken call: it holds the GIL, so the UI waits for one chunk at most


def count_tokens(text: str, cancelled: Callable[[], bool] = lambda: False) -> int | None:
    """Exact cl100k count of `text`, a chunk at a time; None as soon as `cancelled()` turns true.

    Chunks end after a newline followed by a non-space character: no tiktoken piece spans such a
    boundary, so the sum equals the count of the whole text. Between chunks the thread sleeps for a moment
    so the event loop gets the GIL back.
    """
    total = 0
    start = 0
    size = len(text)
    while start < size:
        if cancelled():
            return None
        end = start + TOKEN_CHUNK
        if end < size:
            end = _chunk_end(text, start, end)
        total += count_text(text[start:end])
        start = end
        if start < size:
            time.sleep(0.0005)
    return total


def _chunk_end(text: str, start: int, end: int) -> int:
    pos = end
    while True:
        pos = text.rfind("\n", start, pos)
        if pos <= start:
            return end if pos < 0 or pos == start else pos + 1
        if not text[pos + 1].isspace():
            return pos + 1


class EntryView(VerticalScroll, can_focus=True):
    """Shows one entry in full. The app calls `show` on every selection and `toggle_raw` for `r`."""

    BINDINGS = [Binding("o", "go_to", "Go to the entry named here", show=False)]

    DEFAULT_CSS = """
    EntryView { padding: 0 1; background: $surface; }
    EntryView > #entry-top { height: auto; margin-bottom: 1; border-bottom: solid $primary-background; }
    EntryView #entry-note { display: none; }
    EntryView > #entry-body { height: auto; }
    EntryView #entry-body > Static { margin-bottom: 1; }
    EntryView #entry-body > Collapsible { margin-bottom: 1; padding-bottom: 0; }
    EntryView .loading { color: $text-muted; text-style: italic; }
    """

    class Loaded(Message, bubble=False):
        """Posted by the worker when an entry's parts are ready."""

        def __init__(
            self,
            request: int,
            parts: list[Part],
            stop_reason: Any,
            tokens: str | None,
            painted: threading.Event,
            note: GoTo | None = None,
        ) -> None:
            # tokens: what the header says of the tiktoken count until it comes ("counting…"), or instead of it
            self.request, self.parts, self.stop_reason, self.tokens = request, parts, stop_reason, tokens
            self.painted = painted  # set once the parts are on screen
            self.note = note  # what a context edit on the active path does to the entry, with a link to the edit
            super().__init__()

    class Counted(Message, bubble=False):
        """Posted by the worker when the tiktoken count is done (`tokens`: the count, or why there is none)."""

        def __init__(self, request: int, tokens: int | str) -> None:
            self.request, self.tokens = request, tokens
            super().__init__()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.node: Node | None = None
        self.raw = False
        self.loading = False  # true from `show` until the worker's parts are on screen
        self.tokens: int | str | None = None  # tiktoken count of the shown entry ("counting…" meanwhile)
        self.exact_tokens = True  # count the shown entry with tiktoken (set by the app, per session)
        self._tree: SessionTree | None = None
        self._reader: EntryReader | None = None
        self._request = 0  # bumped by every show, so a late worker result for an older one is dropped
        self._stop_reason: Any = None
        self._fold_bodies: dict[Collapsible, tuple[RenderableType, ...]] = {}  # folds not opened yet
        self._ready = False  # composed children exist (a `show` before that waits for on_mount)
        # The active path's context edits, computed by a worker once per tree change: (tree, generation, edits)
        self._edits: tuple[SessionTree, int, PathEdits | None] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="entry-top"):
            yield Static(Text("No entry selected.", "dim"), id="entry-head", markup=False)
            yield EntryLink(GoTo("", Text()), id="entry-note")
        yield Vertical(id="entry-body")

    def on_mount(self) -> None:
        self._ready = True
        self.set_interval(30, self._tick, name="entry relative time")
        if self.node is not None:
            self._load_current()

    # ---- the app's API ------------------------------------------------------------------------------------

    def show(self, node: Node | None, tree: SessionTree, reader: EntryReader) -> None:
        """Show `node` (None: nothing). Re-showing the shown entry only refreshes its header."""
        same = node is not None and node is self.node and reader is self._reader and tree is self._tree
        self.node, self._tree, self._reader = node, tree, reader
        if same:
            if not self.loading:
                self._update_head()  # a label, the leaf or "… ago" may have changed; the entry has not
            return
        self._load_current()

    def forget(self) -> None:
        """Show nothing and drop the session (another one is being opened)."""
        self.node, self._tree, self._reader = None, None, None
        self._edits = None  # holds the tree: the session left must be freed
        self._load_current()

    def count_exactly(self) -> None:
        """Count with tiktoken from now on, the shown entry at once (its encoder is built on first use)."""
        self.exact_tokens = True
        if self.node is not None and not isinstance(self.tokens, int):
            self._load_current()

    def toggle_raw(self) -> None:
        """Switch between the rendered entry and its stored line, pretty-printed."""
        self.raw = not self.raw
        self._load_current()

    # ---- loading ------------------------------------------------------------------------------------------

    def _load_current(self) -> None:
        if not self._ready:
            return  # on_mount shows it
        self._request += 1
        self._stop_reason = None
        self.tokens = None
        node, tree, reader = self.node, self._tree, self._reader
        if node is None or tree is None or reader is None:
            self.loading = False
            self.workers.cancel_group(self, "entry")
            self.query_one("#entry-head", Static).update(Text("No entry selected.", "dim"))
            self._set_body([])
            return
        self.loading = True
        self._update_head()
        self._set_note(None)
        self._set_body([Static(Text(f"loading line {node.line:,} …"), classes="loading", markup=False)])
        self._load(self._request, node, tree, reader, self.raw, self.exact_tokens or encoder_built())

    @work(thread=True, exclusive=True, group="entry", description="reading the selected entry", exit_on_error=False)
    def _load(self, request: int, node: Node, tree: SessionTree, reader: EntryReader, raw: bool, exact: bool) -> None:
        worker = get_current_worker()
        entry: Any = None
        stop_reason: Any = None
        note: GoTo | None = None
        try:
            if raw:
                parts = raw_parts(reader.raw(node))
            else:
                edits = self._path_edits(tree, reader)
                note = edit_note(node, edits)
                entry = reader.entry(node)
                parts = entry_parts(entry, tree, edits)
                if node.type == "compaction":
                    from pitree.cli.report import compaction_audit
                    from pitree.widgets.render.audit import audit_parts

                    parts = [*audit_parts(compaction_audit(tree, node, reader, exact=exact)), *parts]
                msg = entry.get("message")
                if isinstance(msg, dict) and msg.get("role") == "assistant":
                    stop_reason = msg.get("stopReason")
        except SessionFileError as exc:
            parts = [Text(make_safe(str(exc)), "bold red")]
        except Exception as exc:  # a bad entry must never take the explorer down
            parts = [
                Text(f"pitree could not show this entry ({type(exc).__name__}: {make_safe(str(exc))})", "bold red")
            ]
        if not raw and entry is None:
            parts.append(Text("the raw line may still show (r)", "dim"))
        text = token_text(entry)
        entry = None  # a 50 MB entry should not outlive its parts
        if worker.is_cancelled:
            return
        painted = threading.Event()
        tokens_note = None if not text else "counting…" if exact else NOT_COUNTED
        self.post_message(self.Loaded(request, parts, stop_reason, tokens=tokens_note, painted=painted, note=note))
        if text and exact:
            # Counting holds the GIL in bursts; start once the entry is on screen so it never delays that.
            while not painted.wait(0.05):
                if worker.is_cancelled:
                    return
            try:
                tokens: int | str | None = count_tokens(text, lambda: worker.is_cancelled)
            except Exception as exc:  # no encoder (a broken tiktoken install, say): say so instead of "counting…"
                tokens = f"unavailable ({make_safe(f'{type(exc).__name__}: {exc}', keep_newlines=False)[:80]})"
            if tokens is not None and not worker.is_cancelled:
                self.post_message(self.Counted(request, tokens))

    async def on_entry_view_loaded(self, message: Loaded) -> None:
        if message.request != self._request:
            message.painted.set()
            return
        self._stop_reason = message.stop_reason
        self.tokens = message.tokens
        self._update_head()
        self._set_note(message.note)
        removed, mounted = self._set_body([self._widget(part) for part in message.parts])
        await removed  # `loading` stays true until the old body is gone and the new one mounted
        if mounted is not None:
            await mounted
        if message.request != self._request:  # another entry was asked for meanwhile
            message.painted.set()
            return
        self.loading = False
        self.scroll_home(animate=False)
        self.call_after_refresh(message.painted.set)

    def on_entry_view_counted(self, message: Counted) -> None:
        if message.request == self._request:
            self.tokens = message.tokens
            self._update_head()

    # ---- drawing ------------------------------------------------------------------------------------------

    def _tick(self) -> None:
        if not self.loading:
            self._update_head()

    def _update_head(self) -> None:
        if self.node is None or self._tree is None:
            return
        head = header(self.node, self._tree, stop_reason=self._stop_reason, tokens=self.tokens)
        if self.raw:
            head.append("\nraw line as stored (r: back to the entry view)", "bold yellow")
        self.query_one("#entry-head", Static).update(head)

    def _path_edits(self, tree: SessionTree, reader: EntryReader) -> PathEdits | None:
        """The active path's context edits (worker thread), from the cache while the tree is unchanged. None
        when the edit entries could not be read (the file changed): the entry still shows, without notes."""
        cached = self._edits
        if cached is not None and cached[0] is tree and cached[1] == tree.generation:
            return cached[2]
        generation = tree.generation
        try:
            edits: PathEdits | None = leaf_edits(tree, reader.entries)
        except SessionFileError:
            edits = None
        self._edits = (tree, generation, edits)
        return edits

    def _set_note(self, note: GoTo | None) -> None:
        link = self.query_one("#entry-note", EntryLink)
        link.display = note is not None
        if note is not None:
            link.entry_id = note.entry_id
            link.update(note.text)

    def action_go_to(self) -> None:
        """Go to the entry the pane names first: the edit that changes this entry, else a link in the body."""
        for link in self.query(EntryLink):
            if link.display and link.entry_id:
                link.choose()
                return
        self.notify("this entry names no other entry to go to", severity="information")

    def _widget(self, part: Part) -> Widget:
        if isinstance(part, GoTo):
            return EntryLink(part)
        if not isinstance(part, Fold):
            return Static(part, markup=False)
        # Session text in a title goes in as Content: a str title would be parsed as markup.
        title: Any = part.title if part.label is None else Content(part.title) + Content.from_text(part.label)
        if not part.collapsed:
            return Collapsible(*(Static(p, markup=False) for p in part.body), title=title, collapsed=False)
        # A collapsed body is mounted when first opened: Textual measures hidden children too.
        fold = Collapsible(title=title, collapsed=True)
        self._fold_bodies[fold] = part.body
        return fold

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        body = self._fold_bodies.pop(event.collapsible, None)
        if body is not None:
            contents = event.collapsible.query_one(Collapsible.Contents)
            contents.mount_all([Static(p, markup=False) for p in body])

    def _set_body(self, widgets: list[Widget]) -> tuple[AwaitRemove, AwaitMount | None]:
        body = self.query_one("#entry-body", Vertical)
        removed = body.remove_children()
        self._fold_bodies = {fold: b for fold, b in self._fold_bodies.items() if fold in widgets}
        return removed, body.mount_all(widgets) if widgets else None
