"""Serve the explorer in a web browser through textual-serve, on 127.0.0.1 only.

`serve(["FILE"], port)` runs a local web server; every browser tab that opens it starts its own
`python -m pitree.cli FILE` (this interpreter) behind textual-serve's xterm.js page. `python -m pitree.serve
[--port N] FILE|--demo` is the same from a shell. textual-serve (and with it rich) is imported only when serving,
so importing this module keeps the core free of UI packages.
"""

from __future__ import annotations

import argparse
import errno
import logging
import shlex
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .session.text import make_safe

HOST = "127.0.0.1"  # the app can read and write session files: never reachable from another machine
DEFAULT_PORT = 8000
INSTALL_HINT = "pip install 'pitree[serve]'"

# textual-serve's page asks Google Fonts for Roboto Mono: offline that request fails (or hangs behind a
# firewall that drops packets) and the stylesheet blocks rendering. The font ships in its static folder.
_GOOGLE_FONTS = (
    '<link\n      rel="stylesheet"\n      href="https://fonts.googleapis.com/css?family=Roboto%20Mono"\n    />'
)
_LOCAL_FONTS = """<style>
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
        font-style: normal;
      }
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype");
        font-style: italic;
      }
    </style>"""


class ServeError(Exception):
    """A one-line message for the user: textual-serve missing, a bad port, the port taken."""


def app_command(command_args: Sequence[str]) -> str:
    """The shell command textual-serve runs per browser tab: this interpreter running pitree's CLI."""
    if "--serve" in command_args:
        raise ServeError("the served command must not itself serve")
    return shlex.join([sys.executable, "-m", "pitree.cli", *command_args])


def check_port(port: int) -> None:
    """Fail early with a clear message when `port` is out of range or taken on 127.0.0.1."""
    if not 1 <= port <= 65535:
        raise ServeError(f"port {port} is not between 1 and 65535")
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # aiohttp binds with SO_REUSEADDR too; without it here a port in TIME_WAIT would be refused for nothing.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((HOST, port))
    except OSError as exc:
        raise ServeError(_bind_message(port, exc)) from None
    finally:
        probe.close()


def _bind_message(port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} on {HOST} is already in use; choose another with --port"
    if exc.errno == errno.EACCES:
        return f"port {port} on {HOST} needs privileges; choose one above 1023 with --port"
    return f"cannot listen on {HOST}:{port}: {exc.strerror or exc}"


def _server_class() -> Any:
    try:
        import aiohttp_jinja2
        import jinja2
        from textual_serve.server import Server
    except ImportError:
        raise ServeError(f"serving needs textual-serve: {INSTALL_HINT}") from None

    class OfflineLoader(jinja2.FileSystemLoader):
        """textual-serve's page template, with the web font taken from its own static folder."""

        def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Any]:
            source, filename, uptodate = super().get_source(environment, template)
            return source.replace(_GOOGLE_FONTS, _LOCAL_FONTS), filename, uptodate

    class PitreeServer(Server):  # type: ignore[misc, valid-type]
        """textual-serve's server with a page that needs nothing but this server, and a one-line banner."""

        async def _make_app(self) -> Any:
            app = await super()._make_app()
            aiohttp_jinja2.setup(app, loader=OfflineLoader(self.templates_path))
            return app

        def initialize_logging(self) -> None:
            super().initialize_logging()
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # a line per static file is noise here

        async def on_startup(self, app: Any) -> None:
            print(f"pitree: serving {self.title} on {self.public_url}  (Ctrl+C to stop)", flush=True)

    return PitreeServer


def serve(command_args: Sequence[str], port: int = DEFAULT_PORT, *, title: str | None = None) -> None:
    """Serve `pitree <command_args>` (e.g. `[FILE]`) on http://127.0.0.1:`port` until Ctrl+C or SIGTERM.

    Raises ServeError when textual-serve is not installed or the port cannot be used.
    """
    server_class = _server_class()
    check_port(port)
    command = app_command(command_args)
    server = server_class(command, host=HOST, port=port, title=title or "pitree")
    try:
        server.serve()
    except OSError as exc:  # lost the race for the port after check_port
        raise ServeError(_bind_message(port, exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pitree.serve", description=f"Serve the pitree explorer in a browser on {HOST} only."
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="a Pi session file to open")
    parser.add_argument("--demo", action="store_true", help="serve the bundled demo session (a temporary copy)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port on {HOST} (default {DEFAULT_PORT})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.demo == bool(args.file):
            raise ServeError("give a session FILE or --demo")
        if args.demo:
            from .cli import demo_copy

            path = demo_copy()
        else:
            path = Path(args.file).expanduser().resolve()
        if not path.exists():
            raise ServeError(f"{path}: no such file")
        if path.is_dir():
            raise ServeError(f"{path}: is a directory, not a session file")
        # One demo copy for every tab: the served command gets the path, not --demo.
        serve([str(path)], args.port, title=f"pitree — {path.name}")
    except ServeError as exc:
        print(f"pitree: error: {make_safe(str(exc), keep_newlines=False)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
