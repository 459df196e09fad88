"""Pi 1.6's real CLI in print mode (`pi -p`) against tests/llm_server.py on 127.0.0.1, for sessions Pi writes itself.

Everything Pi reads or writes is under one temporary folder: HOME, PI_CODING_AGENT_DIR (holding a models.json that
names the provider `fake` at the server, with prices so that usage has a cost), the project's cwd.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

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

    def run(self, *args: str | Path, timeout: float = 120) -> str:
        """`pi -p --provider fake --model fake-model ARGS...`; its stdout. A failure shows Pi's stderr."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root / "home"),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PI_SKIP_VERSION_CHECK": "1",
        }
        argv = [str(self.pi1.node), str(self.pi1.cli), "-p", "--provider", PROVIDER, "--model", MODEL, *map(str, args)]
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
