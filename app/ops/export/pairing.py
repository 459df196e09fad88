"""Which tool result an export folds under which tool call (`Pairing`): the first tool result with a call's id
after an assistant turn on the path made a call with it (`exact`, a dict of call ids).

A million-entry path holds ~0.5M of them, and that dict ~20 MB. In the usual session every call id is made by
one turn of the whole file, and each of its results on the path lies at most NEAR entries below that turn; one
walk over the path checks it (`_near`), and then nothing is kept: a result is paired when no other result with
its id lies between it and the turn that made the call (a walk up), and a call's result is the first with its
id among the NEAR entries after the turn (a look ahead). Anything else (an id made twice, a result far from its
call or before it) is paired by `exact`.
"""

from __future__ import annotations

from pitree.session.entries import Node
from pitree.session.tree import SessionTree

NEAR = 256  # entries a tool result may be below the turn that made its call for `_near` (parallel calls: tens)


def exact(path: list[Node]) -> dict[str, Node]:
    """Each call id's folded result on `path`."""
    results: dict[str, Node] = {}
    seen: set[str] = set()  # the call ids made so far on the path
    for node in path:
        if node.type != "message":
            continue
        if node.role == "assistant":
            seen.update(c for c in node.call_ids() if isinstance(c, str))
        elif node.role == "toolResult":
            call_id = node.call_id
            if isinstance(call_id, str) and call_id in seen and call_id not in results:
                results[call_id] = node
    return results


def _maker(tree: SessionTree, call_id: str) -> Node | None:
    maker = tree.calls.get(call_id)
    return maker if isinstance(maker, Node) else None


def _near(tree: SessionTree, path: list[Node]) -> bool:
    """Whether every call id on `path` is made by the one turn the tree knows made it, and every result answering
    a call some turn made lies at most NEAR entries below that turn."""
    calls = tree.calls
    for node in path:
        if node.type != "message":
            continue
        if node.role == "assistant":
            if any(isinstance(c, str) and calls.get(c) is not node for c in node.call_ids()):
                return False  # made twice, or kept as (id, text) pairs without the turn
        elif node.role == "toolResult":
            call_id = node.call_id
            if not isinstance(call_id, str) or call_id not in calls:
                continue  # no turn anywhere made it: never paired
            maker = _maker(tree, call_id)
            up, steps = node.parent, 0
            while up is not None and up is not maker and steps < NEAR:
                up, steps = up.parent, steps + 1
            if maker is None or up is not maker:
                return False
    return True


class Pairing:
    """`paired(node)`: the tool result is folded under its call; `result_of(call_id, i)`: the result folded under
    the call `call_id` of the turn at `path[i]` (None: no result on the path)."""

    def __init__(self, tree: SessionTree, path: list[Node]) -> None:
        self.tree, self.path = tree, path
        self.results: dict[str, Node] | None = None if _near(tree, path) else exact(path)

    def paired(self, node: Node) -> bool:
        call_id = node.call_id
        if not isinstance(call_id, str):
            return False
        if self.results is not None:
            return self.results.get(call_id) is node
        maker = _maker(self.tree, call_id)
        if maker is None:
            return False
        up = node.parent
        while up is not None and up is not maker:
            if up.call_id == call_id and up.type == "message":
                return False  # an earlier result answers it
            up = up.parent
        return up is maker

    def result_of(self, call_id: str, i: int) -> Node | None:
        if self.results is not None:
            return self.results.get(call_id)
        for node in self.path[i + 1 : i + 2 + NEAR]:
            if node.call_id == call_id and node.type == "message":
                return node
        return None
