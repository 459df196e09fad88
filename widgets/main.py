"""The `pitree` program: the command line (`pitree.cli`) with the explorer plugged in.

app/ never imports widgets/, so the console script starts here and hands the CLI a way to open the TUI.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from pitree.cli.main import main as cli_main


def open_tui(path: Path | None, session_dir: str | None) -> int:
    """The explorer on `path`, or the sessions browser (under `session_dir`) when there is no file."""
    from pitree.widgets.app import run_app

    if path is not None:
        return run_app(path)
    from pitree.widgets.screens.browser import BrowserState

    return run_app(None, browser=BrowserState(session_dir=session_dir))


def main(argv: Sequence[str] | None = None) -> int:
    return cli_main(argv, tui=open_tui)


if __name__ == "__main__":
    sys.exit(main())
