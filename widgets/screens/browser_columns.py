"""Which columns the sessions browser shows at a width: all of them when they fit; on a narrow terminal the
least useful go first, so the numbers stay on screen instead of scrolling off to the right; and the texts of
every cell of a session's row and of a search hit's, as `Text` made safe (titles, paths and ids come from the
session files)."""

from __future__ import annotations

import time
from pathlib import Path

from pitree.session.summary_info import SessionInfo
from pitree.session.text import human_size, make_safe
from pitree.store.session_index import SearchHit
from pitree.widgets.screens import rows_table
from rich.text import Text

AGENT_NAMES = {"pi": "pi", "omp": "oh-my-pi"}  # the agent column: which agent wrote the session

# Fixed widths: a table filled while the screen is being shown again would otherwise size columns to nothing.
SESSION_COLUMNS = (
    ("last activity", 13),
    ("session", 60),
    ("cwd", 36),
    ("entries", 8),
    ("branches", 8),
    ("compactions", 11),
    ("size", 9),
    ("agent", 12),
)
HIT_COLUMNS = (("session", 40), ("kind", 10), ("entry", 9), ("match", 100))
PADDING = 2 * rows_table.PADDING  # a cell's padding, both sides
SCROLLBAR = 2
MIN_SESSION, MIN_CWD = 24, 12


def session_columns(width: int, show_all: bool, agents: set[str]) -> list[tuple[str, int]]:
    """The columns (name, width) for a table `width` columns wide. Dropped first: the agent when every session
    is Pi's, the cwd while only the current folder's sessions are listed (it is the same on every row); then
    compactions, branches, agent, cwd, size, entries. The session title and cwd take what is left."""
    if width <= 0:
        return list(SESSION_COLUMNS)
    drop = (["agent"] if agents <= {"pi"} else []) + ([] if show_all else ["cwd"])
    drop += ["compactions", "branches", "agent", "cwd", "size", "entries"]
    shown = [name for name, _ in SESSION_COLUMNS]
    fixed = dict(SESSION_COLUMNS)

    def needed(names: list[str]) -> int:
        flexible = {"session": MIN_SESSION, "cwd": MIN_CWD}
        return sum(flexible.get(n, fixed[n]) + PADDING for n in names) + SCROLLBAR

    for name in drop:
        if needed(shown) <= width:
            break
        if name in shown:
            shown.remove(name)
    rest = width - SCROLLBAR - sum(fixed[n] + PADDING for n in shown if n not in ("session", "cwd"))
    rest -= PADDING * (2 if "cwd" in shown else 1)
    widths = dict(fixed)
    if "cwd" in shown:
        widths["cwd"] = max(MIN_CWD, min(fixed["cwd"], rest // 3))
        rest -= widths["cwd"]
    widths["session"] = max(MIN_SESSION, min(fixed["session"], rest))
    return [(name, widths[name]) for name in shown]


def agent_cell(s: SessionInfo, depth: int) -> str:
    """Which agent wrote the session; an oh-my-pi subagent transcript (listed under its session) says so."""
    sub = depth and s.agent == "omp" and not s.parent_session
    return AGENT_NAMES.get(s.agent, s.agent) + (" sub" if sub else "")


def relative_age(ms: float, now: float | None = None) -> str:
    seconds = max(0.0, (now if now is not None else time.time()) - ms / 1000)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size:.0f}{unit} ago"
    return "just now"


def session_cells(s: SessionInfo, depth: int, now: float) -> dict[str, str | Text]:
    """A session's row, by column name; `depth` indents a fork under its parent."""
    title = Text("  " * depth + ("└ " if depth else ""), "dim")
    title.append(make_safe(s.title, keep_newlines=False)[:120], "bold" if s.name else "")
    return {
        "last activity": relative_age(s.last_activity, now),
        "session": title,
        "cwd": Text(make_safe(s.cwd, keep_newlines=False), "dim"),
        "entries": Text(f"{s.entries:,}", justify="right"),
        "branches": Text(f"{s.branches:,}", justify="right"),
        "compactions": Text(f"{s.compactions:,}", justify="right"),
        "size": Text(human_size(s.size), justify="right"),
        "agent": Text(agent_cell(s, depth), "dim"),
    }


def hit_cells(hit: SearchHit, info: SessionInfo | None) -> tuple[Text, Text, Text, Text]:
    """A search hit's row (`HIT_COLUMNS`); the title of a fork (which often shares its parent's first message)
    says it is one."""
    title = Text()
    if info is not None and info.parent_session:
        title.append("fork: ", "bold yellow")
    title.append(make_safe(hit.title, keep_newlines=False)[:40], "bold")
    return (
        title,
        Text(hit.kind, "dim"),
        Text(make_safe(hit.entry_id, keep_newlines=False), "cyan"),
        Text(make_safe(hit.snippet, keep_newlines=False)),
    )


def head_start(roots: list[Path], show_all: bool, cwd: str) -> Text:
    """The browser head's start: the folders listed (Pi's, then oh-my-pi's) and the scope Tab switches."""
    head = Text()
    head.append("Pi sessions ", "bold")
    head.append(make_safe(str(roots[0]), keep_newlines=False), "cyan")
    for root in roots[1:]:
        head.append(" + oh-my-pi ", "bold")
        head.append(make_safe(str(root), keep_newlines=False), "cyan")
    scope = "all folders" if show_all else f"this folder ({cwd})"
    head.append(f"  ·  {make_safe(scope, keep_newlines=False)} (Tab)")
    return head
