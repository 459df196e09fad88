"""The offline (extractive) summary reads like a person's account of the branch: real requests, not pasted
diffs or "continue"; constraints the user stated, not error text; decisions in words; failures nothing fixed;
files read, not a directory a read failed on. Checked on made-up branches and on the shared corpus."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pitree.ops.jump import plan_jump, prepare_job
from pitree.store.session_file import EntryReader, load_session
from pitree.summary.backends.extractive import summarize
from pitree.summary.prepare import prepare_branch_entries
from pitree.summary.run import SummaryJob, extractive_summary

from tests.sessions import assistant, message, tool_result, user

# The shared corpus sits next to the checkout (../shared/corpus), or next to its worktrees folder.
_REPO = Path(__file__).resolve().parents[2]
CORPUS = next(
    (p for p in (_REPO.parent / "shared" / "corpus", _REPO.parent.parent / "shared" / "corpus") if p.is_dir()),
    _REPO.parent / "shared" / "corpus",
)


def section(text: str, name: str) -> list[str]:
    """The non-empty lines under `## name` / `### name`, up to the next heading."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = line.lstrip("#").strip() == name
            continue
        if inside and line.strip():
            out.append(line)
    return out


def bash(eid: str, parent: str, command: str, call: str) -> dict[str, Any]:
    return assistant(eid, parent, "", calls=((call, "bash", {"command": command}),), stop="toolUse")


DIFF = "diff --git a/x.py b/x.py\n@@ -1,3 +1,3 @@\n-old line\n+new line\n context\n-gone\n+added"


def branch() -> list[dict[str, Any]]:
    return [
        user("u1", None, "continue"),
        user("u2", "u1", DIFF),
        user(
            "u3",
            "u2",
            "The importer crashes on empty CSV files. Fix it, and don't touch the public API.\n\n"
            'Traceback (most recent call last):\n  File "imp.py", line 3\nValueError: no rows',
        ),
        assistant("a1", "u3", "", calls=(("c1", "read", {"path": "src"}),), stop="toolUse"),
        tool_result("r1", "a1", "c1", text="EISDIR: illegal operation on a directory, read", error=True),
        bash("a2", "r1", "grep -rn empty src/", "c2"),
        tool_result("r2", "a2", "c2", name="bash", text="Command exited with code 1", error=True),
        bash("a3", "r2", "cd /repo && pytest -q 2>&1 | tail -5", "c3"),
        tool_result("r3", "a3", "c3", name="bash", text="1 failed\nCommand exited with code 1", error=True),
        assistant(
            "a4",
            "r3",
            "The cause is that `read_rows` indexes row 0 before checking the length. "
            "I'll return an empty list instead of raising, because callers already handle empty input.",
            calls=(("c4", "edit", {"path": "src/imp.py", "oldText": "a", "newText": "b"}),),
            stop="toolUse",
        ),
        tool_result("r4", "a4", "c4", name="edit", text="ok"),
        bash("a5", "r4", "cd /repo && pytest -q", "c5"),
        tool_result("r5", "a5", "c5", name="bash", text="12 passed"),
        bash("a6", "r5", 'git commit -am "Importer: empty CSV gives no rows"', "c6"),
        tool_result("r6", "a6", "c6", name="bash", text="[main abc] Importer"),
        assistant("a7", "r6", "👍\n\nFixed and committed.\n\n## Next steps\n- Add a test for a header-only CSV"),
    ]


def test_a_person_would_write_this() -> None:
    text = summarize(branch())
    goal = section(text, "Goal")[0]
    assert goal == "The importer crashes on empty CSV files. Fix it, and don't touch the public API."
    assert not any("diff --git" in ln or "continue" == ln or "Traceback" in ln for ln in section(text, "Goal"))
    assert section(text, "Constraints & Preferences") == ["- Fix it, and don't touch the public API."]
    done = section(text, "Done")
    assert "- [x] Changed 1 file: `src/imp.py`" in done
    assert "- [x] Ran `pytest -q`" in done and "- [x] Committed: Importer: empty CSV gives no rows" in done
    assert not any("grep" in ln for ln in done)
    assert section(text, "Blocked") == ["- (none)"]  # pytest failed, then passed; grep finding nothing is fine
    decisions = section(text, "Key Decisions")
    assert any("return an empty list instead of raising" in d for d in decisions)
    assert all(len(re.findall(r"[A-Za-z]{2,}", d)) >= 4 for d in decisions)  # words, not an emoji
    assert section(text, "Next Steps") == ["1. Add a test for a header-only CSV"]


def test_a_failed_directory_read_is_not_a_read_file() -> None:
    entries = branch()
    job = SummaryJob(entries, prepare_branch_entries(entries))
    assert "src" in job.prepared.file_ops.read  # Pi's own lists keep it (a model summary sends them as is)
    text, read, modified = extractive_summary(job)
    assert read == [] and modified == ["src/imp.py"] and "<read-files>" not in text


def test_an_open_request_and_an_unfixed_failure() -> None:
    entries = [
        user("u1", None, "Add retries to the HTTP client; never retry a POST."),
        bash("a1", "u1", "npm test", "c1"),
        tool_result("r1", "a1", "c1", name="bash", text="FAIL client.test.ts\nCommand exited with code 1", error=True),
        user("u2", "r1", "Use exponential backoff with jitter for the retries."),
    ]
    text = summarize(entries)
    assert section(text, "In Progress") == ["- [ ] Use exponential backoff with jitter for the retries."]
    assert section(text, "Blocked") == ["- `npm test` failed: FAIL client.test.ts"]
    assert section(text, "Constraints & Preferences") == ["- Add retries to the HTTP client; never retry a POST."]
    assert section(text, "Next Steps") == ["1. Continue: Use exponential backoff with jitter for the retries."]


def test_a_stopped_reply_leaves_the_request_open() -> None:
    entries = [
        user("u1", None, "Rename the config module to settings."),
        message("a1", "u1", "assistant", content=[], stopReason="aborted", errorMessage="Request was aborted."),
    ]
    text = summarize(entries)
    assert section(text, "In Progress") == ["- [ ] Rename the config module to settings."]
    assert section(text, "Blocked") == ["- (none)"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl", "pi1-cli-session.jsonl"])
def test_corpus_summaries_read_like_a_person_wrote_them(name: str) -> None:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"{name} is not in the corpus")
    tree, _ = load_session(path)
    checked = 0
    for fraction in (0.1, 0.3, 0.6):
        target = tree.nodes[int(len(tree.nodes) * fraction)]
        plan = plan_jump(tree, target)
        if plan.noop or not plan.to_summarize:
            continue
        text, read, _modified = extractive_summary(prepare_job(tree, EntryReader(path, tree), plan))
        if text == "No content to summarize":
            continue
        checked += 1
        goal = section(text, "Goal")[0]
        assert len(re.findall(r"[A-Za-z]{2,}", goal)) >= 3, goal  # a request in words
        assert not goal.startswith("/") and goal.lower() not in ("continue", "ok")
        for heading in ("Goal", "Constraints & Preferences", "Key Decisions"):
            for line in section(text, heading):
                assert not re.search(r"Traceback|diff --git|^[-+]{3} |\bError: \d{3}\b", line), (heading, line)
        for line in section(text, "Key Decisions"):
            assert line == "- (none recorded)" or len(re.findall(r"[A-Za-z]{2,}", line)) >= 4, line
        for line in section(text, "Blocked"):
            assert not re.match(r"- `(grep|rg|find|ls)\b", line), line  # finding nothing is no failure
        for line in section(text, "Done"):
            assert not re.match(r"- \[x\] Ran `(grep|rg|find|ls|cat|head|sed -n)\b", line), line
        assert all(len(line) <= 400 for line in text.splitlines() if not line.startswith(("/", "~")))
        assert all("." in Path(p).name or "/" not in p for p in read)  # files, not bare directories
    assert checked
