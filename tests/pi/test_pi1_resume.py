"""Pi 1.6 resumes where pitree jumped: `pitree branch` on a Pi-1.6-made session appends what Pi's own /tree
navigation would write, and Pi (its SessionManager, and its CLI against the fake model server) continues from there.
Also `pitree label` (Pi's appendLabelChange line) and `pitree export --format jsonl` (Pi 1.6 opens the file with the
context it had at that leaf), read back by Pi 1.6.

Expected values come from Pi's code (tests/pi/pi1_jump.mjs: AgentSession.navigateTree for the new leaf and the editor
text, collectEntriesForBranchSummary + prepareBranchEntries + computeFileLists for the summary's file lists,
SessionManager.branchWithSummary for the line itself). Two intended differences: "no summary" appends pitree's `custom`
marker (Pi moves its leaf in memory only, which a file cannot say), and pitree writes no `fromHook: false` (Pi reads a
missing fromHook as false). The budget is Pi's default, (128000 - 16384) tokens, as pitree's.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.llm_server import FakeLLMServer, ok
from tests.pi.pi1cli import PiCli, make_session
from tests.pi.pi1run import pi1_dump, pi1_generate, pi1_jump, require_pi1
from tests.pi.pirun import pitree, pitree_json

pytestmark = pytest.mark.node
BUDGET = 128000 - 16384


@pytest.fixture(scope="module")
def kitchen(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("pi1-resume") / "kitchen.jsonl"
    return path, pi1_generate("kitchen", path)


@pytest.fixture(scope="module")
def cli_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pi1 = require_pi1()
    with FakeLLMServer() as server:
        return make_session(PiCli(pi1, server, tmp_path_factory.mktemp("pi1-resume-cli")).setup())


def jump(path: Path, target: str, summary: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """`pitree branch FILE --to TARGET --summary S --yes --json`: its answer and the one line it appended."""
    prefix = path.read_bytes()
    result: dict[str, Any] = pitree_json("branch", path, "--to", target, "--summary", summary, "--yes")
    data = path.read_bytes()
    assert data.startswith(prefix) and data.endswith(b"\n") and data.count(b"\n") == prefix.count(b"\n") + 1
    line: dict[str, Any] = orjson.loads(data[len(prefix) :])
    assert {k: line.get(k) for k in ("id", "type", "parentId")} == {
        k: result["appended"][k] for k in ("id", "type", "parentId")
    }
    return result, line


def as_pi_writes(line: dict[str, Any]) -> dict[str, Any]:
    """A branch_summary line without what differs on every write (id, timestamp) and with Pi's default fromHook."""
    return {k: v for k, v in line.items() if k not in ("id", "timestamp") and not (k == "fromHook" and v is False)}


def check_resume(path: Path, target: str, summary: str) -> dict[str, Any]:
    """Jump with pitree, then compare with what Pi's own navigation writes and where Pi continues."""
    pi_nav = pi1_jump(path, target, BUDGET)
    result, appended = jump(path, target, summary)
    assert appended["parentId"] == pi_nav["leafId"], "pitree's new leaf is not Pi's"
    assert result["leaf"] == appended["id"]
    if pi_nav["editorText"] is not None:
        assert result["editorText"] == pi_nav["editorText"]
    seen = pi1_dump(path, leaves=[])
    assert seen["leafId"] == appended["id"], "Pi does not continue at the line pitree appended"
    context = seen["leaves"][""]["messages"]
    if summary == "none":
        assert appended["type"] == "custom" and appended["customType"] == "pitree.jump"
        assert context == pi_nav["context"], "Pi's context after pitree's jump is not its own after /tree"
    else:
        assert appended["type"] == "branch_summary"
        expected = pi1_jump(path.with_name("before-" + path.name), target, BUDGET, appended["summary"])["summary"]
        assert as_pi_writes(appended) == as_pi_writes(expected["line"])
        ours = [[role, "<summary>" if src == appended["id"] else src, n] for role, src, n in context]
        theirs = [
            [role, "<summary>" if src == expected["line"]["id"] else src, n] for role, src, n in expected["context"]
        ]
        assert ours == theirs
    return seen


@pytest.mark.parametrize(
    ("target", "summary"),
    [
        ("a8", "none"),  # an assistant on the side branch: it becomes the leaf
        ("a8", "extractive"),
        ("u5", "extractive"),  # a user message: its parent becomes the leaf, its text goes to the editor
        ("u6", "none"),
        ("c3", "extractive"),  # a retain-none compaction on another branch
        ("e9", "extractive"),  # a context_edit on the compacted main line: the abandoned side has file operations
        ("u9", "none"),  # the first user message of a root: Pi's leaf becomes null
    ],
)
def test_pi1_resumes_where_pitree_jumped(
    tmp_path: Path, kitchen: tuple[Path, dict[str, str]], target: str, summary: str
) -> None:
    source, ids = kitchen
    path = tmp_path / "kitchen.jsonl"
    shutil.copyfile(source, path)
    shutil.copyfile(source, path.with_name("before-" + path.name))
    check_resume(path, ids[target], summary)


def test_pi1_resumes_after_two_jumps(tmp_path: Path, kitchen: tuple[Path, dict[str, str]]) -> None:
    """To the compacted main line's leaf, then back to a7: the abandoned part holds bs1, whose file lists carry over.

    (Not through u3: Pi's prepareBranchEntries throws on its null content, so Pi has no answer to compare with.)
    """
    source, ids = kitchen
    path = tmp_path / "kitchen.jsonl"
    shutil.copyfile(source, path)
    jump(path, ids["main2"], "none")
    shutil.copyfile(path, path.with_name("before-" + path.name))
    seen = check_resume(path, ids["a7"], "extractive")
    assert seen["leaves"][""]["messages"][-1][0] == "branchSummary"
    summary_line = orjson.loads(path.read_bytes().splitlines()[-1])
    assert summary_line["details"]["readFiles"] == ["weather/cli.py"]


def request_texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of each message the CLI sent, content blocks joined."""
    out = []
    for m in body["messages"]:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
        out.append((m["role"], content or ""))
    return out


@pytest.mark.parametrize("summary", ["none", "extractive"])
def test_pi1_cli_continues_where_pitree_jumped(tmp_path: Path, cli_session: Path, summary: str) -> None:
    """`pi -p --session FILE` after `pitree branch`: the model gets the context up to the jump, then the new prompt."""
    pi1 = require_pi1()
    path = tmp_path / "session.jsonl"
    shutil.copyfile(cli_session, path)
    shutil.copyfile(cli_session, path.with_name("before-" + path.name))
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    first_answer = next(e["id"] for e in entries if e.get("message", {}).get("role") == "assistant")
    seen = check_resume(path, first_answer, summary)
    with FakeLLMServer() as server:
        cli = PiCli(pi1, server, tmp_path / "pi").setup()
        server.script(ok("Continuing from the first answer."))
        assert "Continuing from the first answer." in cli.run("--session", path, "What next?")
        (request,) = server.requests
    sent = request_texts(request.body)
    assert sent[0] == ("system", seen["leaves"][""]["system"]["text"])  # no new patch: same prompt and tools
    assert sent[1:3] == [("user", "Let's build a weather CLI."), ("assistant", "Hello! What shall we build?")]
    if summary == "none":
        assert sent[3:] == [("user", "What next?")]
    else:
        assert len(sent) == 5 and sent[3][0] == "user" and sent[4] == ("user", "What next?")
        assert sent[3][1].startswith("The following is a summary of a branch that this conversation came back from")
    assert not any("notes.txt" in text or "Now write the CLI." in text for _, text in sent[1:3] + sent[4:])
    after = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    new_user = next(e for e in after[len(entries) + 1 :] if e.get("message", {}).get("role") == "user")
    assert new_user["parentId"] == seen["leafId"]


# ---- the other lines and files pitree writes, read back by Pi 1.6 -------------------------------------------------


def test_pi1_reads_pitree_labels(tmp_path: Path, kitchen: tuple[Path, dict[str, str]]) -> None:
    """`pitree label` appends Pi's appendLabelChange line (set, then cleared); Pi's labels follow."""
    source, ids = kitchen
    path = tmp_path / "kitchen.jsonl"
    shutil.copyfile(source, path)
    leaf = pi1_dump(path, leaves=[])["leafId"]
    for args, expected in (([ids["a9"], "retries done"], "retries done"), ([ids["a9"], "--clear"], None)):
        prefix = path.read_bytes()
        pitree_json("label", path, *args, "--yes")
        line = orjson.loads(path.read_bytes()[len(prefix) :])
        assert {k: v for k, v in line.items() if k not in ("id", "timestamp")} == {
            "type": "label",
            "parentId": leaf,
            "targetId": ids["a9"],
            **({"label": expected} if expected is not None else {}),
        }
        seen = pi1_dump(path, leaves=[])
        assert seen["labels"].get(ids["a9"]) == expected and seen["leafId"] == line["id"]
        leaf = line["id"]


@pytest.mark.parametrize("leaf", ["main2", "side1", "a12", "a7"])
def test_pitree_export_loads_in_pi1_with_the_same_context(
    tmp_path: Path, kitchen: tuple[Path, dict[str, str]], leaf: str
) -> None:
    """`pitree export --format jsonl` of root → leaf: Pi 1.6 opens it with the context it had at that leaf."""
    source, ids = kitchen
    out = tmp_path / "fork.jsonl"
    done = pitree("export", source, "--leaf", ids[leaf], "--format", "jsonl", "-o", out)
    assert done.returncode == 0, done.stderr.decode()
    before = pi1_dump(source, leaves=[ids[leaf]])["leaves"][ids[leaf]]
    after = pi1_dump(out, leaves=[])
    types = {e["id"]: e["type"] for e in map(orjson.loads, out.read_bytes().splitlines()[1:])}
    branch = after["branch"]  # root → the leaf, then the labels on the path (pitree writes them after it)
    tail = branch[branch.index(ids[leaf]) + 1 :]
    assert all(types[i] == "label" for i in tail)
    for key in ("messages", "context", "model", "thinkingLevel", "system"):
        assert after["leaves"][""][key] == before[key], key
