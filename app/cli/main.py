"""pitree's command line: the scripting subcommands and the entry point that opens the explorer.

`pitree FILE` opens the explorer; `pitree tree|context|compactions|info FILE` print what scripts need
(`--json` for machines). Bad input exits 1 with one line on stderr. Heavy imports (rich, textual,
tiktoken) happen only on the paths that use them, so `pitree tree --json` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pitree import __version__
from pitree.cli.common import CliError, console, demo_copy, emit_json, load, resolve
from pitree.ops.errors import OpError
from pitree.session.text import json_safe, make_safe

# The session commands import the model where they run: `pitree ls` and the sessions browser start without it.

SUBCOMMANDS = ("tree", "context", "compactions", "info", "usage", "export", "ls", "search", "branch", "label", "diff")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error (e.g. a bad --filter) is one line on stderr and exit status 1."""

    def error(self, message: str) -> Any:  # argparse's own prints the usage too and exits 2
        raise CliError(f"{message} (see `{self.prog} --help`)")


def cmd_tree(args: argparse.Namespace) -> int:
    from pitree.session.layout import build_layout, stream_layout

    path, tree = load(args.file)
    if args.json:
        from pitree.cli.report import tree_report_json

        out = sys.stdout.buffer
        # Rows are made as they are written: the row list of a big session never exists whole.
        for piece in tree_report_json(tree, stream_layout(tree, args.filter, args.search or "")):
            out.write(json_safe(piece))
        out.flush()
    else:
        from pitree.cli.textout import print_tree

        print_tree(console(), tree, build_layout(tree, args.filter, args.search or ""))
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    from pitree.cli.report import context_report
    from pitree.store.session_file import EntryReader, SessionFileError

    path, tree = load(args.file)
    leaf = resolve(tree, args.leaf)
    reader = None if args.no_tiktoken else EntryReader(path, tree)
    try:
        report = context_report(tree, reader, leaf)
    except SessionFileError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        emit_json(report)
    else:
        from pitree.cli.textout import print_context

        print_context(console(), report)
    return 0


def cmd_compactions(args: argparse.Namespace) -> int:
    from pitree.cli.report import compactions_report
    from pitree.store.session_file import EntryReader

    path, tree = load(args.file)
    report = compactions_report(tree, EntryReader(path, tree))
    if args.json:
        emit_json(report)
    else:
        from pitree.cli.textout import print_compactions

        print_compactions(console(), report)
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from pitree.cli.report import info_report

    path, tree = load(args.file)
    report = info_report(tree, path.stat().st_size)
    report["file"] = str(path)
    report["skippedLines"] = [{"line": s.line, "reason": s.reason} for s in tree.skipped]
    report["notes"] = [{"line": p.line, "message": p.message} for p in tree.problems]
    if args.json:
        emit_json(report)
    else:
        from pitree.cli.textout import print_info

        print_info(console(), report)
    return 0


def cmd_usage(args: argparse.Namespace) -> int:
    from pitree.session.usage import usage_report

    _, tree = load(args.file)
    report = usage_report(tree)
    if args.json:
        emit_json(report)
    else:
        from pitree.cli.usage_text import print_usage

        print_usage(console(), report)
    return 0


def _add_file(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a Pi session file (.jsonl)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _filters() -> tuple[str, ...]:
    from pitree.session.layout import FILTERS

    return FILTERS


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The subcommands' parser; with `command`, only that subcommand's module is imported (a fast start)."""
    parser = _Parser(
        prog="pitree",
        description="Explore Pi coding-agent session trees. `pitree FILE` opens the explorer.",
    )
    parser.add_argument("--version", action="version", version=f"pitree {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("tree", help="the tree as Pi's /tree draws it")
    _add_file(p)
    filters = _filters() if command in (None, "tree") else None  # only `tree` checks them
    p.add_argument("--filter", choices=filters, default="default", help="which entries to show (Pi's filters)")
    p.add_argument("--search", metavar="Q", help="only entries matching all words of Q (Pi's search)")
    p.set_defaults(func=cmd_tree)

    p = sub.add_parser("context", help="what the model is sent at a leaf")
    _add_file(p)
    p.add_argument("--leaf", metavar="ID", help="entry id or unique prefix (default: the file's leaf)")
    p.add_argument("--no-tiktoken", action="store_true", help="skip the cl100k count (tokens.tiktoken is null)")
    p.set_defaults(func=cmd_context)

    p = sub.add_parser("compactions", help="audit every compaction: summarized, kept, tokens before/after")
    _add_file(p)
    p.set_defaults(func=cmd_compactions)

    p = sub.add_parser("info", help="header, counts, branches, usage and cost")
    _add_file(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("usage", help="tokens and cost per model and per branch segment")
    _add_file(p)
    p.set_defaults(func=cmd_usage)

    if command in (None, "export"):
        from pitree.cli.export import add_export_command

        add_export_command(sub)
    if command in (None, "ls", "search"):
        from pitree.cli.browse import add_browse_commands

        add_browse_commands(sub)
    if command in (None, "branch", "label"):
        from pitree.cli.write import add_write_commands

        add_write_commands(sub)
    if command in (None, "diff"):
        from pitree.cli.diff import add_diff_command

        add_diff_command(sub)
    return parser


def build_open_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pitree",
        usage="pitree [FILE | ID-PREFIX] [--demo] [--session-dir DIR] | pitree COMMAND ...",
        description=(
            "Explore Pi coding-agent session trees.\n\n"
            "commands: " + ", ".join(SUBCOMMANDS) + "  (pitree COMMAND --help)"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="a Pi session file to open, or the start of a session id; none: the sessions browser",
    )
    parser.add_argument(
        "--session-dir", metavar="DIR", help="where Pi's sessions are (default: $PI_CODING_AGENT_DIR/sessions)"
    )
    parser.add_argument("--demo", action="store_true", help="open the bundled demo session (a temporary copy)")
    parser.add_argument(
        "--serve", action="store_true", help="serve the explorer to a web browser on 127.0.0.1 (textual-serve)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port for --serve (default 8000)")
    parser.add_argument("--version", action="version", version=f"pitree {__version__}")
    return parser


def serve_app(target: Path | None, session_dir: str | None, port: int) -> int:
    """`pitree --serve`: the same app, one instance per browser tab (see `pitree.cli.serve`)."""
    from pitree.cli.serve import ServeError, serve

    command: list[str] = [str(target.resolve())] if target is not None else []
    if session_dir is not None:
        command += ["--session-dir", os.path.abspath(session_dir)]
    try:  # the server prints the one "serving … on URL" line, the URL with this run's secret
        serve(command, port, title=f"pitree — {target.name}" if target is not None else "pitree — sessions")
    except ServeError as exc:
        raise CliError(str(exc)) from None
    return 0


def _session_by_id(arg: str, session_dir: str | None) -> Path | None:
    """`pitree 01a2` opens the session whose id starts so (looked up in the sessions index)."""
    if "/" in arg or arg.endswith(".jsonl"):
        return None
    from pitree.cli.resolve_id import resolve_session_arg

    try:
        return resolve_session_arg(arg, session_dir)
    except ValueError as exc:
        raise CliError(str(exc)) from None


BROWSE_COMMANDS = ("ls", "search")  # the subcommands that take --session-dir


def hoist_session_dir(argv: list[str]) -> list[str]:
    """`pitree --session-dir D ls --all` is `pitree ls --session-dir D --all`: the option before the command."""
    if len(argv) >= 3 and argv[0] == "--session-dir" and argv[2] in SUBCOMMANDS:
        value, command, rest = argv[1], argv[2], argv[3:]
    elif len(argv) >= 2 and argv[0].startswith("--session-dir=") and argv[1] in SUBCOMMANDS:
        value, command, rest = argv[0].partition("=")[2], argv[1], argv[2:]
    else:
        return argv
    if command not in BROWSE_COMMANDS:
        raise CliError(f"--session-dir goes with ls, search or the sessions browser, not with `{command}`")
    return [command, "--session-dir", value, *rest]


# Opens the explorer on a file (or the sessions browser on None): `pitree.widgets.main` passes it in, since
# app/ never imports widgets/. Without it (`python -m pitree.cli.main`) the CLI prints the tree instead.
OpenTui = Callable[[Path | None, str | None], int]


def open_explorer(path: Path, tui: OpenTui | None) -> int:
    """Open the full-screen explorer on `path` (or print its tree when there is no explorer to open)."""
    if tui is None:
        _, tree = load(str(path))
        from pitree.cli.textout import print_tree
        from pitree.session.layout import build_layout

        print_tree(console(), tree, build_layout(tree))
        return 0
    from pitree.store.parse_child import fork_early

    fork_early(path)  # a big file's back part parses while Textual is imported and started
    return tui(path, None)


def main(argv: Sequence[str] | None = None, tui: OpenTui | None = None) -> int:
    """The `pitree` program; `tui` opens the explorer (see `OpenTui`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv = hoist_session_dir(argv)
        if argv and argv[0] in SUBCOMMANDS:
            args = build_parser(argv[0]).parse_args(argv)
            func: Callable[[argparse.Namespace], int] = args.func
            return func(args)
        if argv and argv[0] in ("-h", "--help"):
            build_open_parser().print_help()
            print()
            build_parser().print_help()
            return 0
        args = build_open_parser().parse_args(argv)
        target: Path | None = None
        if args.demo:
            target = demo_copy()
        elif args.file:
            target = Path(args.file).expanduser()
            if not target.exists():
                target = _session_by_id(args.file, args.session_dir) or target
            if not target.exists():
                raise CliError(f"{target}: no such file (nor the start of a known session id)")
            if target.is_dir():
                raise CliError(f"{target}: is a directory, not a session file")
        if args.serve:
            return serve_app(target, args.session_dir, args.port)
        if target is not None:
            return open_explorer(target, tui)
        if tui is None:
            raise CliError("the sessions browser is part of the `pitree` program (pitree.widgets.main)")
        from pitree.cli.index_refresh import index_newest_early

        index_newest_early(args.session_dir)  # the browser's first screen then has rows (its refresh reads the rest)
        return tui(None, args.session_dir)
    except (CliError, OpError) as exc:  # messages quote ids and paths from the files: one line, nothing raw
        print(f"pitree: error: {make_safe(str(exc), keep_newlines=False)}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `pitree tree FILE | head` closes the pipe early; that is not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
