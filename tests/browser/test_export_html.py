"""The exported HTML in headless Chromium: it shows the path's entries, folds tool calls, runs nothing from
the session, loads nothing, and its inline stylesheet passes its own Content-Security-Policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pitree.ops.export import export_path
from pitree.store.session_file import EntryReader, load_session

from tests.sessions import assistant, to_bytes, tool_result, user

REPO = Path(__file__).resolve().parents[2]
PAYLOAD = "</details><script>window.__pwned = 1</script><img src=x onerror='window.__pwned = 2'> [bold]x[/bold]"


def _export(tmp_path: Path, data: bytes, thinking: bool = False) -> Path:
    source = tmp_path / "source.jsonl"
    source.write_bytes(data)
    tree, _ = load_session(source)
    return export_path(tree, EntryReader(source, tree), None, "html", tmp_path / "out.html", thinking=thinking)


def _open(page: Any, path: Path) -> list[str]:
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.goto(path.as_uri())
    page.wait_for_selector("main")
    return messages


def test_demo_shows_the_entries(chromium_page: Any, outside_requests: list[str], tmp_path: Path) -> None:
    out = _export(tmp_path, (REPO / "assets" / "demo.jsonl").read_bytes())
    console = _open(chromium_page, out)
    body = chromium_page.inner_text("body")
    assert "Let's build a small weather CLI" in body
    assert "40665560" in body  # the leaf
    assert chromium_page.locator("section.user").count() >= 3
    assert chromium_page.locator("section.assistant").count() >= 3
    assert chromium_page.locator("details").count() > 0
    assert not outside_requests and not [m for m in console if m.startswith("error")], console
    # The stylesheet applied (its hash is in the CSP): sections have a border.
    width = chromium_page.eval_on_selector("section.user", "e => getComputedStyle(e).borderTopWidth")
    assert width == "1px"


def test_tool_calls_fold_and_unfold(chromium_page: Any, tmp_path: Path) -> None:
    data = to_bytes(
        [
            user("u1", None, "read it", t=1),
            assistant("a1", "u1", "looking", t=2, calls=(("c1", "read", {"path": "notes.txt"}),)),
            tool_result("r1", "a1", "c1", name="read", text="SECRET FILE BODY", t=3),
            assistant("a2", "r1", "done reading", t=4),
        ]
    )
    _open(chromium_page, _export(tmp_path, data))
    body = chromium_page.inner_text("body")
    assert "[read: notes.txt]" in body and "done reading" in body
    assert "SECRET FILE BODY" not in body  # folded
    chromium_page.click("summary")
    assert "SECRET FILE BODY" in chromium_page.inner_text("body")


def test_hostile_content_is_text(chromium_page: Any, outside_requests: list[str], tmp_path: Path) -> None:
    data = to_bytes(
        [
            user("u1", None, PAYLOAD + " \x1b]52;c;aGVsbG8=\x07 \u202eevil", t=1),
            assistant("a1", "u1", PAYLOAD, t=2, thinking=PAYLOAD, calls=(("c1", "bash", {"command": PAYLOAD}),)),
            tool_result("r1", "a1", "c1", name="bash", text=PAYLOAD, t=3),
        ]
    )
    console = _open(chromium_page, _export(tmp_path, data, thinking=True))
    for summary in chromium_page.locator("summary").all():
        summary.click()
    body = chromium_page.inner_text("body")
    assert body.count("</details><script>window.__pwned = 1</script>") >= 4
    assert "[bold]x[/bold]" in body and "␛]52;c;aGVsbG8=␇" in body and "<U+202E>evil" in body
    assert chromium_page.evaluate("window.__pwned") is None
    assert chromium_page.locator("script").count() == 0 and chromium_page.locator("img").count() == 0
    assert not outside_requests and not [m for m in console if m.startswith("error")], console
