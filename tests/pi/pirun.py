"""Running the real Pi (tests/pi/pi_dump.mjs) and pitree's CLI on the same session file, for parity tests.

Pi's npm package is found through $PITREE_PI_NODE_MODULES, bench/node_modules (bench/setup_node.sh installs it
there) or /tmp/pinode/node_modules; without it, or without `node`, the tests that need it skip.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DUMP = Path(__file__).with_name("pi_dump.mjs")
PACKAGE = Path("@mariozechner") / "pi-coding-agent" / "dist" / "index.js"
WIDTH = 4000  # wide enough that Pi never truncates a row
PITREE = ["pitree"]
FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")


def pi_node_modules() -> Path | None:
    candidates = [
        os.environ.get("PITREE_PI_NODE_MODULES"),
        ROOT / "bench" / "node_modules",
        "/tmp/pinode/node_modules",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / PACKAGE).is_file():
            return Path(candidate)
    return None


def require_pi() -> Path:
    """The node_modules holding Pi, or skip the test."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    modules = pi_node_modules()
    if modules is None:
        pytest.skip("Pi's npm package is not installed (bench/setup_node.sh, or set PITREE_PI_NODE_MODULES)")
    return modules


def pi_dump(path: Path, prepare: tuple[str, str, int] | None = None) -> dict[str, Any]:
    """What Pi makes of `path` (see pi_dump.mjs). Pi only ever sees a temporary copy of the file."""
    modules = require_pi()
    before = path.read_bytes()
    args = ["node", str(DUMP), str(path), str(WIDTH)]
    if prepare is not None:
        args += ["--prepare", prepare[0], prepare[1], str(prepare[2])]
    env = {**os.environ, "PITREE_PI_NODE_MODULES": str(modules)}
    out = subprocess.run(args, capture_output=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr.decode()
    assert path.read_bytes() == before, "Pi changed the original file"
    return orjson.loads(out.stdout)  # type: ignore[no-any-return]


def pitree(*args: str | Path) -> subprocess.CompletedProcess[bytes]:
    """Run pitree's CLI entry point in this process (as a pipe would see it: not a terminal).

    In-process because the parity tests run it a dozen times per file; tests/unit/test_cli.py runs the
    installed command in subprocesses.
    """
    argv = [str(a) for a in args]
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    out.flush()
    stdout = out.buffer.getvalue()  # type: ignore[attr-defined]
    return subprocess.CompletedProcess([*PITREE, *argv], code, stdout, err.getvalue().encode())


def pitree_json(*args: str | Path) -> Any:
    out = pitree(*args, "--json")
    assert out.returncode == 0, out.stderr.decode()
    return orjson.loads(out.stdout)


def pitree_rows(path: Path, mode: str, pi073_session_info: bool = True) -> list[str]:
    """`pitree tree FILE --filter MODE` text rows in Pi's form.

    Normalised, because they differ on purpose: the trailing `  <id>` and ` ← leaf` are dropped;
    session_info rows, which Pi hides outside "all" (pitree shows them), are dropped there, and elsewhere
    `[name: X]` / `[name: (empty)]` become Pi's `[title: X]` / `[title: empty]` (pitree also trims the name's
    whitespace, as in every other row; rows_match does the same to Pi's). A row the 400-column text output
    cropped ends in `…` and is compared as a prefix (see rows_match). `pi073_session_info=False` leaves
    session_info rows as they are (Pi 1.x draws them as pitree must: tests/pi/test_pi1_parity.py).
    """
    data = pitree_json("tree", path, "--filter", mode)
    rows, leaf = data["rows"], data["leaf"]
    out = pitree("tree", path, "--filter", mode)
    assert out.returncode == 0, out.stderr.decode()
    lines = out.stdout.decode().splitlines()[1 : 1 + len(rows)]
    assert len(lines) == len(rows)
    # The text output leaves out the explorer's fold mark `⊟` (Pi's /tree draws it): the layout's own gutter
    # (the same length) puts it back, so where pitree marks a foldable row is still compared with Pi.
    gutters = _gutters(path, mode)
    assert len(gutters) == len(rows)
    result = []
    for line, row, gutter in zip(lines, rows, gutters, strict=True):
        assert line[: len(gutter)] == gutter.replace("⊟", "─")
        line = (gutter + line[len(gutter) :]).rstrip()
        suffix = (" ← leaf" if row["id"] == leaf else "") + "  " + row["id"]
        if line.endswith("…"):  # cropped, maybe inside the suffix: drop whatever part of it is left
            body = line[:-1]
            for k in range(len(suffix), 1, -1):
                if body.endswith(suffix[:k]):
                    body = body[:-k]
                    break
            line = body + "…"
        else:
            line = line.removesuffix(suffix)
        if row["type"] == "session_info" and pi073_session_info:
            if mode != "all":
                continue
            line = line.replace("[name: (empty)]", "[title: empty]").replace("[name: ", "[title: ")
        result.append(line.rstrip())
    return result


def _gutters(path: Path, mode: str) -> list[str]:
    from pitree.session.layout import build_layout
    from pitree.store.session_file import load_session_fast

    tree, _ = load_session_fast(path, save_cache=False)
    layout = build_layout(tree, mode)
    return [layout.prefix(i) for i in range(len(layout.rows))]


_TITLE = re.compile(r"\[title: (.*)\]$", re.S)


def _pi_title(row: str) -> str:
    return _TITLE.sub(lambda m: "[title: " + m.group(1).replace("\n", " ").replace("\t", " ").strip() + "]", row)


def rows_match(pitree_rows: list[str], pi_rows: list[str]) -> bool:
    if len(pitree_rows) != len(pi_rows):
        return False
    for mine, theirs in zip(pitree_rows, pi_rows, strict=True):
        theirs = _pi_title(theirs.rstrip())
        if mine.endswith("…"):
            if not theirs.startswith(mine[:-1]):
                return False
        elif mine != theirs:
            return False
    return True
