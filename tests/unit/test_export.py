"""`pitree export`: Markdown, HTML and the jsonl fork, from every entry kind, hostile text, old versions,
leaf prefixes and the refusals. The source file's hash is checked after every export."""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import io
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson
import pytest
from markdown_it import MarkdownIt
from pitree.cli.common import CliError
from pitree.cli.export import add_export_command
from pitree.ops.export import ExportError, export_bytes, export_path
from pitree.ops.export.fork import fork_lines, resolved_labels, uuid7
from pitree.ops.export.html import CSP, CSS
from pitree.ops.export.markdown import fence, prose
from pitree.session.context import build_context
from pitree.store.export_file import write_export
from pitree.store.session_file import EntryReader, load_session

from tests.sessions import assistant, entry, message, to_bytes, tool_result, user

DATA = Path(__file__).resolve().parents[1] / "data"
HOSTILE = (
    "\x1b[31mred\x1b[0m \x1b[2J | \x1b]52;c;aGVsbG8=\x07 | \x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\ | "
    "\x9b31m \u202eabc\u202c zero\u200bwidth | [bold]x[/bold] [link=http://x]y[/link] | "
    "</details><script>alert(1)</script> <img src=x onerror=alert(2)> &amp; **strong** `code` ```` "
    "[click](http://evil.example) <http://evil.example> $x$ ~~del~~ | a|b\n"
    "# heading\n1. item\n- item\n    indented\n[ref]: http://evil.example\n===\nend\\"
)
UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200d\ufeff]")


def run(*argv: str) -> tuple[int, bytes, str]:
    """The export subcommand through its own parser, as `pitree export ...` runs it."""
    parser = argparse.ArgumentParser(prog="pitree")
    add_export_command(parser.add_subparsers())
    args = parser.parse_args(["export", *argv])
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = args.func(args)
        except CliError as exc:
            code, err = 1, io.StringIO(str(exc))
    out.flush()
    return code, out.buffer.getvalue(), err.getvalue()  # type: ignore[attr-defined]


def write(tmp_path: Path, entries: list[dict[str, Any]], version: int | None = 3, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(to_bytes(entries, version))
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def render(path: Path, fmt: str, leaf: str | None = None, thinking: bool = False) -> str:
    tree, _ = load_session(path)
    before = sha(path)
    data = export_bytes(tree, EntryReader(path, tree), tree.resolve(leaf) if leaf else None, fmt, thinking)
    assert sha(path) == before
    return data.decode()


def md_to_html(text: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(text)


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text outside tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data
        else:
            self.text.append(data)


def tags_of(html_text: str) -> Tags:
    parser = Tags()
    parser.feed(html_text)
    parser.close()
    return parser


# ---- every entry kind ---------------------------------------------------------------------------------------

IMAGE = {"type": "image", "data": base64.b64encode(b"x" * 3_000_000).decode(), "mimeType": "image/png"}

KINDS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("user text", user("k1", "r0", "hello there", t=2), ["user", "hello there"]),
    (
        "user string",
        {**user("k1", "r0", t=2), "message": {"role": "user", "content": "plain string"}},
        ["plain string"],
    ),
    (
        "user image",
        {**user("k1", "r0", t=2), "message": {"role": "user", "content": [{"type": "text", "text": "see"}, IMAGE]}},
        ["[image: image/png, 2.9 MB]"],
    ),
    (
        "assistant with a tool call and its result",
        assistant("k1", "r0", "let me look", t=2, calls=(("c1", "read", {"path": "src/app.py", "offset": 3}),)),
        ["assistant", "let me look", "[read: src/app.py:3]", "anthropic/claude", '"offset": 3', "file body"],
    ),
    (
        "assistant error",
        assistant("k1", "r0", "", t=2, stop="error", errorMessage="overloaded"),
        ["stopped: error", "overloaded"],
    ),
    (
        "assistant call without a result",
        assistant("k1", "r0", "", t=2, calls=(("zz", "bash", {"command": "ls -la"}),)),
        ["[bash: ls -la]", "no result on this path"],
    ),
    (
        "unpaired tool result",
        tool_result("k1", "r0", "nobody", name="grep", text="found it", t=2),
        ["[grep] result", "found it"],
    ),
    (
        "bash execution",
        message("k1", "r0", "bashExecution", t=2, command="make test", output="all green", exitCode=2, cancelled=True),
        ["bash (run by the user)", "$ make test", "all green", "exit code 2", "cancelled"],
    ),
    (
        "custom role",
        message("k1", "r0", "custom", t=2, customType="reminder", content="run tests", display=False),
        ["custom: reminder", "run tests", "display: false"],
    ),
    ("unknown role", message("k1", "r0", "mystery", t=2, content="who"), ["role: mystery", "who", "message JSON"]),
    ("message not a dict", {**entry("message", "k1", "r0", t=2), "message": [1, 2]}, ["message is a list"]),
    ("wrong content type", message("k1", "r0", "user", t=2, content={"a": 1}), ["content is an object"]),
    (
        "model change",
        entry("model_change", "k1", "r0", t=2, provider="openai", modelId="gpt-x"),
        ["model → openai/gpt-x"],
    ),
    (
        "thinking level",
        entry("thinking_level_change", "k1", "r0", t=2, thinkingLevel="high"),
        ["thinking level → high"],
    ),
    (
        "compaction",
        entry(
            "compaction",
            "k1",
            "r0",
            t=2,
            summary="## Goal\nship it",
            firstKeptEntryId="r0",
            tokensBefore=12345,
            details={"readFiles": ["a.py"], "modifiedFiles": ["b.py"]},
        ),
        ["compaction summary", "tokens before: 12345", "first kept entry: r0", "ship it", "a.py", "b.py"],
    ),
    (
        "branch summary",
        entry("branch_summary", "k1", "r0", t=2, fromId="old1", summary="explored X"),
        ["branch summary", "from old1", "explored X"],
    ),
    (
        "custom entry",
        entry("custom", "k1", "r0", t=2, customType="state", data={"n": 7}),
        ["extension state: state", '"n": 7'],
    ),
    (
        "custom message",
        entry("custom_message", "k1", "r0", t=2, customType="note", content="injected", display=False),
        ["custom message: note", "injected", "display: false"],
    ),
    ("label", entry("label", "k1", "r0", t=2, targetId="r0", label="here"), ["label on r0: here"]),
    ("label cleared", entry("label", "k1", "r0", t=2, targetId="r0"), ["label cleared on r0"]),
    ("session name", entry("session_info", "k1", "r0", t=2, name="my session"), ["session name: my session"]),
    ("unknown type", entry("telemetry", "k1", "r0", t=2, cpu=99), ["unknown entry type: telemetry", '"cpu": 99']),
    # Pi 1.x (SPEC-pi1 A2)
    (
        "system message",
        message(
            "k1",
            "r0",
            "system",
            t=2,
            content="You are terse.",
            sections={"rules": "Be kind.", "old": None},
            toolsAdded=[{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}],
            toolsRemoved=["bash"],
        ),
        [
            "system prompt",
            "1 section set, 1 removed · 1 tool added · 1 removed",
            "Pi's estimate",
            "You are terse.",
            "section rules",
            "Be kind.",
            "section old: removed",
            "tool read: Read a file",
            "tools removed: bash",
        ],
    ),
    (
        "usage entry",
        entry(
            "usage",
            "k1",
            "r0",
            t=2,
            kind="warmup",
            provider="anthropic",
            model="claude",
            usage={"input": 5, "output": 1, "cacheRead": 7, "cacheWrite": 1, "totalTokens": 3, "cost": {"total": 1}},
        ),
        ["usage: warmup", "anthropic/claude", "input 5 · output 1 · cache read 7 · cache write 1 · total 14 tokens"],
    ),
    (
        "context edit omit",
        entry("context_edit", "k1", "r0", t=2, targetId="r0", replacement=None),
        ["context edit: omits r0", "in effect on this path", "omitted from context by edit k1"],
    ),
    (
        "context edit replace",
        entry("context_edit", "k1", "r0", t=2, targetId="r0", replacement={"content": "Now retries."}),
        ["context edit: replaces r0", "Now retries.", "content replaced by edit k1", "what the model sees instead"],
    ),
    (
        "retain-none compaction",
        entry(
            "compaction",
            "k1",
            "r0",
            t=2,
            summary="all of it",
            firstKeptEntryId="k1",
            tokensBefore=9,
            systemMessage={"role": "system", "content": "checkpoint prompt", "timestamp": 1},
        ),
        ["retain-none: nothing before this compaction is kept", "checkpoint (systemMessage)", "checkpoint prompt"],
    ),
]


def _kind_session(tmp_path: Path, item: dict[str, Any]) -> Path:
    entries = [user("r0", None, "root", t=1), item]
    msg = item.get("message")
    if isinstance(msg, dict) and msg.get("role") == "assistant":
        for block in item["message"]["content"]:
            if block.get("type") == "toolCall" and block["id"] == "c1":
                entries.append(tool_result("k2", "k1", "c1", name="read", text="file body", t=3))
    return write(tmp_path, entries)


@pytest.mark.parametrize(("name", "item", "expected"), KINDS, ids=[k[0] for k in KINDS])
@pytest.mark.parametrize("fmt", ["md", "html"])
def test_every_entry_kind_is_shown(
    tmp_path: Path, fmt: str, name: str, item: dict[str, Any], expected: list[str]
) -> None:
    text = render(_kind_session(tmp_path, item), fmt)
    shown = "".join(tags_of(md_to_html(text) if fmt == "md" else text).text)
    for piece in expected:
        assert piece in shown, (piece, shown[-600:])
    assert "k1" in shown and "2026-01-01 00:00:02 UTC" in shown
    assert len(text) < 20_000  # the 3 MB image is never embedded


def test_tool_result_is_folded_under_its_call(tmp_path: Path) -> None:
    path = _kind_session(tmp_path, KINDS[3][1])
    html_text = render(path, "html")
    details = re.findall(r"<details><summary>(.*?)</summary>(.*?)</details>", html_text, re.S)
    assert len(details) == 1 and "[read: src/app.py:3]" in details[0][0] and "file body" in details[0][1]
    assert "tool result" not in html_text  # not shown a second time as its own entry
    md = render(path, "md")
    assert md.count("<details>") == md.count("</details>") == 1


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_thinking_only_when_asked(tmp_path: Path, fmt: str) -> None:
    path = write(tmp_path, [user("u1", None, t=1), assistant("a1", "u1", "answer", t=2, thinking="secret plan")])
    assert "secret plan" not in render(path, fmt)
    assert "secret plan" in render(path, fmt, thinking=True)


def test_header_has_name_models_and_usage(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            user("u1", None, t=1),
            assistant("a1", "u1", "one", t=2),
            entry("session_info", "n1", "a1", t=3, name="Weather CLI"),
            assistant("a2", "n1", "two", t=4, provider="openai", model="gpt-5"),
        ],
    )
    text = "".join(tags_of(render(path, "html")).text)
    for piece in (
        "Weather CLI",
        "11111111-2222-3333-4444-555555555555",
        "/work/x",
        "a2",
        "anthropic/claude, openai/gpt-5",
    ):
        assert piece in text
    assert "input 2 · output 4 · cache read 6 · cache write 8 · total 20 tokens · cost $1.0000" in text


# ---- hostile text -------------------------------------------------------------------------------------------


def _hostile_session(tmp_path: Path) -> Path:
    entries = [
        user("h1", None, HOSTILE, t=1),
        assistant(
            "h2", "h1", HOSTILE, t=2, thinking=HOSTILE, calls=(("c1", "bash", {"command": HOSTILE}),), model=HOSTILE
        ),
        tool_result("h3", "h2", "c1", name=HOSTILE, text=HOSTILE, t=3),
        entry("compaction", "h4", "h3", t=4, summary=HOSTILE, firstKeptEntryId=HOSTILE, tokensBefore=HOSTILE),
        entry("custom_message", "h5", "h4", t=5, customType=HOSTILE, content=HOSTILE, display=True),
        entry("label", "h6", "h5", t=6, targetId="h5", label=HOSTILE),
        entry("session_info", "h7", "h6", t=7, name=HOSTILE),
        message("h8", "h7", "bashExecution", t=8, command=HOSTILE, output=HOSTILE, exitCode=HOSTILE),
        entry("telemetry", "h9", "h8", t=9, x=HOSTILE),
    ]
    path = tmp_path / "hostile.jsonl"
    head = {"type": "session", "version": 3, "id": "hostile-" + HOSTILE, "timestamp": "x", "cwd": HOSTILE}
    path.write_bytes(to_bytes(entries, head=head))
    return path


@pytest.mark.parametrize("source", ["generated", "data"])
def test_hostile_html_is_inert(tmp_path: Path, source: str) -> None:
    path = _hostile_session(tmp_path) if source == "generated" else _copy(tmp_path, "hostile.jsonl")
    html_text = render(path, "html", thinking=True)
    assert not UNSAFE_CHARS.search(html_text)
    parsed = tags_of(html_text)
    allowed = {"html", "head", "meta", "title", "style", "body", "header", "h1", "dl", "dt", "dd", "main", "section"}
    allowed |= {"div", "span", "time", "code", "pre", "p", "details", "summary"}
    assert {tag for tag, _ in parsed.tags} <= allowed
    for tag, attrs in parsed.tags:
        assert not any(a.startswith("on") or a in ("src", "href", "srcdoc", "action") for a in attrs), (tag, attrs)
    metas = [a for t, a in parsed.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert len(metas) == 1 and metas[0]["content"] == CSP
    assert "default-src 'none'" in CSP and "script-src 'none'" in CSP and "unsafe-inline" not in CSP
    style_hash = base64.b64encode(hashlib.sha256(parsed.style.encode()).digest()).decode()
    assert parsed.style == CSS and f"'sha256-{style_hash}'" in CSP
    text = "".join(parsed.text)
    if source == "generated":
        assert "</details><script>alert(1)</script>" in text  # shown as text, not markup
        assert "[bold]x[/bold]" in text and "␛[31mred" in text and "<U+202E>" in text


@pytest.mark.parametrize("source", ["generated", "data"])
def test_hostile_markdown_stays_literal(tmp_path: Path, source: str) -> None:
    path = _hostile_session(tmp_path) if source == "generated" else _copy(tmp_path, "hostile.jsonl")
    md = render(path, "md", thinking=True)
    assert not UNSAFE_CHARS.search(md)
    rendered = md_to_html(md)
    parsed = tags_of(rendered)
    tags = [tag for tag, _ in parsed.tags]
    # A model's own Markdown (assistant text, thinking, summaries) renders as Markdown: links, lists, emphasis
    # and demoted headings may appear. Raw HTML never does, and no content heading outranks the export's own.
    markdown_tags = {"p", "strong", "em", "code", "pre", "a", "del", "s", "ul", "ol", "li", "h4", "h5", "h6", "br"}
    markdown_tags.add("hr")
    markdown_tags |= {"table", "thead", "tbody", "tr", "th", "td", "blockquote"}
    assert set(tags) <= markdown_tags | {"h1", "h3", "details", "summary"}, set(tags) - markdown_tags
    assert tags.count("h1") == 1 and "h2" not in tags
    for tag, attrs in parsed.tags:
        assert not any(a.startswith("on") or a in ("src", "srcdoc", "style") for a in attrs), (tag, attrs)
    assert rendered.count("<details>") == rendered.count("</details>")
    if source == "generated":
        text = "".join(parsed.text)
        for piece in (
            "</details><script>alert(1)</script>",
            "[bold]x[/bold]",
            "**strong**",
            "[click](http://evil.example)",
            "[ref]: http://evil.example",
            "# heading",
            "1. item",
            "    indented",
            "~~del~~",
            "&amp;",
            "end\\",
        ):
            assert piece.replace("    ", "\xa0" * 4) in text, piece


@pytest.mark.parametrize(
    "text",
    ["plain", "a ``` b", "````", "`", "x\n```\ny", "````````` nine", "\x1b]52;c;aGVsbG8=\x07", "</details>"],
)
def test_fence_is_never_closed_by_its_content(text: str) -> None:
    block = fence(text, "text")
    rendered = md_to_html(block)
    assert rendered.count("<pre>") == 1 and rendered.endswith("</code></pre>\n")
    import html

    code = html.unescape(re.search(r"<code[^>]*>(.*)</code>", rendered, re.S).group(1))  # type: ignore[union-attr]
    assert code == prose_safe(text) + "\n"


@pytest.mark.parametrize(
    ("source", "html_has", "html_lacks"),
    [
        ("```python\nif a < b & c:\n    pass\n```", ['<pre><code class="language-python">if a &lt; b &amp; c:'], []),
        ("use `x<y>` here <script>alert(1)</script>", ["<code>x&lt;y&gt;</code>", "&lt;script&gt;"], ["<script>"]),
        ("# Goal\n## Sub", ["<h4>Goal</h4>", "<h5>Sub</h5>"], ["<h1>", "<h2>"]),
        ("```\nnever closed </details>", ["<pre><code>never closed &lt;/details&gt;\n</code></pre>"], []),
        ("- a\n- b\n\n1. one", ["<ul>", "<li>a</li>", "<ol>"], []),
        ("text\n\n    code <b>\n\nafter", ["<pre><code>code &lt;b&gt;"], ["<b>"]),
        ("&#x202e; &amp; [x](http://e.example)", ["&amp;#x202e;", '<a href="http://e.example">x</a>'], []),
    ],
)
def test_model_markdown_renders_without_html(source: str, html_has: list[str], html_lacks: list[str]) -> None:
    from pitree.ops.export.markdown import markdown_text

    rendered = md_to_html(markdown_text(source) + "\n\n</details>")
    for piece in html_has:
        assert piece in rendered, (piece, rendered)
    for piece in html_lacks:
        assert piece not in rendered, (piece, rendered)
    assert rendered.rstrip().endswith("</details>")  # an unclosed block never swallows what follows


def prose_safe(text: str) -> str:
    from pitree.session.text import make_safe

    return make_safe(text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\nb", "a<br />\nb"),
        ("p1\n\n\np2", "<p>p1</p>\n<p>p2</p>"),
        ("*x*", "*x*"),
        ("<b>hi</b>", "&lt;b&gt;hi&lt;/b&gt;"),
        ("- a", "- a"),
        ("2) b", "2) b"),
        ("tail\\", "tail\\"),
    ],
)
def test_prose_is_literal(text: str, shown: str) -> None:
    assert shown in md_to_html(prose(text))


# ---- jsonl (the fork) ---------------------------------------------------------------------------------------


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    target.write_bytes((DATA / name).read_bytes())
    return target


def fork(path: Path, leaf: str | None = None, **kw: Any) -> list[bytes]:
    tree, _ = load_session(path)
    node = tree.resolve(leaf) if leaf else None
    return fork_lines(tree, EntryReader(path, tree).raw, node, parent_session=str(path), cwd="/c", **kw)


def test_fork_header_and_byte_copies(tmp_path: Path) -> None:
    path = _copy(tmp_path, "branched.jsonl")
    tree, _ = load_session(path)
    lines = fork(path, "b0000011", session_id="sid", timestamp="2030-01-01T00:00:00.000Z")
    head = orjson.loads(lines[0])
    assert head == {
        "type": "session",
        "version": 3,
        "id": "sid",
        "timestamp": "2030-01-01T00:00:00.000Z",
        "cwd": "/c",
        "parentSession": str(path),
    }
    assert list(head) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
    path_ids = [n.id for n in tree.branch(tree.get("b0000011")) if n.type != "label"]
    body = [orjson.loads(line) for line in lines[1:]]
    assert [e["id"] for e in body[: len(path_ids)]] == path_ids
    data = path.read_bytes()
    for line, e in zip(lines[1:], body, strict=False):
        node = tree.get(e["id"])
        if node is not None and orjson.loads(data[node.offset : node.offset + node.length]) == e:
            assert line == data[node.offset : node.offset + node.length]
    parents = [e["parentId"] for e in body]
    assert parents == [None] + [e["id"] for e in body[:-1]]  # one chain: the last line is the leaf


def test_fork_labels_follow_pi(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            user("u1", None, t=1),
            assistant("a1", "u1", t=2),
            entry("label", "l1", "a1", t=3, targetId="a1", label="first"),
            entry("label", "l2", "l1", t=4, targetId="u1", label="root"),
            entry("label", "l3", "l2", t=5, targetId="a1", label="renamed"),  # keeps a1's place (Map order)
            user("x1", "a1", "other branch", t=6),
            entry("label", "l4", "x1", t=7, targetId="x1", label="elsewhere"),  # target not on the path
            entry("label", "l5", "l3", t=8, targetId="u1", label=""),  # cleared
            entry("label", "l6", "l5", t=9, targetId="u1", label="back"),  # set again: now last
            entry("label", "l7", "l6", t=10, targetId="a1", label=[]),  # [] is truthy in JavaScript
        ],
    )
    tree, _ = load_session(path)
    assert list(resolved_labels(tree)) == ["a1", "x1", "u1"]
    ids = iter(["n0000001", "n0000002"])
    body = [orjson.loads(x) for x in fork(path, "l7", new_id=lambda taken: next(ids))[1:]]
    assert [e["id"] for e in body] == ["u1", "a1", "n0000001", "n0000002"]
    assert body[2] == {
        "type": "label",
        "id": "n0000001",
        "parentId": "a1",
        "timestamp": "2026-01-01T00:00:10.000Z",
        "targetId": "a1",
        "label": [],
    }
    assert body[3]["parentId"] == "n0000001" and body[3]["targetId"] == "u1" and body[3]["label"] == "back"


@pytest.mark.parametrize("name", ["v1_linear.jsonl", "v2_hookmessage.jsonl"])
def test_fork_of_old_versions_is_migrated_v3(tmp_path: Path, name: str) -> None:
    path = _copy(tmp_path, name)
    before = sha(path)
    out = export_path(*_tree_reader(path), None, "jsonl", tmp_path / "out.jsonl")
    assert sha(path) == before
    tree, _ = load_session(path)
    lines = out.read_bytes().splitlines()
    body = [orjson.loads(line) for line in lines[1:]]
    assert orjson.loads(lines[0])["version"] == 3
    assert [e["id"] for e in body] == [n.id for n in tree.active_path()]  # pitree's stable ids
    assert all("firstKeptEntryIndex" not in e for e in body)
    assert all(e.get("message", {}).get("role") != "hookMessage" for e in body)
    copy, _ = load_session(out)
    assert copy.version == 3 and not copy.problems and not copy.skipped
    assert [m.role for m in build_context(copy, None).messages] == [m.role for m in build_context(tree, None).messages]
    if name.startswith("v1"):
        comp = next(e for e in body if e["type"] == "compaction")
        assert comp["firstKeptEntryId"] == tree.nodes[5].id  # firstKeptEntryIndex 6 counts the header
    else:  # entries that need no change are the source's own bytes
        data = path.read_bytes()
        assert lines[1] == data.splitlines()[1] and lines[3] != data.splitlines()[3]


def test_fork_repairs_broken_parents(tmp_path: Path) -> None:
    path = _copy(tmp_path, "cycle.jsonl")
    tree, _ = load_session(path)
    for leaf in ("d0000008", "d0000005", "d0000006"):
        body = [orjson.loads(x) for x in fork(path, leaf)[1:]]
        assert [e["parentId"] for e in body] == [None] + [e["id"] for e in body[:-1]]
        assert [e["id"] for e in body] == [n.id for n in tree.branch(tree.get(leaf))]


def test_fork_writes_valid_utf8(tmp_path: Path) -> None:
    path = _copy(tmp_path, "malformed.jsonl")
    lines = fork(path, "c0000005")
    for line in lines:
        line.decode("utf-8")
        assert b"\r" not in line
    assert "\ufffd" in lines[-1].decode()


def test_fork_refuses_headerless_and_empty(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="no session header"):
        fork(_copy(tmp_path, "no_header.jsonl"))
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(to_bytes([]))
    with pytest.raises(ExportError, match="no entries"):
        fork(empty)


def test_uuid7_shape() -> None:
    value = uuid7()
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", value)
    assert value != uuid7()


# ---- the command: leaf, output, refusals -------------------------------------------------------------------


def _tree_reader(path: Path) -> tuple[Any, EntryReader]:
    tree, _ = load_session(path)
    return tree, EntryReader(path, tree)


@pytest.fixture
def branched(tmp_path: Path) -> Path:
    return _copy(tmp_path, "branched.jsonl")


@pytest.mark.parametrize(
    ("leaf", "ok", "last_id"),
    [
        (None, True, "b0000016"),
        ("b0000011", True, "b0000011"),
        ("b000001", False, None),  # ambiguous prefix
        ("b0000009", True, "b0000009"),
        ("zzzz", False, None),
    ],
)
def test_leaf_prefix(branched: Path, tmp_path: Path, leaf: str | None, ok: bool, last_id: str | None) -> None:
    before = sha(branched)
    out = tmp_path / "out.jsonl"
    code, stdout, err = run(str(branched), "--format", "jsonl", "-o", str(out), *(["--leaf", leaf] if leaf else []))
    assert sha(branched) == before
    if not ok:
        assert code == 1 and not out.exists() and ("ambiguous" in err or "no entry" in err)
        return
    assert code == 0, err
    ids = [orjson.loads(x)["id"] for x in out.read_bytes().splitlines()[1:] if orjson.loads(x)["type"] != "label"]
    assert ids[-1] == last_id and b"exported" in stdout


def test_unique_prefix_resolves(tmp_path: Path) -> None:
    demo = tmp_path / "demo.jsonl"
    demo.write_bytes((DATA.parent.parent / "assets" / "demo.jsonl").read_bytes())
    code, stdout, err = run(str(demo), "--format", "md", "--leaf", "c743a", "-o", "-")
    assert code == 0, err
    assert "- **leaf:** c743aed4" in stdout.decode()


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_stdout(branched: Path, fmt: str) -> None:
    code, stdout, _ = run(str(branched), "--format", fmt, "-o", "-")
    assert code == 0 and stdout.startswith(b"# " if fmt == "md" else b"<!DOCTYPE html>")


def _link(src: Path, dst: Path) -> None:
    os.link(src, dst)


def _symlink(src: Path, dst: Path) -> None:
    dst.symlink_to(src)


@pytest.mark.parametrize(
    ("case", "extra", "message"),
    [
        ("exists", [], "already exists"),
        ("source", ["--force"], "is the session being exported"),
        ("source-symlink", ["--force"], "is the session being exported"),
        ("source-hardlink", ["--force"], "is the session being exported"),
        ("directory", ["--force"], "is a directory"),
        ("no-folder", [], "no such folder"),
        ("jsonl-stdout", [], "stdout is for md and html"),
    ],
)
def test_refusals(branched: Path, tmp_path: Path, case: str, extra: list[str], message: str) -> None:
    target = tmp_path / "out.jsonl"
    fmt = "jsonl"
    if case == "exists":
        target.write_bytes(b"keep me")
    elif case == "source":
        target = branched
    elif case == "source-symlink":
        _symlink(branched, target)
    elif case == "source-hardlink":
        _link(branched, target)
    elif case == "directory":
        target.mkdir()
    elif case == "no-folder":
        target = tmp_path / "missing" / "out.jsonl"
    before = sha(branched)
    listing = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = run(str(branched), "--format", fmt, "-o", "-" if case == "jsonl-stdout" else str(target), *extra)
    assert code == 1 and message in err, err
    assert sha(branched) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # no temp file left behind
    if case == "exists":
        assert target.read_bytes() == b"keep me"


def test_force_overwrites_atomically_and_keeps_mode(branched: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.html"
    target.write_bytes(b"old")
    target.chmod(0o640)
    inode = target.stat().st_ino
    code, _, err = run(str(branched), "--format", "html", "-o", str(target), "--force")
    assert code == 0, err
    assert target.read_bytes().startswith(b"<!DOCTYPE html>") and target.stat().st_ino != inode
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["branched.jsonl", "out.html"]


def test_write_export_never_overwrites_a_file_that_appeared(tmp_path: Path) -> None:
    target = tmp_path / "late.md"
    target.write_bytes(b"someone else's")
    with pytest.raises(Exception, match="already exists"):
        write_export(target, b"new")
    assert target.read_bytes() == b"someone else's"
    assert write_export(tmp_path / "fresh.md", b"new").read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.md", "late.md"]


def test_export_path_api_for_the_tui(branched: Path, tmp_path: Path) -> None:
    tree, reader = _tree_reader(branched)
    out = export_path(tree, reader, tree.get("b0000009"), "md", tmp_path / "x.md", thinking=True)
    assert out == tmp_path / "x.md" and "b0000009" in out.read_text()
    with pytest.raises(ExportError, match="already exists"):
        export_path(tree, reader, None, "md", out)
    with pytest.raises(ExportError, match="unknown export format"):
        export_path(tree, reader, None, "pdf", tmp_path / "x.pdf")
    assert not (tmp_path / "x.pdf").exists()


@pytest.mark.writes_session
def test_file_changed_under_the_reader(branched: Path, tmp_path: Path) -> None:
    tree, reader = _tree_reader(branched)
    branched.write_bytes(b"\n" * branched.stat().st_size)
    with pytest.raises(ExportError, match="changed"):
        export_path(tree, reader, None, "jsonl", tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def test_header_sums_usage_as_four_parts_and_gives_pis_context_size(tmp_path: Path) -> None:
    """Pi 1.x adds input + output + cacheRead + cacheWrite (a stored totalTokens is ignored); the context size is
    the status bar's (Pi's estimateProjectedContextTokens), not the sum of per-message estimates."""
    a2 = assistant("a2", "u2", "two " * 400, t=4)
    a2["message"]["usage"] = {"input": 1000, "output": 20, "cacheRead": 3000, "cacheWrite": 4, "totalTokens": 99}
    path = write(tmp_path, [user("u1", None, t=1), assistant("a1", "u1", "one", t=2), user("u2", "a1", t=3), a2])
    tree, _ = load_session(path)
    size = build_context(tree, tree.leaf).size
    # Pi's calculateContextTokens does prefer a stored totalTokens: the context size is 99, the usage sum is not.
    assert size.tokens == 99 and size.usage_node is not None and size.usage_node.id == "a2"
    text = "".join(tags_of(render(path, "html")).text)
    assert "input 1,001 · output 22 · cache read 3,003 · cache write 8 · total 4,034 tokens" in text
    assert "4 messages; Pi's context size 99 tokens (reply a2's usage" in text
