"""A `BranchDiff` as rows of two cells (A | B), the one layout that the terminal table (`pitree diff`), the compare
screen and the Markdown export draw: first the figures (entries, tokens, cost, time, context, files, last answer),
then one row per turn, aligned by index.

A cell is a list of lines, each a (style, text) pair; the text is session text, made safe by whoever draws it
(Rich `Text`, escaped Markdown). Each row names the entry that Enter goes to on either side.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from pitree.ops.diff import BranchDiff
from pitree.ops.diff_turns import Side, Turn
from pitree.session.context import ContextSize
from pitree.session.text import count

Line = tuple[str, str]  # (style: "", "dim", "bold", "error", "ok", "event", "user"; text)
ANSWER_CHARS = 100  # an answer is folded to its first line, cut here
ANSWERS_SHOWN = 3
CALLS_SHOWN = 10
FILES_SHOWN = 12


@dataclass(slots=True)
class Row:
    """One line of the comparison: a label, a cell per side, and the entry each cell stands for."""

    label: str
    a: list[Line] = field(default_factory=list)
    b: list[Line] = field(default_factory=list)
    a_id: str | None = None
    b_id: str | None = None
    turn: int | None = None  # the turn index, for turn rows

    def target(self, side: str) -> str | None:
        return self.a_id if side == "a" else self.b_id


def fold(text: str, limit: int = ANSWER_CHARS) -> str:
    """The first non-blank line of `text`, cut to `limit` characters."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    more = len(first) > limit or first != text.strip()
    return first[:limit] + ("…" if more else "")


def excerpt(text: str, lines: int = 6, width: int = 160) -> list[str]:
    """The first `lines` non-blank lines of `text`, each cut to `width` (for the last answer)."""
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    out = [line[:width] + ("…" if len(line) > width else "") for line in kept[:lines]]
    if len(kept) > lines:
        out.append(f"… {len(kept) - lines} more lines")
    return out


def tokens_text(n: float) -> str:
    return f"{int(n):,}" if n == n and abs(n) < 2**63 else str(n)


def duration_text(ms: float | None) -> str:
    if ms is None:
        return "—"
    s = int(ms // 1000)
    if s < 60:
        return f"{ms / 1000:.1f}s"
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h {m:02d}m" if h else f"{m}m {s:02d}s"


def context_text(ctx: ContextSize) -> str:
    if ctx.usage_node is None:
        return f"{ctx.tokens:,} tokens (estimated)"
    return f"{ctx.tokens:,} tokens ({ctx.usage_tokens:,} from {ctx.usage_node.id} + {ctx.trailing_tokens:,})"


def common_root(paths: list[str]) -> str | None:
    """The folder (two levels deep or more) that the absolute file paths are under, if there is one: the rows
    show paths under it as `…/rest`, so that two columns of long absolute paths stay readable. A path that is a
    folder of the others (a `read` of a directory) does not pull the root up."""
    absolute = sorted({p for p in paths if p.startswith("/")})
    files = [p for p in absolute if not any(q.startswith(p.rstrip("/") + "/") for q in absolute)]
    if len(files) < 2:
        return None
    try:
        root = os.path.commonpath(files)
    except ValueError:
        return None
    return root if root.count("/") >= 2 else None


def shortener(root: str | None) -> Callable[[str], str]:
    if root is None:
        return lambda text: text
    prefix = root + "/"
    return lambda text: text.replace(prefix, "…/")


def turn_cell(turn: Turn | None, short: Callable[[str], str] = lambda text: text) -> list[Line]:
    """A turn as lines: the request, the answers folded, the tool calls marked ✓/✗, compactions and summaries."""
    if turn is None:
        return [("dim", "—")]
    lines: list[Line] = []
    if turn.request is not None:
        lines.append(("user", "› " + fold(turn.request, 160)))
    else:
        lines.append(("dim", "(no request: continues the turn before the split)"))
    for _, text in turn.events:
        lines.append(("event", "◆ " + fold(text)))
    for _, text in turn.answers[:ANSWERS_SHOWN]:
        lines.append(("", "  " + fold(text)))
    if len(turn.answers) > ANSWERS_SHOWN:
        lines.append(("dim", f"  … {len(turn.answers) - ANSWERS_SHOWN} more answers"))
    for call in turn.calls[:CALLS_SHOWN]:
        mark, style = ("✗", "error") if call.error else ("·", "dim") if call.result_id is None else ("✓", "ok")
        lines.append((style, f"  {mark} {short(call.text)}"))
    if len(turn.calls) > CALLS_SHOWN:
        hidden = turn.calls[CALLS_SHOWN:]
        errors = sum(1 for c in hidden if c.error)
        lines.append(("dim", f"  … {len(hidden)} more tool calls" + (f" ({errors} errors)" if errors else "")))
    figures = f"  {count(turn.entries, 'entry', 'entries')}"
    if turn.tokens:
        figures += f", {tokens_text(turn.tokens)} tokens, ${turn.cost:.4f}"
    if turn.errors:
        figures += f", {count(turn.errors, 'error')}"
    lines.append(("dim", figures))
    return lines


def _files(paths: list[str], only: list[str], short: Callable[[str], str]) -> list[Line]:
    if not paths:
        return [("dim", "none")]
    shown = paths[:FILES_SHOWN]
    lines: list[Line] = [("bold", short(p) + " *") if p in only else ("", short(p)) for p in shown]
    if len(paths) > FILES_SHOWN:
        lines.append(("dim", f"  … {len(paths) - FILES_SHOWN} more"))
    return lines


def _entries(side: Side) -> str:
    return f"{count(side.entries, 'entry', 'entries')}, {count(side.turn_count, 'turn')}"


def _calls(side: Side) -> str:
    return f"{count(side.calls, 'call')}, {count(side.errors, 'error')}"


def rows(diff: BranchDiff) -> list[Row]:
    """The figures, then the turns."""
    a, b = diff.side_a, diff.side_b
    only = diff.files_only()
    out = [
        Row("end", [("bold", diff.texts["a"])], [("bold", diff.texts["b"])], diff.a.id, diff.b.id),
        Row("entries", *_pair(a, b, _entries), diff.a.id, diff.b.id),
    ]
    out.append(Row("tool calls", *_pair(a, b, _calls), diff.a.id, diff.b.id))
    out.append(Row("tokens", *_pair(a, b, lambda s: f"{tokens_text(s.tokens)} tokens, ${s.cost:.4f}")))
    out.append(Row("time", *_pair(a, b, lambda s: duration_text(s.duration_ms))))
    ctx_a, ctx_b = [("", context_text(diff.context_a))], [("", context_text(diff.context_b))]
    out.append(Row("context at the end", ctx_a, ctx_b, diff.a.id, diff.b.id))
    for label, attr in (("compactions", "compactions"), ("summaries", "summaries")):
        ca, cb = getattr(a, attr), getattr(b, attr)
        if ca or cb:
            out.append(
                Row(
                    label,
                    [("event", fold(t)) for _, t in ca] or [("dim", "none")],
                    [("event", fold(t)) for _, t in cb] or [("dim", "none")],
                    ca[0][0] if ca else None,
                    cb[0][0] if cb else None,
                )
            )
    ra, ma = a.files.lists()
    rb, mb = b.files.lists()
    root = common_root(ra + ma + rb + mb)
    short = shortener(root)
    if root is not None:
        out.append(Row("paths under", [("dim", root + "/ (…/)")], [("dim", root + "/ (…/)")]))
    out.append(Row("only read", _files(ra, only["a"]["read"], short), _files(rb, only["b"]["read"], short)))
    out.append(Row("modified", _files(ma, only["a"]["modified"], short), _files(mb, only["b"]["modified"], short)))
    out.append(
        Row(
            "last answer",
            [("", t) for t in excerpt(a.last_answer[1])] if a.last_answer else [("dim", "none")],
            [("", t) for t in excerpt(b.last_answer[1])] if b.last_answer else [("dim", "none")],
            a.last_answer[0] if a.last_answer else None,
            b.last_answer[0] if b.last_answer else None,
        )
    )
    for ta, tb in diff.rows():
        index = ta.index if ta is not None else tb.index if tb is not None else 0
        out.append(
            Row(
                f"turn {index + 1}",
                turn_cell(ta, short),
                turn_cell(tb, short),
                ta.first_id if ta else None,
                tb.first_id if tb else None,
                turn=index,
            )
        )
    return out


def _pair(a: Side, b: Side, text: Callable[[Side], str]) -> tuple[list[Line], list[Line]]:
    return [("", text(a))], [("", text(b))]
