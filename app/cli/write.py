"""The two commands that write: `pitree branch` (move the leaf, with a summary or a marker) and
`pitree label`, argument parsing, questions and output over `pitree.ops`. Both append exactly one line;
nothing else is ever changed, except the consented, atomic, backed-up migration of a pre-v3 file (which Pi
itself would do on open).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson
from pitree.cli.common import read_session
from pitree.config import SUMMARIZERS
from pitree.ops.errors import NeedsMigration, OpError
from pitree.ops.jump import (
    JumpPlan,
    Summary,
    editor_text,
    marker_entry,
    model_summary,
    offline_summary,
    plan_jump,
    prepare_job,
    summary_entry,
)
from pitree.ops.label import check_clear, plan_label
from pitree.ops.migrate import migrate
from pitree.ops.write import append_entry, check_writable, resolve
from pitree.session.text import json_safe, make_safe
from pitree.session.tree import SessionTree
from pitree.store.guard import write_warnings
from pitree.store.session_file import EntryReader, SessionFileError


def _confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise OpError(f"{question} — refusing without --yes (stdin is not a terminal)")
    answer = input(f"{make_safe(question, keep_newlines=False)} [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise OpError("cancelled; nothing was written")


def _load(path: Path) -> tuple[SessionTree, int]:
    """The tree and the size that was parsed (what an append expects the file to still be). Read as the other
    commands read (the tree cache, a forked parse): the whole file at once took ~2.6 GB at 1M entries."""
    try:
        tree, builder = read_session(path)
    except SessionFileError as exc:
        raise OpError(str(exc)) from None
    return tree, builder.size


def _prepare_file(path: Path, args: argparse.Namespace) -> tuple[SessionTree, int]:
    tree, size = _load(path)
    try:
        check_writable(tree, path)
    except NeedsMigration as exc:
        if not args.migrate:
            raise OpError(f"{exc}: pass --migrate (a backup is kept)") from None
        _confirm(f"Rewrite {path.name} as a version 3 session (backup kept)?", args.yes)
        backup = migrate(path)
        print(make_safe(f"pitree: migrated to version 3; backup at {backup}", keep_newlines=False), file=sys.stderr)
        tree, size = _load(path)
    return tree, size


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def _choice(args: argparse.Namespace, tree: SessionTree, needed: bool) -> Any:
    """The summarizer from flags > environment > config file (> Pi's agent folder for auto); OpError if bad.
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
        raise OpError(str(exc)) from None
    if choice.command is not None and choice.name == "pi":
        raise OpError(f"{choice.command}: pass --allow-key-command to run it")
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
            return type(choice)(
                "extractive", context_window=choice.context_window, reserve_tokens=choice.reserve_tokens
            )
    return choice


def _summary(args: argparse.Namespace, tree: SessionTree, path: Path, plan: JumpPlan, choice: Any) -> Summary:
    job = prepare_job(tree, EntryReader(path, tree), plan, choice.context_window, choice.reserve_tokens)
    if job.empty or not choice.is_model:
        if args.instructions and not job.empty:
            print("pitree: the offline summary cannot follow --instructions; they were not used", file=sys.stderr)
        return offline_summary(job)
    import asyncio

    from pitree.summary.backends.base import BackendError

    def progress(text: str) -> None:
        print(f"pitree: {text}", file=sys.stderr)

    try:
        return asyncio.run(model_summary(job, choice, args.instructions, on_retry=progress))
    except BackendError as exc:
        raise OpError(f"summary failed, nothing written: {exc}") from None


def cmd_branch(args: argparse.Namespace) -> int:
    path = Path(args.file).expanduser()
    tree, size = _prepare_file(path, args)
    target = resolve(tree, args.to)
    plan = plan_jump(tree, target)
    text = editor_text(EntryReader(path, tree).entry(target)) if plan.needs_editor_text else None
    if plan.noop:
        leaf = tree.leaf.id if tree.leaf else None
        message = "the leaf is already there; nothing written"
        _print(args, {"appended": None, "leaf": leaf, "editorText": text, "message": message})
        return 0
    for warning in write_warnings(path):
        print(make_safe(f"pitree: warning: {warning}", keep_newlines=False), file=sys.stderr)
    choice = _choice(args, tree, bool(plan.to_summarize))
    if choice.name == "none" or not plan.to_summarize:
        entry = marker_entry(tree, plan, plan.marker_reason)
    else:
        entry = summary_entry(tree, plan, _summary(args, tree, path, plan, choice))
    where = plan.new_leaf_id or "before the first entry"
    _confirm(f"Append a {entry['type']} entry to {path.name} so Pi continues at {where}?", args.yes)
    append_entry(path, entry, size)
    from_id = entry.get("fromId", entry.get("data", {}).get("fromId"))
    appended = {"id": entry["id"], "type": entry["type"], "parentId": entry["parentId"], "fromId": from_id}
    result: dict[str, Any] = {"appended": appended, "leaf": entry["id"], "editorText": text}
    if entry["type"] == "branch_summary":
        result["summary"] = entry["summary"]
    _print(args, result)
    return 0


def _refuse_clearing_nothing(path: Path, id_: str) -> None:
    """Checked before any migration: a refused clear must write nothing, not even the rewrite."""
    tree, _ = _load(path)
    check_clear(tree, resolve(tree, id_))


def cmd_label(args: argparse.Namespace) -> int:
    path = Path(args.file).expanduser()
    if args.text is None and not args.clear:
        raise OpError("give a label TEXT, or --clear to remove the label")
    if args.text is not None and args.clear:
        raise OpError("give either a label TEXT or --clear, not both")
    if args.clear:
        _refuse_clearing_nothing(path, args.id)  # before any migration: nothing may be written
    tree, size = _prepare_file(path, args)
    target = resolve(tree, args.id)
    entry = plan_label(tree, path, target, None if args.clear else args.text)
    label = entry.get("label")
    _confirm(f"Append a label entry to {path.name}?", args.yes)
    append_entry(path, entry, size)
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
        choices=SUMMARIZERS,
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
