"""`pitree ls` and `pitree search`: the sessions on disk and full-text search over them, for people and scripts;
and the index refresh they share (`cli.index_refresh`); `pitree ID-PREFIX` is `cli.resolve_id`'s.

Both commands refresh the sessions index first (`cli.index_refresh`: only new or changed files are read, an
appended one only from where it was indexed; progress on stderr when that takes a while and stderr is a
terminal). Without `--all` they keep to the current folder's sessions (header `cwd` equal to the working
directory; with the default layout only its `--<cwd>--` folder is scanned).

`pitree ls --json` prints one object:
    {"root": str, "scope": "cwd" | "all", "cwd": str,
     "sessions": [{"path", "id", "cwd", "name": str|null, "title", "firstMessage", "entries", "branches",
                   "compactions", "lastActivity": epoch ms, "created": epoch ms|null, "size": bytes,
                   "mtime": epoch ms, "parentSession": str|null, "agent": "pi"|"omp", "depth": int}],
     "errors": [{"path", "error"}]}                                               # files that did not load
`depth` > 0: a fork listed under the session before it with depth - 1 (header `parentSession`), or an
oh-my-pi subagent transcript under the session it ran in. Sessions are Pi's and oh-my-pi's (`session_roots`);
`root` is Pi's folder.

`pitree search QUERY --json` prints one object:
    {"query": str, "root": str, "scope": "cwd" | "all", "limit": int, "truncated": bool,
     "hits": [{"path", "sessionId", "title", "entryId", "kind", "snippet"}]}
Hits run newest session first, file order within; `kind` is user | assistant | tool | bash | compaction |
branch_summary | label | name | custom_message; `entryId` is where to open (a label's hit is its target).
Query forms (Pi's session picker): words (all must occur, case-insensitive), `"a phrase"`, `re:regex`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from pitree.cli.common import CliError
from pitree.cli.index_refresh import BUSY_WAIT, busy_note, refreshed
from pitree.cli.index_refresh import scopes as folder_scopes
from pitree.session.summary_info import SessionInfo, thread_sessions
from pitree.session.text import count, human_size, json_safe, make_safe
from pitree.store.catalog import find_session_paths
from pitree.store.session_index import SearchHit, SessionIndex, is_busy

TITLE_MAX = 72
AGENTS = {"pi": "pi", "omp": "oh-my-pi"}  # the agent column: which agent wrote the file (its dialect)


def _emit_json(data: Any) -> None:
    sys.stdout.buffer.write(json_safe(orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)))
    sys.stdout.buffer.flush()


def list_sessions(
    session_dir: str | None = None, all_: bool = False, index: SessionIndex | None = None
) -> tuple[Path, list[tuple[SessionInfo, int]], list[tuple[Path, str]]]:
    """(root, sessions in Pi's threaded order with depth, files that failed) after refreshing the index."""
    root, scopes = folder_scopes(session_dir, all_)
    own = index is None
    idx = index or SessionIndex(busy_timeout=BUSY_WAIT)
    infos: list[SessionInfo] = []
    errors: list[tuple[Path, str]] = []
    try:
        for folder, cwd in scopes:
            refreshed(idx, folder)
            infos += idx.sessions(cwd=cwd, root=folder)
            errors += idx.errors(root=folder)
    except Exception as exc:
        if not is_busy(exc):
            raise
        from pitree.store.direct_scan import list_files

        busy_note("listing")
        infos, errors = [], []
        for folder, cwd in scopes:
            found, failed = list_files(find_session_paths(folder), cwd)
            infos += found
            errors += failed
    finally:
        if own:
            idx.close()
    infos.sort(key=lambda s: (-s.last_activity, str(s.path)))
    return root, thread_sessions(infos), errors


def _info_json(s: SessionInfo, depth: int) -> dict[str, Any]:
    return {
        "path": str(s.path),
        "id": s.id,
        "cwd": s.cwd,
        "name": s.name,
        "title": s.title,
        "firstMessage": s.first_message,
        "entries": s.entries,
        "branches": s.branches,
        "compactions": s.compactions,
        "lastActivity": s.last_activity,
        "created": s.created,
        "size": s.size,
        "mtime": s.mtime,
        "parentSession": s.parent_session,
        "agent": s.agent,
        "depth": depth,
    }


def _when(ms: float) -> str:
    if ms != ms or ms <= 0:
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))
    except (OverflowError, OSError, ValueError):
        return "?"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home != "~" and (path == home or path.startswith(home + os.sep)) else path


def cmd_ls(args: argparse.Namespace) -> int:
    try:
        root, rows, errors = list_sessions(args.session_dir, args.all)
    except OSError as exc:  # the cache folder or database cannot be used
        raise CliError(f"sessions index: {exc}") from None
    if args.json:
        _emit_json(
            {
                "root": str(root),
                "scope": "all" if args.all else "cwd",
                "cwd": os.getcwd(),
                "sessions": [_info_json(s, d) for s, d in rows],
                "errors": [{"path": str(p), "error": e} for p, e in errors],
            }
        )
        return 0
    from pitree.cli.common import console as _console
    from rich.cells import cell_len
    from rich.text import Text

    console = _console()
    if not rows:
        where = "" if args.all else f" for {os.getcwd()} (try --all)"
        console.print(Text(make_safe(f"no sessions in {root}{where}", keep_newlines=False)))
    else:
        # One Text printed once: a Rich Table (or a print per row) of 2,000 sessions takes seconds.
        heads = ("last activity", "session", "cwd", "entries", "branches", "compactions", "size", "agent")
        cells = [
            (
                _when(s.last_activity),
                ("  " * (depth - 1) + "└ " if depth else "") + make_safe(_cut(s.title, TITLE_MAX), keep_newlines=False),
                make_safe(_home(s.cwd), keep_newlines=False),
                str(s.entries),
                str(s.branches),
                str(s.compactions),
                human_size(s.size),
                AGENTS.get(s.agent, s.agent)
                + (" subagent" if depth and s.agent == "omp" and not s.parent_session else ""),
            )
            for s, depth in rows
        ]
        widths = [max(cell_len(h), *(cell_len(c[i]) for c in cells)) for i, h in enumerate(heads)]
        right = (False, False, False, True, True, True, True, False)

        def pad(text: str, i: int) -> str:
            gap = " " * (widths[i] - cell_len(text))
            return gap + text if right[i] else text + gap

        out = Text(no_wrap=True, overflow="ignore")
        out.append("  ".join(pad(h, i) for i, h in enumerate(heads)).rstrip(), style="bold")
        for (s, _), row in zip(rows, cells, strict=True):
            out.append("\n")
            out.append(pad(row[0], 0) + "  ")
            out.append(pad(row[1], 1), style="" if s.name else "italic")
            out.append("  ")
            out.append(pad(row[2], 2), style="dim")
            out.append(("  " + "  ".join(pad(row[i], i) for i in range(3, 8))).rstrip())
        console.print(out, soft_wrap=True)
    if errors:
        print(
            f"pitree: {count(len(errors), 'file')} could not be read (`pitree ls --json` lists them)", file=sys.stderr
        )
    return 0


def search_sessions(
    query: str,
    session_dir: str | None = None,
    all_: bool = False,
    limit: int = 200,
    index: SessionIndex | None = None,
) -> tuple[Path, list[SearchHit]]:
    """(root, hits) after refreshing the index; ValueError for a bad query."""
    root, scopes = folder_scopes(session_dir, all_)
    own = index is None
    idx = index or SessionIndex(busy_timeout=BUSY_WAIT)
    hits: list[SearchHit] = []
    try:
        for folder, cwd in scopes:
            refreshed(idx, folder)
            hits += idx.search(query, limit=limit - len(hits), cwd=cwd, root=folder) if len(hits) < limit else []
        return root, hits
    except Exception as exc:
        if not is_busy(exc):
            raise
        from pitree.store.direct_scan import search_files

        busy_note("searching")
        hits = []
        for folder, cwd in scopes:
            hits += search_files(find_session_paths(folder), query, limit - len(hits), cwd) if len(hits) < limit else []
        return root, hits
    finally:
        if own:
            idx.close()


def cmd_search(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise CliError("--limit must be at least 1")
    try:
        root, hits = search_sessions(args.query, args.session_dir, args.all, args.limit)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"sessions index: {exc}") from None
    if args.json:
        _emit_json(
            {
                "query": args.query,
                "root": str(root),
                "scope": "all" if args.all else "cwd",
                "limit": args.limit,
                "truncated": len(hits) >= args.limit,
                "hits": [
                    {
                        "path": str(h.path),
                        "sessionId": h.session_id,
                        "title": h.title,
                        "entryId": h.entry_id,
                        "kind": h.kind,
                        "snippet": h.snippet,
                    }
                    for h in hits
                ],
            }
        )
        return 0
    from pitree.cli.common import console as _console
    from pitree.cli.textout import one_line
    from rich.text import Text

    console = _console()
    if not hits:
        where = "" if args.all else " (current folder's sessions; try --all)"
        console.print(one_line(f"no matches{where}"))
        return 0
    out = Text(no_wrap=True, overflow="ignore")
    last_path = None
    for h in hits:
        if h.path != last_path:
            if last_path is not None:
                out.append("\n")
            out.append_text(one_line(_cut(h.title, TITLE_MAX), style="bold"))
            out.append("  ")
            out.append_text(one_line(str(h.path), style="dim"))
            last_path = h.path
        out.append("\n  ")
        out.append_text(one_line(h.entry_id, style="yellow"))
        out.append(" ")
        out.append_text(one_line(h.kind, style="cyan"))
        out.append(": ")
        out.append_text(one_line(h.snippet))
    console.print(out, soft_wrap=True)
    if len(hits) >= args.limit:
        print(f"pitree: showing the first {args.limit} matches (--limit N for more)", file=sys.stderr)
    return 0


def add_browse_commands(sub: Any) -> None:
    """Add `ls` and `search` to an argparse subparsers object."""
    p = sub.add_parser("ls", help="list Pi's and oh-my-pi's sessions (the current folder's; --all for every one)")
    p.add_argument("--all", action="store_true", help="every session, not only the current folder's")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--session-dir", metavar="DIR", help="scan DIR (and its subfolders) instead of Pi's folder")
    p.set_defaults(func=cmd_ls)

    p = sub.add_parser("search", help='full-text search across sessions (words, "phrase", re:regex)')
    p.add_argument("query", metavar="QUERY", help='words (all must match), "a phrase", or re:REGEX')
    p.add_argument("--all", action="store_true", help="every session, not only the current folder's")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--session-dir", metavar="DIR", help="scan DIR (and its subfolders) instead of Pi's folder")
    p.add_argument("--limit", type=int, default=200, metavar="N", help="at most N hits (default 200)")
    p.set_defaults(func=cmd_search)
