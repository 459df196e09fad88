"""The two commands that write: `pitree branch` (move the leaf, with a summary or a marker) and
`pitree label`. Both append exactly one line through `store.append`; nothing else is ever changed,
except the consented, atomic, backed-up migration of a pre-v3 file (which Pi itself would do on open).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson
from pitree.session.load import migrate_entry
from pitree.session.parse import parse_line
from pitree.session.text import json_safe, make_safe
from pitree.session.tree import SessionTree
from pitree.store.append import AppendError, append_line, rewrite_atomically
from pitree.store.guard import write_warnings
from pitree.store.session_file import EntryReader, SessionFileError, load_session, read_bytes
from pitree.summary.jump import editor_text, label_entry, marker_entry, plan_jump, summary_entry
from pitree.summary.run import (
    SUMMARIZERS,
    extractive_summary,
    finish_model_summary,
    no_content,
    prepare_job,
    stream_model_summary,
)


class WriteError(Exception):
    """One line for the user; exit status 1; nothing was written."""


def _confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise WriteError(f"{question} — refusing without --yes (stdin is not a terminal)")
    answer = input(f"{make_safe(question, keep_newlines=False)} [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise WriteError("cancelled; nothing was written")


def migrated_bytes(path: Path) -> bytes:
    """The file as v3: header version 3, pitree's stable ids, parentIds, firstKeptEntryId, role rename.

    Unparseable lines are dropped, as Pi's own rewrite drops them (the backup keeps them)."""
    data = read_bytes(path)
    tree, _ = load_session(path)
    if tree.header is None:
        raise WriteError(f"{path}: no session header; pitree will not migrate a file Pi would treat as empty")
    header = {**tree.header, "version": 3}
    out = [orjson.dumps(header)]
    for node in tree.nodes:
        obj, _note = parse_line(data[node.offset : node.offset + node.length])  # as the loader read it
        assert obj is not None, node  # the loader made a node of it, so it parses
        out.append(orjson.dumps(migrate_entry(obj, node, tree)))
    return b"\n".join(out) + b"\n"


def _prepare_file(path: Path, args: argparse.Namespace) -> tuple[SessionTree, int]:
    try:
        tree, _ = load_session(path)
    except SessionFileError as exc:
        raise WriteError(str(exc)) from None
    if tree.header is None:
        raise WriteError(f"{path}: no session header; Pi treats this file as empty, so pitree will not write to it")
    if tree.version < 3:
        if not args.migrate:
            raise WriteError(
                f"{path} is a version {tree.version:g} session. Pi rewrites such files to version 3 when it opens "
                "them; to append, pitree must do the same: pass --migrate (a backup is kept)"
            )
        _confirm(f"Rewrite {path.name} as a version 3 session (backup kept)?", args.yes)
        size = path.stat().st_size
        try:
            # expect_size: an entry Pi appends between our read and the rewrite must not be lost.
            backup = rewrite_atomically(path, migrated_bytes(path), expect_size=size)
        except AppendError as exc:
            raise WriteError(str(exc)) from None
        print(make_safe(f"pitree: migrated to version 3; backup at {backup}", keep_newlines=False), file=sys.stderr)
        tree, _ = load_session(path)
    return tree, path.stat().st_size


def _append(path: Path, entry: dict[str, Any], size: int) -> int:
    try:
        result = append_line(path, orjson.dumps(entry), expect_size=size)
    except AppendError as exc:
        raise WriteError(str(exc)) from None
    return result.offset


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def _choice(args: argparse.Namespace, tree: SessionTree, needed: bool) -> Any:
    """The summarizer from flags > environment > config file (> Pi's agent folder for auto); WriteError if bad.
    Without anything left behind (`needed` False) the settings are only checked: nothing is asked or run."""
    from pitree.config import ConfigError, load_config
    from pitree.summary.backends.base import BackendError
    from pitree.summary.choose import Choice, choose

    overrides: dict[str, object] = {"summarizer": args.summary, "model": args.model}
    try:
        config = load_config(overrides=overrides)
        for warning in config.warnings:
            print(f"pitree: warning: {warning}", file=sys.stderr)
        if not needed or config.summarizer == "none":
            return Choice("none" if config.summarizer == "none" else "extractive")
        choice = choose(config, tree, allow_command=args.allow_key_command)
        if choice.command is not None and _ask(f"pitree: {choice.command}. Run it to get the key?"):
            choice = choose(config, tree, allow_command=True)
    except (ConfigError, BackendError) as exc:
        raise WriteError(str(exc)) from None
    if choice.command is not None and choice.name == "pi":
        raise WriteError(f"{choice.command}: pass --allow-key-command to run it")
    if choice.note:
        print(f"pitree: {choice.note}; using the offline summary", file=sys.stderr)
    if choice.is_model and choice.needs_consent and not args.send:
        question = f"Send the abandoned branch to {choice.where} for a summary?"
        if not _ask(question):
            print(
                f"pitree: not sending the branch to {choice.where} without consent (answer yes, pass --send, "
                "or name the summarizer with --summary); using the offline summary",
                file=sys.stderr,
            )
            return type(choice)("extractive", context_window=choice.context_window)
    return choice


def _summary(
    args: argparse.Namespace, tree: SessionTree, path: Path, plan: Any, choice: Any
) -> tuple[str, list[str], list[str], dict[str, Any] | None]:
    job = prepare_job(tree, EntryReader(path, tree), plan, choice.context_window, choice.reserve_tokens)
    if job.empty:
        return (*no_content(), None)
    if not choice.is_model:
        if args.instructions:
            print("pitree: the offline summary cannot follow --instructions; they were not used", file=sys.stderr)
        return (*extractive_summary(job), None)
    from pitree.summary.backends.base import BackendError

    def progress(text: str) -> None:
        print(f"pitree: {text}", file=sys.stderr)

    async def collect() -> str:
        parts = []
        deltas = stream_model_summary(
            job, choice.backend, args.instructions, choice.reserve_tokens, choice.max_tokens, progress
        )
        async for delta in deltas:
            parts.append(delta)
        return "".join(parts)

    import asyncio

    try:
        text = asyncio.run(collect())
    except BackendError as exc:
        raise WriteError(f"summary failed, nothing written: {exc}") from None
    return (*finish_model_summary(job, text), getattr(choice.backend, "usage", None))


def cmd_branch(args: argparse.Namespace) -> int:
    path = Path(args.file).expanduser()
    tree, size = _prepare_file(path, args)
    try:
        target = tree.resolve(args.to)
    except ValueError as exc:
        raise WriteError(str(exc)) from None
    plan = plan_jump(tree, target)
    text = None
    if plan.needs_editor_text:
        text = editor_text(EntryReader(path, tree).entry(target))
    result: dict[str, Any]
    if plan.noop:
        result = {
            "appended": None,
            "leaf": tree.leaf.id if tree.leaf else None,
            "editorText": text,
            "message": "the leaf is already there; nothing written",
        }
        _print(args, result)
        return 0
    for warning in write_warnings(path):
        print(make_safe(f"pitree: warning: {warning}", keep_newlines=False), file=sys.stderr)
    choice = _choice(args, tree, bool(plan.to_summarize))
    if choice.name == "none" or not plan.to_summarize:
        reason = "no summary requested" if choice.name == "none" else "nothing to summarize"
        entry = marker_entry(tree, plan, reason)
    else:
        summary, read, modified, usage = _summary(args, tree, path, plan, choice)
        entry = summary_entry(tree, plan, summary, read, modified, usage=usage)
    where = plan.new_leaf_id or "before the first entry"
    _confirm(f"Append a {entry['type']} entry to {path.name} so Pi continues at {where}?", args.yes)
    _append(path, entry, size)
    result = {
        "appended": {
            "id": entry["id"],
            "type": entry["type"],
            "parentId": entry["parentId"],
            "fromId": entry.get("fromId", entry.get("data", {}).get("fromId")),
        },
        "leaf": entry["id"],
        "editorText": text,
    }
    if entry["type"] == "branch_summary":
        result["summary"] = entry["summary"]
    _print(args, result)
    return 0


def _refuse_clearing_nothing(path: Path, id_: str) -> None:
    """A clear on an unlabelled entry would still append a line and move Pi's leaf; the TUI skips it, so do we."""
    try:
        tree, _ = load_session(path)
        target = tree.resolve(id_)
    except (SessionFileError, ValueError) as exc:
        raise WriteError(str(exc)) from None
    if target.id not in tree.labels:
        raise WriteError(f"entry {target.id} has no label to clear; nothing was written")


def cmd_label(args: argparse.Namespace) -> int:
    path = Path(args.file).expanduser()
    if args.text is None and not args.clear:
        raise WriteError("give a label TEXT, or --clear to remove the label")
    if args.text is not None and args.clear:
        raise WriteError("give either a label TEXT or --clear, not both")
    if args.clear:
        _refuse_clearing_nothing(path, args.id)  # before any migration: nothing may be written
    tree, size = _prepare_file(path, args)
    try:
        target = tree.resolve(args.id)
    except ValueError as exc:
        raise WriteError(str(exc)) from None
    label = None if args.clear else args.text.strip()
    if not args.clear and not label:
        raise WriteError("the label is empty; use --clear to remove a label")
    entry = label_entry(tree, target, label)
    _confirm(f"Append a label entry to {path.name}?", args.yes)
    _append(path, entry, size)
    _print(
        args,
        {
            "appended": {"id": entry["id"], "type": "label", "parentId": entry["parentId"]},
            "targetId": target.id,
            "label": label,
        },
    )
    return 0


def _print(args: argparse.Namespace, result: dict[str, Any]) -> None:
    if args.json:
        sys.stdout.buffer.write(json_safe(orjson.dumps(result, option=orjson.OPT_APPEND_NEWLINE)))
        return
    from pitree.cli.textout import one_line
    from rich.console import Console

    console = Console(highlight=False, markup=False, emoji=False)
    appended = result.get("appended")
    if appended is None:
        console.print(one_line(result.get("message", "nothing written")))
    else:
        console.print(one_line(f"appended {appended['type']} {appended['id']} (parent {appended['parentId']})"))
    if result.get("editorText"):
        console.print(one_line("text for the editor: " + result["editorText"]))


def add_write_commands(sub: Any) -> None:
    p = sub.add_parser("branch", help="move the leaf to an entry (persisted: a branch summary or a marker)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--to", required=True, metavar="ID", help="entry id or unique prefix to jump to")
    p.add_argument(
        "--summary",
        choices=("auto", *SUMMARIZERS),
        default=None,
        help="summary of the abandoned path (default: the config's summarizer, else auto: a configured model or "
        "the session's own via Pi's agent folder, with consent; else extractive, offline)",
    )
    p.add_argument("--instructions", metavar="TEXT", help="extra focus for a model summary (Pi's custom instructions)")
    p.add_argument("--model", metavar="M", help="model for model summaries")
    p.add_argument("--send", action="store_true", help="consent to sending the branch to the model auto picks")
    p.add_argument(
        "--allow-key-command", action="store_true", help="allow running a `!command` API key from Pi's agent folder"
    )
    p.add_argument("--migrate", action="store_true", help="allow rewriting a pre-v3 file as v3 first (backup kept)")
    p.add_argument("--yes", action="store_true", help="do not ask before writing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_branch)

    p = sub.add_parser("label", help="set or clear an entry's label (appends a label entry, as Pi does)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("id", metavar="ID")
    p.add_argument("text", metavar="TEXT", nargs="?")
    p.add_argument("--clear", action="store_true")
    p.add_argument("--migrate", action="store_true", help="allow rewriting a pre-v3 file as v3 first (backup kept)")
    p.add_argument("--yes", action="store_true", help="do not ask before writing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_label)
