"""Every key the help screen names exists: the tables' keys are bindings of the explorer, the tree, or the
dialog the line is about; and the jump dialog's keys and the sessions browser's are all in the help."""

from __future__ import annotations

import re
from importlib import resources

from pitree.widgets.app import PitreeApp
from pitree.widgets.explorer import Explorer
from pitree.widgets.screens.browser import BrowserScreen
from pitree.widgets.screens.jump_dialog import JumpDialog
from pitree.widgets.screens.rows_table import RowsTable
from pitree.widgets.tree_view import TreeView
from textual.binding import Binding

NAMES = {"↑": "up", "↓": "down", "←": "left", "→": "right", "pgup": "pageup", "pgdn": "pagedown", "esc": "escape"}
NOT_BINDINGS = {"click", "scroll", "double click", "ctrl+p"}  # the mouse, and Textual's own palette key


def keys_of(bindings: list) -> set[str]:  # type: ignore[type-arg]
    out: set[str] = set()
    for b in bindings:
        if isinstance(b, Binding):
            out.update(k.strip() for k in b.key.split(","))
        else:
            out.update(k.strip() for k in b[0].split(","))
    return out


def binding_name(shown: str) -> str:
    key = shown.strip()
    if key.lower().startswith("shift+") and len(key) == 7:
        return key[-1].upper()
    if key in ("/", "?"):
        return {"/": "slash", "?": "question_mark"}[key]
    if len(key) == 1:
        return NAMES.get(key, key)
    return "+".join(NAMES.get(p.lower(), NAMES.get(p, p.lower())) for p in key.split("+"))


def test_every_key_in_the_help_tables_is_bound() -> None:
    help_md = (resources.files("pitree.assets") / "help.md").read_text(encoding="utf-8")
    bound = keys_of(PitreeApp.BINDINGS) | keys_of(Explorer.BINDINGS) | keys_of(TreeView.BINDINGS)
    cells = re.findall(r"^\| ([^|]+) \| [^|]+ \|$", help_md, re.M)
    named = [k for cell in cells if cell not in ("key", "---") for k in re.split(r" / |, | or |\(or ", cell)]
    missing = []
    for shown in named:
        shown = shown.strip(" )")
        if shown.lower() in NOT_BINDINGS or not shown:
            continue
        if binding_name(shown) not in bound:
            missing.append(shown)
    assert not missing and len(named) > 30, missing


def test_the_jump_dialogs_keys_are_in_the_help() -> None:
    help_md = (resources.files("pitree.assets") / "help.md").read_text(encoding="utf-8")
    para = help_md.split("The jump dialog says", 1)[1].split("\n\n", 1)[0]
    listed = {binding_name(k) for k in re.findall(r"(?:^|[ ,:\n])((?:Ctrl\+)?[A-Za-z]|Esc)(?= )", para)}
    for key in keys_of(JumpDialog.BINDINGS):
        assert key in listed, key


def test_the_sessions_browsers_keys_are_in_the_help() -> None:
    help_md = (resources.files("pitree.assets") / "help.md").read_text(encoding="utf-8")
    para = help_md.split("# Sessions browser", 1)[1].split("\n\n", 1)[0]
    shown = re.findall(r"(?:^|[\s(])(↑|↓|PgUp|PgDn|Home|End|Enter|Esc|Tab|/|[a-z])(?=[ ),.;:])", para)
    listed = {binding_name(k) for k in shown}
    for key in keys_of(BrowserScreen.BINDINGS) | keys_of(RowsTable.BINDINGS):
        assert key in listed, key
