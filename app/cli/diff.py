"""`pitree diff FILE A B [--json] [--markdown] [-o OUT] [--force]`: what two branches did from where they split.

A and B are entry ids or unique prefixes (`leaf` names the file's leaf). Text goes to the terminal as a two-column
table (`diff_text`), `--json` as data (`ops.diff.diff_dict`), `--markdown` as a document (`ops.diff_markdown`);
`-o OUT` writes the JSON or Markdown to a file (refused if it exists, unless --force).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import orjson
from pitree.cli.common import CliError, console, load
from pitree.ops.diff import compare, diff_dict
from pitree.session.entries import Node
from pitree.session.text import json_safe
from pitree.session.tree import SessionTree
from pitree.store.export_file import ExportFileError, check_target, write_export
from pitree.store.session_file import EntryReader, SessionFileError


def pick(tree: SessionTree, name: str, value: str) -> Node:
    """The entry that `value` (an id, a unique prefix, or `leaf`) names; a one-line error naming the side."""
    if value == "leaf" and tree.get("leaf") is None:
        leaf = tree.leaf
        if leaf is None:
            raise CliError("the session has no entries")
        return leaf
    try:
        return tree.resolve(value)
    except ValueError as exc:
        raise CliError(f"{name}: {exc}") from None


def cmd_diff(args: argparse.Namespace) -> int:
    if args.json and args.markdown:
        raise CliError("--json and --markdown: choose one")
    if args.output is not None and not (args.json or args.markdown):
        raise CliError("-o writes --json or --markdown output: give one of them")
    out = Path(args.output).expanduser() if args.output not in (None, "-") else None
    source = Path(args.file).expanduser()
    try:
        if out is not None:  # refuse before loading a big file for nothing
            check_target(out, force=args.force, source=source)
    except ExportFileError as exc:
        raise CliError(str(exc)) from None
    path, tree = load(args.file)
    a, b = pick(tree, "A", args.a), pick(tree, "B", args.b)
    try:
        diff = compare(tree, a, b, EntryReader(path, tree).entries)
    except SessionFileError as exc:
        raise CliError(str(exc)) from None
    data: bytes
    if args.json:
        data = json_safe(orjson.dumps(diff_dict(diff), option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_INDENT_2))
    elif args.markdown:
        from pitree.ops.diff_markdown import diff_markdown

        data = diff_markdown(diff, path.name).encode()
    else:
        from pitree.cli.diff_text import print_diff

        out_console = console()
        if not sys.stdout.isatty():  # two columns 400 wide read badly in a pager: COLUMNS, else 120
            columns = os.environ.get("COLUMNS", "")
            out_console.width = int(columns) if columns.isdigit() and int(columns) >= 40 else 120
        print_diff(out_console, diff)
        return 0
    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    try:
        written = write_export(out, data, force=args.force, source=source)
    except ExportFileError as exc:
        raise CliError(str(exc)) from None
    from pitree.session.text import make_safe

    print(make_safe(f"wrote {'JSON' if args.json else 'Markdown'} to {written}", keep_newlines=False))
    return 0


def add_diff_command(sub: Any) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two branches: where they split and what each did from there",
        description=(
            "Compare the branches ending at entries A and B: their deepest common ancestor, and per side the "
            "turns from there (requests, answers, tool calls and errors), files read and modified, tokens, cost, "
            "time, compactions and summaries, the context size at each end (Pi 1.6's estimate) and the last "
            "answer. Turns line up by index."
        ),
    )
    p.add_argument("file", metavar="FILE", help="a Pi session file (.jsonl)")
    p.add_argument("a", metavar="A", help="entry id or unique prefix (`leaf`: the file's leaf)")
    p.add_argument("b", metavar="B", help="entry id or unique prefix (`leaf`: the file's leaf)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--markdown", action="store_true", help="print Markdown (for sharing)")
    p.add_argument("-o", "--output", metavar="OUT", help="write the --json or --markdown output to OUT")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    p.set_defaults(func=cmd_diff)
