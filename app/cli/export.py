"""`pitree export FILE [--leaf ID] --format md|html|jsonl -o OUT [--thinking] [--force]`.

Writes one path (root -> leaf) as Markdown, a self-contained HTML page, or a new Pi session file (what
Pi's fork writes). `-o -` prints Markdown or HTML to stdout. The source file is only read. Written a piece at a
time (see `pitree.ops.export`), with progress on stderr when that is a terminal and the export takes a
while; Ctrl+C stops it and writes nothing (the temporary file is removed).
`export_path` is re-exported here for the TUI.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pitree.cli.common import CliError, read_session
from pitree.cli.progress import progress_printer
from pitree.ops.export import FORMATS, ExportError, export_chunks, export_path
from pitree.session.text import count as count_of
from pitree.session.text import make_safe
from pitree.store.export_file import ExportFileError, check_target
from pitree.store.session_file import EntryReader, SessionFileError

__all__ = ["add_export_command", "cmd_export", "export_path"]


PROGRESS_AFTER = 0.5  # seconds before progress is shown: a short export prints nothing but its result


def _fail(message: str) -> Exception:
    return CliError(message)


def _exporting(done: int, total: int) -> str:
    return f"exporting: {done:,} of {total:,} entries ({100 * done // max(total, 1)}%) · Ctrl+C stops"


def cmd_export(args: argparse.Namespace) -> int:
    source = Path(args.file).expanduser()
    to_stdout = args.output == "-"
    if to_stdout and args.format == "jsonl":
        raise _fail("a jsonl export is a session file: give -o PATH (stdout is for md and html)")
    out = None if to_stdout else Path(args.output).expanduser()
    try:
        if out is not None:  # refuse before loading a big file for nothing
            check_target(out, force=args.force, source=source)
        tree, _ = read_session(source, texts_apart=False)  # one-shot: see `SessionBuilder`
        leaf = tree.resolve(args.leaf) if args.leaf is not None else tree.leaf
        reader = EntryReader(source, tree)
        show, clear = progress_printer(_exporting, PROGRESS_AFTER)
        try:
            if out is None:
                for piece in export_chunks(tree, reader, leaf, args.format, args.thinking, show):
                    sys.stdout.buffer.write(piece)
                sys.stdout.buffer.flush()
                return 0
            export_path(tree, reader, leaf, args.format, out, args.thinking, args.force, show)
        finally:
            clear()
    except (ExportError, ExportFileError, SessionFileError, ValueError) as exc:
        raise _fail(str(exc)) from None
    count = len(tree.branch(leaf))
    where = leaf.id if leaf is not None else "(empty)"
    shown = f"exported {count_of(count, 'entry', 'entries')} (root → {where}) as {args.format} to {out}"
    print(make_safe(shown, keep_newlines=False))
    return 0


def add_export_command(sub: Any) -> None:
    p = sub.add_parser(
        "export",
        help="write one path as Markdown, HTML, or a new Pi session (Pi's fork)",
        description=(
            "Export the path root → leaf. md/html: a readable document (tool calls folded, thinking omitted "
            "unless --thinking, images as placeholders). jsonl: a new Pi session holding only that path and "
            "its labels, with parentSession pointing back to FILE. The source file is never changed."
        ),
    )
    p.add_argument("file", metavar="FILE", help="a Pi session file (.jsonl)")
    p.add_argument("--leaf", metavar="ID", help="entry id or unique prefix (default: the file's leaf)")
    p.add_argument("--format", required=True, choices=FORMATS, help="md, html or jsonl (a Pi session)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output file; `-` = stdout (md/html)")
    p.add_argument("--thinking", action="store_true", help="include the assistant's thinking (md/html)")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    p.set_defaults(func=cmd_export)
