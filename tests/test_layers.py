"""The layers point one way: the model, store, summary, report and CLI import neither textual nor rich
(rich is imported lazily, by the CLI's text output only). Checked in fresh interpreters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.sessions import assistant, entry, to_bytes, user

UI = ("textual", "rich")

CHECK = """
import sys
{body}
bad = sorted(m for m in sys.modules if m.split('.')[0] in {ui!r})
print(bad)
raise SystemExit(1 if bad else 0)
"""


def run_check(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHECK.format(body=body, ui=UI)], capture_output=True, text=True, timeout=120
    )


def test_core_packages_and_every_module_in_them() -> None:
    body = """
import importlib, pkgutil
import pitree, pitree.session, pitree.store, pitree.summary, pitree.cli.report, pitree.cli.main
for pkg in (pitree.session, pitree.store, pitree.summary):
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        importlib.import_module(info.name)
"""
    out = run_check(body)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_check_can_fail() -> None:
    out = run_check("import rich.text")
    assert out.returncode == 1 and "rich" in out.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["tree", "{f}", "--json"],
        ["tree", "{f}", "--json", "--filter", "all", "--search", "hi"],
        ["context", "{f}", "--json", "--no-tiktoken"],
        ["compactions", "{f}", "--json"],
        ["info", "{f}", "--json"],
    ],
)
def test_json_commands_do_not_load_rich(tmp_path: Path, argv: list[str]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        to_bytes(
            [
                user("u1", None),
                assistant("a1", "u1"),
                entry("compaction", "c1", "a1", summary="S", firstKeptEntryId="u1", tokensBefore=1),
            ]
        )
    )
    args = [a.replace("{f}", str(path)) for a in argv]
    body = f"""
import contextlib, io
from pitree.cli.main import main
buf = io.TextIOWrapper(io.BytesIO())
with contextlib.redirect_stdout(buf):
    code = main({args!r})
assert code == 0, code
"""
    out = run_check(body)
    assert out.returncode == 0, out.stdout + out.stderr
