"""Pi itself (npm @mariozechner/pi-coding-agent under Node.js), for round-trip and parity tests.

Skipped when node or the package is missing. The package is looked for in $PITREE_PI_NODE_MODULES,
then bench/node_modules (what `bench/setup_node.sh` installs, which `make test` runs first).
Pi 1.6 (npm @earendil-works/pi-coding-agent under its own Node 22) is found by tests/pi/pi1run.py instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("pi_session.mjs")


def node_modules() -> Path | None:
    for candidate in (os.environ.get("PITREE_PI_NODE_MODULES"), REPO / "bench" / "node_modules"):
        if candidate and (Path(candidate) / "@mariozechner" / "pi-coding-agent" / "package.json").is_file():
            return Path(candidate)
    return None


@pytest.fixture
def pi(tmp_path: Path):  # type: ignore[no-untyped-def]
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    modules = node_modules()
    if modules is None:
        pytest.skip("Pi's npm package is not installed (run bench/setup_node.sh)")

    def run(file: Path) -> dict:
        sessions = tmp_path / "pi-sessions"
        sessions.mkdir(exist_ok=True)
        out = subprocess.run(
            ["node", str(SCRIPT), str(modules), str(file), str(sessions)], capture_output=True, timeout=120
        )
        assert out.returncode == 0, out.stderr.decode()
        return orjson.loads(out.stdout.splitlines()[-1])

    return run
