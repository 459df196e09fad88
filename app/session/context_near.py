"""`near_context`: `build_context(tree, leaf)` read from the part of the path Pi's selection uses, for the
compaction audits, which build two contexts per compaction.

Pi sends the last compaction of the path, its kept range and what follows; nothing above the first kept entry
counts except the model and thinking level, found by walking further up. `build_context` lists the whole path
root -> leaf first: a million-entry session's 200 compactions took ~25 s to audit that way. Here the path is
walked up only to the first kept entry (the whole path when there is no compaction), and the settings walk
stops at an entry whose settings an earlier call found (`context.Settings`), so audits in file order walk each
stretch once. The context is `build_context`'s but for its `path`, which holds only that part.
"""

from __future__ import annotations

from pitree.session.context import SessionContext, Settings, build_context, kept_range, project_path
from pitree.session.dialect_omp import OMP
from pitree.session.entries import Node
from pitree.session.tree import SessionTree


def near_path(leaf: Node) -> list[Node]:
    """The end of root -> `leaf` that `context.select` reads: from the last compaction's first kept entry (the
    compaction itself when that entry is not above it) to `leaf`; the whole path when there is no compaction."""
    path: list[Node] = []
    node: Node | None = leaf
    while node is not None and node.type != "compaction":
        path.append(node)
        node = node.parent
    if node is not None:
        path.append(node)
        first_kept = node.meta.get("firstKeptEntryId") if node.meta else None
        if first_kept != node.id:  # else retain-none: no id repeats on a path, so no walk to the root to learn it
            path.extend(kept_range(node, first_kept) or ())
    path.reverse()
    return path


def near_context(tree: SessionTree, leaf: Node | None, found: Settings | None = None) -> SessionContext:
    """`build_context(tree, leaf)` with `path` = `near_path(leaf)` (oh-my-pi's rules: `build_context` itself).
    `found`: settings found by earlier calls, shared by the calls of one audit of many compactions."""
    if leaf is None:
        leaf = tree.leaf
    if leaf is None or tree.dialect == OMP:
        return build_context(tree, leaf)
    path = near_path(leaf)
    ctx = SessionContext(leaf=leaf, path=path)
    (found or Settings()).find(ctx, leaf)
    return project_path(ctx, path)
