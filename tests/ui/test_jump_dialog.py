"""The jump dialog by keyboard: every choice has a key, the first focus writes nothing, the offline summary says
when it cannot follow instructions, and a model summary (a real local server) appends Pi 1.6's entry."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.screens.jump_dialog import JumpDialog
from pitree.widgets.tree_view import TreeView
from textual.widgets import Static

from tests.llm_server import FakeLLMServer, garbage, ok
from tests.ui.test_app import DEMO, until

TARGET = "ae1a42a9"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo the tests may append to, last written long ago (no "modified just now" warning)."""
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    os.utime(path, (1, 1))
    return path


def last(path: Path) -> dict:
    return orjson.loads(path.read_bytes().splitlines()[-1])


async def open_dialog(app: PitreeApp, pilot) -> JumpDialog:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: app.explorer.stree is not None)
    app.query_one(TreeView).select_id(TARGET)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, JumpDialog))
    dialog = app.screen
    assert isinstance(dialog, JumpDialog)
    await until(pilot, lambda: dialog.job is not None and dialog.choice is not None)
    return dialog


def status(dialog: JumpDialog) -> str:
    return str(dialog.query_one("#status", Static).render())


async def test_first_focus_is_cancel_and_keys_choose(demo: Path) -> None:
    before = demo.read_bytes()
    app = PitreeApp(demo, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(140, 45)) as pilot:
        await open_dialog(app, pilot)
        assert app.focused is not None and app.focused.id == "cancel-choose"
        await pilot.press("tab")  # one Tab from the start still chooses nothing
        await pilot.press("shift+tab", "enter")
        await until(pilot, lambda: not isinstance(app.screen, JumpDialog))
        assert demo.read_bytes() == before
        await open_dialog(app, pilot)
        await pilot.press("n")
        await until(pilot, lambda: demo.read_bytes() != before)
    assert last(demo)["type"] == "custom" and last(demo)["customType"] == "pitree.jump"


async def test_offline_summary_with_instructions_says_they_were_not_used(demo: Path) -> None:
    app = PitreeApp(demo, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(140, 45)) as pilot:
        dialog = await open_dialog(app, pilot)
        await pilot.press("i", *"focus on tests", "ctrl+s")
        await until(pilot, lambda: dialog.phase == "review")
        assert "cannot follow instructions" in status(dialog)
        before = demo.read_bytes()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: demo.read_bytes() != before)
    entry = last(demo)
    assert entry["type"] == "branch_summary" and entry["fromId"] == "40665560" and entry["fromHook"] is False


async def test_model_summary_by_keys_appends_usage(demo: Path) -> None:
    with FakeLLMServer() as server:
        server.script(ok("## Goal\nThe model's summary.", usage=(10, 5)))
        overrides = {"summarizer": "openai", "openai_base_url": server.openai_url, "openai_api_key": "sk-x"}
        app = PitreeApp(demo, watch=False, config_overrides=overrides)
        async with app.run_test(size=(140, 45)) as pilot:
            dialog = await open_dialog(app, pilot)
            assert server.requests == []  # nothing is sent before the user chooses
            assert "sends this branch" in status(dialog)
            await pilot.press("s")
            await until(pilot, lambda: dialog.phase == "review")
            before = demo.read_bytes()
            await pilot.press("ctrl+s")
            await until(pilot, lambda: demo.read_bytes() != before)
    entry = last(demo)
    assert "The model's summary." in entry["summary"] and entry["usage"]["output"] == 5


async def test_model_stream_of_non_json_ends_in_a_message(demo: Path) -> None:
    before = demo.read_bytes()
    with FakeLLMServer() as server:
        server.script(garbage(after=1))
        overrides = {"summarizer": "openai", "openai_base_url": server.openai_url, "openai_api_key": "sk-x"}
        app = PitreeApp(demo, watch=False, config_overrides=overrides)
        async with app.run_test(size=(140, 45)) as pilot:
            dialog = await open_dialog(app, pilot)
            await pilot.press("s")
            await until(pilot, lambda: dialog.phase == "choose" and "not JSON" in status(dialog))
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, JumpDialog))
    assert demo.read_bytes() == before


def pi_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, key: str, auth: dict | None = None
) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_bytes(
        orjson.dumps({"providers": {"anthropic": {"baseUrl": base_url, "apiKey": key}}})
    )
    if auth is not None:
        (agent / "auth.json").write_bytes(orjson.dumps(auth))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))


async def test_key_command_runs_only_after_allow(demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    with FakeLLMServer() as server:
        server.script(ok("## Goal\nVia Pi's own model."))
        pi_agent(tmp_path, monkeypatch, server.anthropic_url, f"!touch {marker} && echo sk-cmd")
        app = PitreeApp(demo, watch=False, config_overrides={})
        async with app.run_test(size=(140, 45)) as pilot:
            dialog = await open_dialog(app, pilot)
            assert "shell command" in status(dialog) and not marker.exists()
            assert not dialog.choice.is_model and dialog.query_one("#allow-command").display
            await pilot.press("k")
            await until(pilot, lambda: dialog.choice is not None and dialog.choice.is_model)
            assert marker.exists() and "sends this branch" in status(dialog) and server.requests == []
            await pilot.press("s")
            await until(pilot, lambda: dialog.phase == "review")
            before = demo.read_bytes()
            await pilot.press("ctrl+s")
            await until(pilot, lambda: demo.read_bytes() != before)
        [request] = server.requests
    assert request.body["model"] == "claude-sonnet-4-5" and "Via Pi's own model." in last(demo)["summary"]


async def test_oauth_login_offers_the_offline_summary(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = {"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}}
    pi_agent(tmp_path, monkeypatch, "http://127.0.0.1:9", "sk", auth)
    app = PitreeApp(demo, watch=False, config_overrides={})
    async with app.run_test(size=(140, 45)) as pilot:
        dialog = await open_dialog(app, pilot)
        assert "OAuth" in status(dialog) and "offline summary is offered" in status(dialog)
        assert not dialog.choice.is_model


async def test_rate_limit_is_retried_with_progress(demo: Path) -> None:
    from tests.llm_server import status as http_status

    with FakeLLMServer() as server:
        server.script(http_status(429, "slow down", retry_after="0"), ok("## Goal\nAfter a retry."))
        overrides = {"summarizer": "openai", "openai_base_url": server.openai_url, "openai_api_key": "sk-x"}
        app = PitreeApp(demo, watch=False, config_overrides=overrides)
        seen: list[str] = []

        def hook(message: object) -> None:
            if isinstance(message, JumpDialog.Progress):
                seen.append(message.text)

        async with app.run_test(size=(140, 45), message_hook=hook) as pilot:
            dialog = await open_dialog(app, pilot)
            await pilot.press("s")
            await until(pilot, lambda: dialog.phase == "review")
            assert "After a retry." in dialog.query_one("#summary").text  # type: ignore[attr-defined]
        assert len(server.requests) == 2
    assert set(seen) == {"rate limited; retry 1 of 3 in 0 s"}  # the hook may see a message more than once


@pytest.mark.writes_session  # the line "Pi" appends
@pytest.mark.parametrize("pi_appends", [False, True])
async def test_jump_appends_only_onto_the_file_as_read(demo: Path, pi_appends: bool) -> None:
    """The TUI's append expects the size its tail has read: a line Pi added while the dialog was open is shown,
    and nothing is written until the user looks again."""
    app = PitreeApp(demo, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(140, 45)) as pilot:
        await open_dialog(app, pilot)
        before = demo.read_bytes()
        pi_line = b""
        if pi_appends:
            tree = app.explorer.stree
            leaf = tree.leaf.id if tree is not None and tree.leaf is not None else None
            pi_line = orjson.dumps({"type": "label", "id": "p1", "parentId": leaf, "timestamp": "x", "targetId": leaf})
            with open(demo, "ab") as fh:
                fh.write(pi_line + b"\n")
        await pilot.press("n")  # no summary: the marker entry
        await until(pilot, lambda: not isinstance(app.screen, JumpDialog))
        after = demo.read_bytes()
        if pi_appends:
            assert after == before + pi_line + b"\n"
            await until(pilot, lambda: app.explorer.stree is not None and "p1" in app.explorer.stree.by_id)
        else:
            assert after.startswith(before) and after[len(before) :].count(b"\n") == 1
            assert last(demo)["customType"] == "pitree.jump"


async def test_the_dialog_prepares_the_branch_once(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the dialog reads and budgets the abandoned branch; summarizing and appending reuse that job."""
    from pitree.ops import jump as jump_ops

    calls: list[int] = []
    real = jump_ops.prepare_branch_tail

    def counting(nodes: list, read, budget: int, pi073: bool = False):  # type: ignore[no-untyped-def]
        calls.append(len(nodes))
        return real(nodes, read, budget, pi073)

    monkeypatch.setattr(jump_ops, "prepare_branch_tail", counting)
    app = PitreeApp(demo, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(140, 45)) as pilot:
        dialog = await open_dialog(app, pilot)
        await pilot.press("s")
        await until(pilot, lambda: dialog.phase == "review")
        before = demo.read_bytes()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: demo.read_bytes() != before)
    assert len(calls) == 1 and calls[0] > 0
    assert last(demo)["type"] == "branch_summary"


async def test_a_big_session_plans_the_jump_in_a_thread(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The branch left behind (most of a million-entry session) and the scan for other writers run off the UI
    thread; the dialog opens with that plan; a plan made for a leaf that moved meanwhile opens nothing."""
    from pitree.ops import jump
    from pitree.store import guard
    from pitree.widgets import explorer_status

    from tests.ui.test_views import on_ui_thread

    monkeypatch.setattr(explorer_status, "MEASURE_IN_THREAD", 0)
    plans = on_ui_thread(monkeypatch, jump, "plan_jump")
    scans = on_ui_thread(monkeypatch, guard, "write_warnings")
    app = PitreeApp(demo, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(140, 45)) as pilot:
        dialog = await open_dialog(app, pilot)
        assert plans == [False] and scans == [False]
        assert dialog.plan.target.id == TARGET and dialog.plan.old_leaf is app.explorer.stree.leaf
        await pilot.press("c")
        await until(pilot, lambda: not isinstance(app.screen, JumpDialog))
        tree = app.explorer.stree
        assert tree is not None and app.explorer.reader is not None
        notes: list[str] = []
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        stale = jump.plan_jump(tree, tree.get(TARGET))  # type: ignore[arg-type]
        stale.old_leaf = tree.get(TARGET)
        app.explorer._planned(tree, app.explorer.reader, stale, None, [])
        await pilot.pause(0.1)
        assert not isinstance(app.screen, JumpDialog) and "leaf moved" in notes[-1]
