"""Command-line defects a new user hit (issue #20): the demo's temporary folder, `--session-dir` before the
command, `pitree info`'s trailing spaces, sizes that read `1000.2 KB`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pitree.cli.main as cli
import pytest
from pitree.cli.main import hoist_session_dir, main
from pitree.session.text import human_size

from tests.sessions import user
from tests.unit.test_cli import DEMO, run
from tests.unit.test_session_index import ID_A1, ID_B1, write


def test_the_demo_folder_is_removed_when_pitree_exits(tmp_path: Path) -> None:
    script = "from pitree.cli.common import demo_copy; p = demo_copy(); print(p, p.exists(), flush=True)"
    env = {"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    path, existed = out.stdout.split()
    assert existed == "True" and Path(path).parent.parent == tmp_path
    assert not Path(path).parent.exists() and not list(tmp_path.glob("pitree-demo-*"))


def test_pitree_demo_opens_a_copy_that_is_then_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import atexit

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    registered: list = []
    monkeypatch.setattr(atexit, "register", lambda fn: registered.append(fn))
    opened: list[Path] = []
    monkeypatch.setattr(cli, "open_explorer", lambda path, tui: opened.append(path) or 0)
    assert main(["--demo"]) == 0
    assert opened[0].read_bytes() == DEMO.read_bytes() and opened[0].parent.parent == tmp_path
    for fn in registered:
        fn()
    assert not list(tmp_path.glob("pitree-demo-*"))


def test_session_dir_before_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    here = tmp_path / "here"
    here.mkdir()
    flat = tmp_path / "flat"
    write(flat, ID_A1, str(here), [user("u", None, "mine", t=1)], when=1)
    write(flat, ID_B1, "/other", [user("u", None, "theirs", t=2)], when=2)
    out = subprocess.run(
        [*cli_cmd(), "--session-dir", str(flat), "ls", "--all", "--json"],
        capture_output=True,
        cwd=here,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr.decode()
    assert sorted(s["title"] for s in json.loads(out.stdout)["sessions"]) == ["mine", "theirs"]
    assert hoist_session_dir([f"--session-dir={flat}", "search", "x"]) == ["search", "--session-dir", str(flat), "x"]
    assert hoist_session_dir(["ls", "--session-dir", "D"]) == ["ls", "--session-dir", "D"]


def cli_cmd() -> list[str]:
    from tests.unit.test_cli import PITREE

    return PITREE


def test_session_dir_before_a_command_that_takes_none_is_one_line() -> None:
    out = run("--session-dir", "/nowhere", "tree", DEMO)
    assert out.returncode == 1
    assert out.stderr.decode().strip() == (
        "pitree: error: --session-dir goes with ls, search or the sessions browser, not with `tree`"
    )


def test_info_text_has_no_trailing_spaces() -> None:
    out = run("info", DEMO)
    assert out.returncode == 0
    lines = out.stdout.decode().splitlines()
    assert lines and all(line == line.rstrip() for line in lines)
    assert lines[0].split(None, 1) == ["name", "weather-cli: caching & retries"]


@pytest.mark.parametrize(
    ("n", "shown"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.0 KB"),
        (79_770, "77.9 KB"),
        (1_023_900, "999.9 KB"),
        (1_024_000, "1.0 MB"),  # 1000.0 KB before
        (1_048_524, "1.0 MB"),  # 1023.9 KB
        (1_048_576, "1.0 MB"),
        (1_073_689_395, "1.0 GB"),  # 1023.95 MB
        (5 * 1024**4, "5120.0 GB"),
    ],
)
def test_human_size(n: int, shown: str) -> None:
    assert human_size(n) == shown


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_run_installs_the_runtime_only(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]

    def planned(target: str) -> str:
        out = subprocess.run(
            ["make", "-n", target, f"VENV={tmp_path / 'venv'}"], cwd=root, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    run_plan = planned("run")
    installs = [line for line in run_plan.splitlines() if "pip install" in line]
    assert installs and installs[-1].endswith('-e ".[llm,serve]"') and not any("[test" in i for i in installs)
    assert '-e ".[test,llm,serve]"' in planned("test")


def test_tree_text_has_no_fold_glyph() -> None:
    out = run("tree", DEMO)
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode()
    assert "├─ " in text and "⊟" not in text and "⊞" not in text


@pytest.mark.parametrize("width", [60, 68, 140])
def test_usage_per_model_shows_the_whole_model_name(width: int) -> None:
    from pitree.cli.usage_text import usage_tables
    from pitree.session.usage import usage_report
    from pitree.store.session_file import load_session_fast
    from rich.console import Console

    tree, _ = load_session_fast(Path(DEMO), save_cache=False)
    console = Console(width=width, record=True, color_system=None)
    console.print(usage_tables(usage_report(tree)))
    lines = console.export_text().splitlines()
    model = next(i for i, line in enumerate(lines) if "anthropic/claude-sonnet-4-5" in line)
    numbers = lines[model] if width >= 100 else lines[model + 1]  # narrow: the numbers on the next line
    assert "962,787" in numbers and "$1.4080" in numbers


@pytest.mark.parametrize(("width", "above"), [(90, True), (120, False), (160, False)])
def test_usage_per_segment_numbers_are_never_cut(width: int, above: bool) -> None:
    """A segment's text is cut so that its numbers fit (Rich's own squeeze cut them to "12,…"), or, with less
    than 32 columns left for it, goes on a line of its own above them."""
    from pitree.cli.usage_text import usage_tables
    from pitree.session.usage import usage_report
    from pitree.store.session_file import load_session_fast
    from rich.console import Console

    tree, _ = load_session_fast(Path(DEMO), save_cache=False)
    report = usage_report(tree)
    console = Console(width=width, record=True, color_system=None)
    console.print(usage_tables(report))
    lines = console.export_text().splitlines()
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("Per branch segment")) :]
    assert "cache write" in table[1] and "entries" in table[1]  # headers whole
    assert ("the name above its numbers" in table[0]) is above
    for seg in report["segments"]:
        at = next(i for i, line in enumerate(table) if seg["startId"] in line)
        row = table[at + 1] if "the name above its numbers" in table[0] else table[at]
        assert max(len(line) for line in table) <= width
        cells = [f"{seg[k]:,}" for k in ("messages", "input", "output", "cacheRead", "cacheWrite", "totalTokens")]
        assert row.split()[-8:] == [*cells, f"${seg['cost']:,.4f}", f"{seg['entries']:,}"], row
