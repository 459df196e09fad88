"""What the explorer says about the open session outside the rows: the status bar's counts and context size
(`session_status`), and the marks a selected compaction puts in the tree's gutter (`compaction_marks`)."""

from __future__ import annotations

from pitree.session.context import ContextSize, build_context, grown_size
from pitree.session.entries import Node
from pitree.session.tree import SessionTree
from pitree.widgets.status_bar import Status

# From this many entries in a session, what walks its active path runs in a thread (the status bar's context size,
# the context view, a selected compaction's split; about a second each at 1M entries, the view's curve several),
# and its other filters are prepared a moment after its first screen (`explorer.PREPARE_AFTER`).
MEASURE_IN_THREAD = 20_000


def session_status(
    tree: SessionTree,
    before: Status | None,
    context_size: ContextSize | None,
    grown: list[Node] | None = None,
    context: bool = True,
) -> tuple[dict[str, object], ContextSize | None]:
    """The status bar's fields from the tree, and Pi's context size at the leaf to keep for next time.

    `grown`: entries that only extended the leaf, so the branch count stays and the context size grows by theirs
    (no walk over the tree or the path at 100k entries). `context=False` leaves the context size as it is (the
    first screen; it follows right after)."""
    leaf = tree.leaf
    branches = before.branches if grown and before else tree.leaf_count()
    size = None
    if grown and context_size is not None and tree.dialect == "pi":  # omp's rules look back: rebuild
        size = grown_size(context_size, grown)
    if size is None and context:
        size = build_context(tree, None).size  # Pi's estimateProjectedContextTokens at the leaf
    if size is not None:
        context_size = size
    tokens = size.tokens if size is not None else before.context_tokens if before is not None else None
    fields: dict[str, object] = {
        "name": tree.name,
        "entries": tree.entry_count,
        "branches": branches,
        "leaf": leaf.id if leaf else None,
        "skipped": len(tree.skipped),
        "context_tokens": tokens,
    }
    return fields, context_size


def compaction_marks(tree: SessionTree, node: Node | None) -> tuple[dict[str, str], str]:
    """A selected compaction marks, in the tree, the entries it summarized and those it kept; with the legend
    for the status bar. Any other entry: no marks."""
    marks: dict[str, str] = {}
    legend = ""
    if node is not None and node.type == "compaction":
        from pitree.cli.report import compaction_split

        split = compaction_split(tree, node)
        marks = {m.node.id: "summarized" for m in split.summarized + split.dropped}
        marks.update((m.node.id, "kept") for m in split.kept)
        legend = f"▒ summarized {len(split.summarized)} · ▌ kept {len(split.kept)}"
        if split.dropped:  # Pi 1.x: system messages never stay; the checkpoint replays them
            legend += f" · ▒ system dropped {len(split.dropped)}"
        if split.retain_none:
            legend += " (retain-none)"
        elif not split.first_kept_on_path:
            legend += " (first kept entry not on the path)"
    return marks, legend
