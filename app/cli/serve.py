"""Serve the explorer in a web browser through textual-serve, on 127.0.0.1 only.

`serve(["FILE"], port)` runs a local web server; every browser tab that opens it starts its own
`python -P -m pitree.widgets.main FILE` (this interpreter; `-P`: the current folder is not put on `sys.path`, so a
`pitree` folder there, as in a fresh clone, cannot shadow the installed package) behind textual-serve's xterm.js
page. `python -m pitree.cli.serve [--port N] FILE|--demo` is the same from a shell. textual-serve (and with it rich) is
imported only when serving, so importing this module keeps the core free of UI packages.

The server has no login, and the app reads sessions and appends to them, so every request must show:
- a `Host` of `127.0.0.1:PORT` or `localhost:PORT` (a DNS-rebinding page reaches 127.0.0.1 under its own name);
- an `Origin`, when the browser sends one (it always does for a WebSocket), of the same (another site's page);
- the per-run secret, the first path segment of every URL (`http://127.0.0.1:PORT/SECRET/`, printed at start),
  compared in constant time: another local user or process cannot guess it.
Anything else gets 403 and nothing else.
"""

from __future__ import annotations

import argparse
import errno
import hmac
import logging
import secrets
import shlex
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pitree.session.text import make_safe

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
    return shlex.join([sys.executable, "-P", "-m", "pitree.widgets.main", *command_args])


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

    from aiohttp import web

    class PitreeServer(Server):  # type: ignore[misc, valid-type]
        """textual-serve's server with a page that needs nothing but this server, every route under the per-run
        secret behind the Host/Origin/secret check, and a one-line banner."""

        secret = secrets.token_urlsafe(24)

        async def _make_app(self) -> Any:
            app = web.Application(middlewares=[self._guard])
            aiohttp_jinja2.setup(app, loader=OfflineLoader(self.templates_path))
            base = f"/{self.secret}"
            app.add_routes(
                [  # textual-serve's routes (Server._make_app), under the secret; its page builds URLs from these
                    web.get(f"{base}/", self.handle_index, name="index"),
                    web.get(f"{base}/ws", self.handle_websocket, name="websocket"),
                    web.get(base + "/download/{key}", self.handle_download, name="download"),
                    web.static(f"{base}/static", self.statics_path, show_index=False, name="static"),
                ]
            )
            app.on_startup.append(self.on_startup)
            app.on_shutdown.append(self.on_shutdown)
            return app

        @web.middleware
        async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
            headers = request.headers
            why = refusal(headers.get("Host"), headers.get("Origin"), request.path, self.port, self.secret)
            if why is not None:
                raise web.HTTPForbidden(text=f"pitree: {why}\n")
            response: web.StreamResponse = await handler(request)
            return response

        def initialize_logging(self) -> None:
            super().initialize_logging()
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # a line per static file is noise here

        async def on_startup(self, app: Any) -> None:
            line = f"pitree: serving {self.title} on {self.public_url}/{self.secret}/  (Ctrl+C to stop)"
            print(make_safe(line, keep_newlines=False), flush=True)

    return PitreeServer


def refusal(host: str | None, origin: str | None, path: str, port: int, secret: str) -> str | None:
    """Why a request to the server on `port` is refused (None: allowed); see the module docstring."""
    hosts = (f"127.0.0.1:{port}", f"localhost:{port}")
    if host is None or host.lower() not in hosts:
        return "wrong Host (open the URL pitree printed)"
    if origin is not None and origin.lower() not in tuple(f"http://{h}" for h in hosts):
        return "requests from other sites are refused"
    first = path.lstrip("/").split("/", 1)[0]
    if not hmac.compare_digest(first.encode(), secret.encode()):
        return "unknown path (open the URL pitree printed: it holds this run's secret)"
    return None


def serve(command_args: Sequence[str], port: int = DEFAULT_PORT, *, title: str | None = None) -> None:
    """Serve `pitree <command_args>` (e.g. `[FILE]`) on http://127.0.0.1:`port` until Ctrl+C or SIGTERM.

    Raises ServeError when textual-serve is not installed or the port cannot be used.
    """
    server_class = _server_class()
    check_port(port)
    command = app_command(command_args)
    server = server_class(command, host=HOST, port=port, title=make_safe(title or "pitree", keep_newlines=False))
    try:
        server.serve()
    except OSError as exc:  # lost the race for the port after check_port
        raise ServeError(_bind_message(port, exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pitree.cli.serve", description=f"Serve the pitree explorer in a browser on {HOST} only."
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
            from pitree.cli.common import demo_copy

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
