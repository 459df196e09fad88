"""Pi 1.6's real CLI against tests/llm_server.py on 127.0.0.1, for sessions Pi writes itself: in print mode (`pi -p`)
and in RPC mode (`pi --mode rpc`: JSON commands on stdin, for what print mode cannot do: compaction, `!` bash).

Everything Pi reads or writes is under one temporary folder: HOME, PI_CODING_AGENT_DIR (holding a models.json that
names the provider `fake` at the server, with prices so that usage has a cost), the project's cwd.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.llm_server import FakeLLMServer, ok, tool_call
from tests.pi.pi1run import Pi1

PROVIDER, MODEL = "fake", "fake-model"


@dataclass
class PiCli:
    pi1: Pi1
    server: FakeLLMServer
    root: Path

    @property
    def agent_dir(self) -> Path:
        return self.root / "agent"

    @property
    def cwd(self) -> Path:
        return self.root / "project"

    def setup(self) -> PiCli:
        for d in (self.agent_dir, self.root / "home", self.cwd):
            d.mkdir(parents=True, exist_ok=True)
        model = {
            "id": MODEL,
            "contextWindow": 64000,
            "maxTokens": 4096,
            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
        }
        provider = {"baseUrl": self.server.openai_url, "api": "openai-completions", "apiKey": "test-key"}
        models = {"providers": {PROVIDER: {**provider, "models": [model]}}}
        (self.agent_dir / "models.json").write_text(json.dumps(models))
        return self

    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root / "home"),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            # Nothing from the network (CI has none but the registries): no version check, model catalog or telemetry.
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
        }

    def argv(self, *args: str | Path) -> list[str]:
        return [str(self.pi1.node), str(self.pi1.cli), "--provider", PROVIDER, "--model", MODEL, *map(str, args)]

    def run(self, *args: str | Path, timeout: float = 120) -> str:
        """`pi -p --provider fake --model fake-model ARGS...`; its stdout. A failure shows Pi's stderr."""
        env = self.env()
        argv = self.argv("-p", *args)
        out = subprocess.run(
            argv, cwd=self.cwd, env=env, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
        assert out.returncode == 0, f"pi {args}: exit {out.returncode}\n{out.stderr.decode(errors='replace')}"
        return out.stdout.decode()

    def sessions(self) -> list[Path]:
        """The session files Pi wrote in its default folder (per cwd under the agent dir)."""
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))


def make_session(cli: PiCli) -> Path:
    """Three turns: a new session; `--continue` with a tool call (read) and its result; `--session FILE` with
    fewer tools, an appended system prompt and a name."""
    (cli.cwd / "notes.txt").write_text("The forecast API is open-meteo.\n")
    cli.server.script(ok("Hello! What shall we build?"))
    assert "Hello! What shall we build?" in cli.run("Let's build a weather CLI.")
    (path,) = cli.sessions()
    cli.server.script(tool_call("read", {"path": "notes.txt"}), ok("The notes name open-meteo."))
    assert "open-meteo" in cli.run("--continue", "Read notes.txt first.")
    # Fewer tools and an appended prompt: Pi writes a system patch (toolsRemoved, a changed section); --name a title.
    cli.server.script(ok("Done: the CLI prints the temperature."))
    extra = ("--tools", "read,bash", "--append-system-prompt", "Answer briefly.", "--name", "Weather CLI")
    cli.run("--session", path, *extra, "Now write the CLI.")
    assert cli.sessions() == [path]
    return path


class PiRpc:
    """`pi --mode rpc --session FILE`: send a command, read its response (and for a prompt, wait until Pi settles).

    Use as a context manager; leaving it closes stdin and waits for Pi to exit (killed past the deadline)."""

    def __init__(self, cli: PiCli, session: Path, timeout: float = 120) -> None:
        self.timeout = timeout
        argv = cli.argv("--mode", "rpc", "--session", session)
        self.proc = subprocess.Popen(
            argv, cwd=cli.cwd, env=cli.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.count = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def __enter__(self) -> PiRpc:
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(self.timeout)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def _next(self, deadline: float) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError("Pi's RPC mode did not answer in time") from None
        if not line:
            assert self.proc.stderr is not None
            raise AssertionError(f"Pi's RPC mode exited: {self.proc.stderr.read().decode(errors='replace')}")
        return json.loads(line)  # type: ignore[no-any-return]

    def send(self, command: dict[str, Any]) -> dict[str, Any]:
        """The command's response data; for a started prompt, after Pi's `agent_settled` event."""
        self.count += 1
        rid = f"req-{self.count}"
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": rid, **command}).encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + self.timeout
        response = None
        while True:
            record = self._next(deadline)
            if record.get("type") == "response" and record.get("id") == rid:
                assert record.get("success"), f"{command['type']}: {record}"
                response = record.get("data") or {}
                if command["type"] != "prompt" or response.get("disposition") != "started":
                    return response
            elif record.get("type") == "agent_settled" and response is not None:
                return response


def make_rpc_session(cli: PiCli) -> tuple[Path, dict[str, Any]]:
    """A session from Pi's RPC mode: two turns, `!` and `!!` bash, a name, a real compaction (its summary from the
    fake server, with the checkpoint and usage), a turn after it. Also Pi's runtime `get_session_stats`."""
    path = cli.root / "rpc-session.jsonl"
    # Keep only the last few tokens, so that a short session has something to compact.
    (cli.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 30}}))
    with PiRpc(cli, path) as pi:
        cli.server.script(ok("Hello from RPC."))
        pi.send({"type": "prompt", "message": "Start the weather CLI."})
        pi.send({"type": "bash", "command": "echo kept-in-context"})
        pi.send({"type": "bash", "command": "echo not-in-context", "excludeFromContext": True})
        cli.server.script(ok("Saw the bash output."))
        pi.send({"type": "prompt", "message": "What did the command print?"})
        pi.send({"type": "set_session_name", "name": "RPC session"})
        cli.server.script(ok("## Goal\nA weather CLI.\n\n## Progress\n- [x] Two turns."))
        compacted = pi.send({"type": "compact"})
        assert compacted["summary"].startswith("## Goal")
        cli.server.script(ok("After the compaction."))
        pi.send({"type": "prompt", "message": "Go on."})
        stats = pi.send({"type": "get_session_stats"})
    return path, stats
