"""pitree against Pi 1.6's own code (tests/pi/pi1_dump.mjs under Node 22) on sessions Pi 1.6 itself wrote.

Sessions: written by Pi's SessionManager with every Pi 1.x entry type (pi1_gen.mjs: kitchen, named, random), written
by Pi's CLI in print mode against the fake model server (pi1cli.py: a tool call, real usage, a system patch, a name),
../shared/corpus/pi1-cli-session.jsonl, and files of Pi 0.x as Pi 1.6 reads them. Compared: the leaf, the active
branch, getTree() (children in Pi's order), labels, the name, the /tree rows of every filter as Pi 1.6's
TreeSelectorComponent draws them (only pitree's ` ← leaf` and trailing id dropped: tests/pi/pirun.py); with EVERY
entry as the leaf, the context (role, source entry, Pi's estimateTokens per message), model, thinking level, the
system head's estimate and the context size (estimateProjectedContextTokens, with its usage and trailing parts); the
totals (getSessionStats: tokens as the sum of the four parts, cost) and the per-model breakdown
(getUsageCostBreakdown, with Pi's "Tools/summaries" bucket), through the Python API and through the CLI's JSON
(`pitree context/usage/info --json`).
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.store.model_info import context_window

from tests.llm_server import FakeLLMServer
from tests.pi.pi1cli import PiCli, make_rpc_session, make_session
from tests.pi.pi1run import (
    ROOT,
    pi1_dump,
    pi1_generate,
    pi_leaf,
    pi_session,
    pi_totals,
    pitree_leaf,
    pitree_leaves,
    pitree_session,
    pitree_totals,
    require_pi1,
    totals_match,
)
from tests.pi.pirun import FILTERS, pitree_json, pitree_rows, rows_match

pytestmark = pytest.mark.node

CORPUS = Path(os.environ.get("PITREE_CORPUS") or ROOT.parent / "shared" / "corpus")
SCENARIOS = ["kitchen", "nulls", "named", "random:1:300", "random:2:300", "random:3:150"]


def differences(path: Path, pi: dict[str, Any]) -> list[str]:
    """Every way pitree's reading of `path` differs from Pi's (`pi` = pi1_dump(path)), one readable item each."""
    problems = []
    mine_session, pi_sess = pitree_session(path), pi_session(pi)
    for key in pi_sess:
        if mine_session[key] != pi_sess[key]:
            problems.append(f"{key}: pitree {mine_session[key]!r}, Pi {pi_sess[key]!r}")
    for mode in FILTERS if "rows" in pi else ():
        mine_rows, theirs = pitree_rows(path, mode, pi073_session_info=False), pi["rows"][mode]
        if not rows_match(mine_rows, theirs):
            diff = difflib.unified_diff([r.rstrip() for r in theirs], mine_rows, "Pi", "pitree", n=1, lineterm="")
            problems.append(f"/tree rows, filter {mode}:\n" + "\n".join(list(diff)[:40]))
    mine_totals, pi_tot = pitree_totals(path), pi_totals(pi)
    if not totals_match(mine_totals, pi_tot):
        problems.append(f"totals:\n  pitree {mine_totals}\n  Pi     {pi_tot}")
    mine = pitree_leaves(path)
    if sorted(mine) != sorted(pi["leaves"]):
        problems.append(f"entries: pitree has {sorted(mine)}, Pi {sorted(pi['leaves'])}")
    wrong = [leaf for leaf in pi["leaves"] if leaf in mine and mine[leaf] != pi_leaf(pi["leaves"][leaf])]
    if wrong:
        first = wrong[0]
        problems.append(
            f"context differs at {len(wrong)} of {len(mine)} leaves "
            f"({', '.join(w or 'file leaf' for w in wrong[:8])}{', ...' if len(wrong) > 8 else ''}); "
            f"at {first or 'the file leaf'}:\n  pitree {mine[first]}\n  Pi     {pi_leaf(pi['leaves'][first])}"
        )
    return problems


def assert_same_as_pi1(path: Path, rows: bool = True) -> dict[str, Any]:
    pi = pi1_dump(path, rows=rows)
    problems = differences(path, pi)
    if problems:
        pytest.fail(f"{path.name}: pitree differs from Pi 1.6:\n" + "\n".join(problems), pytrace=False)
    return pi


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, str]]]:
    """Each scenario written once by Pi 1.6 (the tests copy nothing: they only read these files)."""
    folder = tmp_path_factory.mktemp("pi1-generated")
    out = {}
    for scenario in SCENARIOS:
        path = folder / (scenario.replace(":", "-") + ".jsonl")
        out[scenario] = (path, pi1_generate(scenario, path))
    return out


@pytest.fixture(scope="module")
def cli_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pi1 = require_pi1()
    with FakeLLMServer() as server:
        return make_session(PiCli(pi1, server, tmp_path_factory.mktemp("pi1-cli")).setup())


@pytest.fixture(scope="module")
def rpc_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    pi1 = require_pi1()
    with FakeLLMServer() as server:
        return make_rpc_session(PiCli(pi1, server, tmp_path_factory.mktemp("pi1-rpc")).setup())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_generated_sessions_match_pi1(generated: dict[str, tuple[Path, dict[str, str]]], scenario: str) -> None:
    path, _ = generated[scenario]
    assert_same_as_pi1(path, rows=scenario != "nulls")  # Pi's /tree throws on a custom_message with null content


def test_cli_session_matches_pi1(cli_session: Path) -> None:
    assert_same_as_pi1(cli_session)


def test_rpc_session_matches_pi1(rpc_session: tuple[Path, dict[str, Any]]) -> None:
    """Pi's RPC mode: `!`/`!!` bash executions, a name, a real compaction (checkpoint, usage) and a turn after it."""
    path, _ = rpc_session
    assert_same_as_pi1(path)


def test_dump_agrees_with_pi_runtime_stats(rpc_session: tuple[Path, dict[str, Any]]) -> None:
    """pi1_dump.mjs's totals and context size are what the running Pi reports (RPC get_session_stats)."""
    path, runtime = rpc_session
    pi = pi1_dump(path, leaves=[])
    assert pi["stats"] == {k: v for k, v in runtime.items() if k not in ("sessionFile", "sessionId", "contextUsage")}
    assert runtime["contextUsage"]["tokens"] == pi["leaves"][""]["context"]["tokens"]
    types = [orjson.loads(line)["type"] for line in path.read_bytes().splitlines()]
    assert "compaction" in types and "session_info" in types


def test_corpus_cli_session_matches_pi1(tmp_path: Path) -> None:
    source = CORPUS / "pi1-cli-session.jsonl"
    if not source.is_file():
        pytest.skip(f"{source} is not present")
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    pi = assert_same_as_pi1(path)
    assert pi["leaves"][""]["context"]["tokens"] == 1437  # what Pi sends: the system message counts


def test_pitree_cli_json_matches_pi1(generated: dict[str, tuple[Path, dict[str, str]]], cli_session: Path) -> None:
    """The same through the command line (`context --leaf`, `usage`, `info`), on a few leaves."""
    path, ids = generated["kitchen"]
    for file, leaves in ((path, [ids["main2"], ids["side1"], ids["a12"], ids["e9"]]), (cli_session, None)):
        pi = pi1_dump(file, leaves=leaves or [])
        for leaf in [None, *(leaves or [])]:
            args = ["--leaf", leaf] if leaf else []
            report = pitree_json("context", file, *args, "--no-tiktoken")
            assert pitree_leaf(report) == pi_leaf(pi["leaves"][leaf or ""]), leaf
        usage = pitree_json("usage", file)
        theirs = pi_totals(pi)
        assert usage["total"]["totalTokens"] == theirs["tokens"]
        assert abs(usage["total"]["cost"] - theirs["cost"]) <= 1e-6
        models = {k: m["totalTokens"] for k, m in usage["models"].items() if m["totalTokens"] or m["cost"]}
        assert models == {k: m["tokens"] for k, m in theirs["models"].items()}
        info = pitree_json("info", file)
        assert info["leaf"] == pi["leafId"] and info["session"]["name"] == pi["name"]
        assert info["labels"] == len(pi["labels"])
        assert info["usage"]["totalTokens"] == theirs["tokens"] and abs(info["usage"]["cost"] - theirs["cost"]) <= 1e-6
        info_models = {k: m["totalTokens"] for k, m in info["models"].items() if m["totalTokens"] or m["cost"]}
        assert info_models == models


# ---- the harness itself: the files hold what the comparisons above claim to cover -----------------------------


def test_kitchen_covers_every_pi1_entry(generated: dict[str, tuple[Path, dict[str, str]]]) -> None:
    """Checked on Pi's own reading, so a generator that stopped writing something is noticed."""
    path, ids = generated["kitchen"]
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    by_id = {e.get("id"): e for e in lines}
    types = {e["type"] for e in lines}
    assert types >= {
        "session",
        "message",
        "model_change",
        "thinking_level_change",
        "usage",
        "context_edit",
        "compaction",
        "branch_summary",
        "label",
        "session_info",
        "custom",
        "custom_message",
    }
    roles = {e["message"]["role"] for e in lines if e["type"] == "message"}
    assert roles == {"system", "user", "assistant", "toolResult", "bashExecution"}
    assert by_id[ids["s2"]]["message"]["toolsRemoved"] == [{"name": "bash"}]
    assert by_id[ids["s2"]]["message"]["sections"]["cwd"] is None
    assert "systemMessage" in by_id[ids["c1"]] and by_id[ids["c1"]]["usage"]["input"] == 4000
    assert by_id[ids["c3"]]["firstKeptEntryId"] == ids["c3"]  # retain-none
    assert by_id[ids["bs1"]]["fromId"] == ids["main1"] and by_id[ids["bs1"]]["usage"]["output"] == 7
    assert by_id[ids["e2"]]["replacement"] == {"content": [{"type": "text", "text": "I read weather/cli.py."}]}
    assert by_id[ids["e3"]]["replacement"] is None
    assert by_id[ids["u3"]]["message"]["content"] is None
    assert by_id[ids["r1"]]["message"]["nestedCalls"]["calls"][0]["name"] == "bash"
    assert by_id[ids["bx1"]]["message"]["excludeFromContext"] is True

    pi = pi1_dump(path, leaves=[ids["main1"], ids["main2"], ids["side1"], ids["a12"]])
    leaves = pi["leaves"]
    # SPEC-pi1 C: edits (omit and replace, the last one wins), the checkpoint first, one summary, retain-none.
    main1 = leaves[ids["main1"]]["messages"]
    sources = [m[1] for m in main1]
    assert ids["r1"] not in sources and ids["a2"] not in sources  # omitted by e3 and e6
    assert ids["u1"] in sources and ids["a1"] in sources and ids["cm1"] in sources  # replaced
    side = [m[1] for m in leaves[ids["side1"]]["messages"]]
    assert ids["u1"] not in side and ids["a2"] in side  # e8 omits u1 only on the side branch
    main2 = leaves[ids["main2"]]["messages"]
    assert [m[0] for m in main2[:2]] == ["system", "compactionSummary"] and main2[0][1] == main2[1][1] == ids["c2"]
    assert [m[1] for m in main2].count(ids["c1"]) == 0  # the older compaction in the kept range adds nothing
    a12 = leaves[ids["a12"]]
    assert [m[1] for m in a12["messages"]][:2] == [ids["c3"], ids["c3"]] and a12["thinkingLevel"] == "max"
    assert pi["name"] is None and pi["labels"] == {ids["a2"]: "plan"}
    assert {b["key"] for b in pi["breakdown"]} >= {"Tools/summaries", "anthropic/claude-sonnet-4-5-20250929"}
    # Context size: the last valid usage counts only when no edit or compaction comes after it.
    assert leaves[ids["main1"]]["context"]["lastUsageIndex"] is not None
    assert leaves[ids["main2"]]["context"]["lastUsageIndex"] is not None


def test_cli_session_is_a_real_pi1_session(cli_session: Path) -> None:
    pi = pi1_dump(cli_session, leaves=[])
    roles = [m[0] for m in pi["leaves"][""]["messages"]]
    assert roles == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "system",
        "user",
        "assistant",
    ]
    assert pi["name"] == "Weather CLI"
    assert pi["stats"]["tokens"]["total"] > 0 and pi["stats"]["cost"] > 0 and pi["stats"]["toolCalls"] == 1
    assert pi["leaves"][""]["context"]["lastUsageIndex"] == len(roles) - 1


def test_context_windows_are_pi1_registry() -> None:
    """assets/context_windows.json (bench/context_windows.mjs) gives every model of pi-ai 1.6 its window."""
    pi1 = require_pi1()
    script = (
        "const [url] = process.argv.slice(1); const { MODELS } = await import(url); const out = {};"
        "for (const p in MODELS) for (const id in MODELS[p]) { const w = MODELS[p][id].contextWindow;"
        " if (Number.isInteger(w) && w > 0) (out[p] ??= {})[id] = w; }"
        "process.stdout.write(JSON.stringify(out));"
    )
    registry = pi1.modules / "@earendil-works" / "pi-ai" / "dist" / "models.generated.js"
    out = subprocess.run(
        [str(pi1.node), "--input-type=module", "-e", script, registry.as_uri()], capture_output=True, timeout=60
    )
    assert out.returncode == 0, out.stderr.decode()
    windows = orjson.loads(out.stdout)
    assert sum(map(len, windows.values())) > 1000
    wrong = {
        f"{p}/{i}": (w, context_window(p, i))
        for p, models in windows.items()
        for i, w in models.items()
        if context_window(p, i) != w
    }
    assert not wrong, f"stale assets/context_windows.json (run node bench/context_windows.mjs): {wrong}"


# ---- Pi 0.x files, as Pi 1.6 reads them -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["demo", "kitchen-sink", "compactions", "random-7", "v2"])
def test_pi0_files_match_pi1(tmp_path: Path, name: str) -> None:
    """Pi 1.6 opens files of Pi 0.x (v3, and v2 whose ids it keeps) by the same rules; pitree must agree."""
    from tests.pi.test_pi_parity import compactions_session, kitchen_sink, random_session, write
    from tests.sessions import fork_session, message

    if name == "demo":
        path = tmp_path / "demo.jsonl"
        shutil.copyfile(ROOT / "assets" / "demo.jsonl", path)
    elif name == "v2":
        hook = message("h1", "a2", "hookMessage", customType="x", content="hooked", display=True, t=9)
        path = write(tmp_path, "v2.jsonl", [*fork_session(), hook], version=2)
    else:
        make = {"kitchen-sink": kitchen_sink, "compactions": compactions_session}.get(name)
        path = write(tmp_path, f"{name}.jsonl", make() if make else random_session(7, 300))
    assert_same_as_pi1(path)
