"""What every CLI command shares: the one-line error (`CliError`), JSON and text output, loading a session
and resolving an entry id, and the demo session's temporary copy. Commands import this, never `cli.main`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pitree.session.text import json_safe

if TYPE_CHECKING:
    from pitree.session.load import SessionBuilder
    from pitree.session.tree import SessionTree


class CliError(Exception):
    """A one-line message for the user; exit status 1."""


def emit_json(data: Any) -> None:
    out = json_safe(orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS))
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()


def console() -> Any:
    """A rich Console for text output (rich is imported here, on the text paths only)."""
    from rich.console import Console

    # Piped output is for reading in full (less, grep): no cropping to 80 columns there.
    width = None if sys.stdout.isatty() else 400

    class _Console(Console):
        def on_broken_pipe(self) -> None:  # Rich exits 1 here; main() treats a closed pipe as success
            self.quiet = True
            raise BrokenPipeError

    return _Console(highlight=False, markup=False, emoji=False, soft_wrap=False, width=width)


def load(path_s: str) -> tuple[Path, SessionTree]:
    from pitree.session.gcpause import keep_out_of_collections
    from pitree.store.session_file import SessionFileError

    path = Path(path_s).expanduser()
    try:
        # the texts stay on the entries: a one-shot command reads each once (`SessionBuilder`)
        tree, _ = read_session(path, texts_apart=False)
    except SessionFileError as exc:
        raise CliError(str(exc)) from None
    keep_out_of_collections()  # one tree per process: later collections need not walk it
    return path, tree


def read_session(path: Path, texts_apart: bool = True) -> tuple[SessionTree, SessionBuilder]:
    """A one-shot read of the session at `path` (a last line without "\n" counts, as Pi reads it), its progress
    on stderr when that is a terminal and the read takes more than half a second. Raises SessionFileError."""
    from pitree.cli.progress import reading
    from pitree.store.session_file import load_session_fast

    show, clear = reading(path)
    try:
        return load_session_fast(path, show, final=True, texts_apart=texts_apart)
    finally:
        clear()


def resolve(tree: SessionTree, entry_id: str | None) -> Any:
    if entry_id is None:
        return None
    try:
        return tree.resolve(entry_id)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def demo_copy() -> Path:
    """Copy the shipped demo session to a fresh temporary folder, so the package is never modified; the folder
    is removed when this process exits (not by a forked parse child, which leaves through `os._exit`)."""
    import atexit
    import shutil
    import tempfile
    from importlib import resources

    folder = Path(tempfile.mkdtemp(prefix="pitree-demo-"))
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    target = folder / "demo.jsonl"
    with resources.as_file(resources.files("pitree.assets") / "demo.jsonl") as src:
        shutil.copyfile(src, target)
    return target
