"""`OpError`: the one error a user action raises, shown by the CLI on stderr and by the TUI as a notice."""

from __future__ import annotations


class OpError(Exception):
    """The action was refused or failed; the message is one line for the user, and nothing was written."""


class NeedsMigration(OpError):
    """The file is a pre-v3 session: Pi rewrites such files when it opens them, pitree only with consent."""

    def __init__(self, message: str, version: float) -> None:
        super().__init__(message)
        self.version = version
