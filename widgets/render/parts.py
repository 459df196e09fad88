"""The pieces the entry pane's renderers build from: `Fold`s and `GoTo` links, literal text, folded long
output, JSON, content blocks, the usage table, generic fields.

Session text is never markup: strings become `Text` after `make_safe`; Markdown is built from its source
with hyperlinks off (`render_markdown`). Every part is bounded: a field keeps at most `MAX_CHARS`
characters, and what is shown unfolded is a few thousand, so the render that Textual does on the main
thread stays short even for a huge tool result. Highlighting is done here (pygments, in the caller's
worker thread) and handed over as styled `Text`, never as a `Syntax` that would lex again while painting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from pitree.session.content import each_block
from pitree.session.dialect_omp import is_truncated
from pitree.session.text import as_str, make_safe
from pitree.session.tree import SessionTree
from pitree.store.blobs import blob_text, is_blob_ref
from rich.console import RenderableType
from rich.text import Text

MAX_CHARS = 200_000  # of one field; the rest is counted, not shown
HEAD_LINES = 40  # shown unfolded; the rest of a long output goes into a Fold
HEAD_CHARS = 8_000  # ... and at most this much, for outputs made of a few enormous lines
HIGHLIGHT_MAX = 20_000  # a longer fold body is shown as plain text (a dense highlight renders slowly)
MARKDOWN_MAX = 20_000  # assistant text beyond this is shown as plain text in a Fold
NAME_MAX = 200  # of a name or id shown on one line (a section, a tool, a target)
LABEL_MAX = 5_000  # of a `name: value` line
THEME = "ansi_dark"  # ANSI colours follow the terminal's own palette


@dataclass(frozen=True, slots=True)
class Fold:
    """A part shown collapsed under `title` (a plain string: no session text goes into a title) and then
    `label` (session text, shown literally)."""

    title: str
    body: tuple[RenderableType, ...]
    collapsed: bool = True
    label: Text | None = None


@dataclass(frozen=True, slots=True)
class GoTo:
    """A line that names another entry and goes there when clicked (or with `o` in the entry pane)."""

    entry_id: str
    text: Text

    def __rich__(self) -> Text:
        return self.text


Part = RenderableType | Fold | GoTo


# ---- small pieces -----------------------------------------------------------------------------------------


def safe_text(value: Any, style: str = "", *, one_line: bool = False) -> Text:
    """Any JSON value as literal Text with control characters visible."""
    return Text(make_safe(as_str(value), keep_newlines=not one_line), style=style)


def name_text(value: Any, style: str = "", limit: int = NAME_MAX) -> Text:
    """A name or id from the file on one line, literal, cut at `limit` characters (with how many more)."""
    text = make_safe(as_str(value), keep_newlines=False)
    if len(text) <= limit:
        return Text(text, style)
    return Text(text[:limit], style) + Text(f"… ({len(text) - limit:,} more characters)", "dim italic")


def label(name: str, value: Any, style: str = "") -> Text:
    """`name: value` on one line, the value literal (JSON null shown as `null`), cut at LABEL_MAX characters."""
    if value is None:
        return Text(f"{name}: ", "dim") + Text("null", "dim italic")
    return Text(f"{name}: ", "dim") + name_text(value, style, LABEL_MAX)


def cut(text: str, limit: int = MAX_CHARS) -> tuple[str, int]:
    """The first `limit` characters and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def left_out_note(left_out: int, unit: str = "characters") -> Text | None:
    return Text(f"… {left_out:,} more {unit} not shown", "dim italic") if left_out else None


def highlighted(code: str, lexer: str | None, style: str = "") -> Text:
    """`code` (already safe) as wrapping Text, highlighted by pygments when a lexer is given."""
    if not lexer:
        return Text(code, style)
    from rich.syntax import Syntax  # on first use, as Markdown (pygments comes with it)

    text = Syntax(code, lexer, theme=THEME, word_wrap=True).highlight(code)
    text.no_wrap = False
    text.rstrip()
    return text


def _split_head(text: str, lines: int, chars: int) -> tuple[str, str]:
    pos = -1
    for _ in range(lines):
        pos = text.find("\n", pos + 1, chars + 1)
        if pos < 0:
            break
    if pos >= 0:
        return text[:pos], text[pos + 1 :]
    if len(text) <= chars:
        return text, ""
    return text[:chars], text[chars:]


def folded(title: str, value: Any, lexer: str | None = None, style: str = "", label: Text | None = None) -> Fold:
    """All of `value` (up to MAX_CHARS) in a Fold, highlighted unless it is long."""
    kept, left_out = cut(as_str(value))
    return fold_safe(title, make_safe(kept), left_out_note(left_out), lexer, style, label)


def fold_safe(
    title: str, safe: str, note: Text | None, lexer: str | None, style: str = "", label: Text | None = None
) -> Fold:
    body: list[RenderableType] = [highlighted(safe, lexer if len(safe) <= HIGHLIGHT_MAX else None, style)]
    if note is not None:
        body.append(note)
    return Fold(title, tuple(body), label=label)


def fold_text(
    value: Any,
    lexer: str | None = None,
    *,
    style: str = "",
    head_lines: int = HEAD_LINES,
    head_chars: int = HEAD_CHARS,
) -> list[Part]:
    """Long output: its first lines shown, the rest (up to MAX_CHARS) in a Fold titled "… N more lines"."""
    kept, left_out = cut(as_str(value))
    parts = _head_and_fold(make_safe(kept), left_out_note(left_out), lexer, style, head_lines, head_chars)
    if is_truncated(value):  # the end of the text is gone from the file itself
        parts.append(Text("cut by oh-my-pi when it saved the session (it keeps 500,000 characters)", "yellow"))
    return parts


def _head_and_fold(
    safe: str,
    note: Text | None,
    lexer: str | None,
    style: str = "",
    head_lines: int = HEAD_LINES,
    head_chars: int = HEAD_CHARS,
) -> list[Part]:
    head, rest = _split_head(safe, head_lines, head_chars)
    parts: list[Part] = [highlighted(head, lexer, style)]
    if rest:
        lines = rest.count("\n") + (0 if rest.endswith("\n") else 1)
        parts.append(fold_safe(f"… {lines:,} more line{'s' if lines != 1 else ''}", rest, note, lexer, style))
    elif note is not None:
        parts.append(note)
    return parts


def markdown(value: Any) -> list[Part]:
    """Markdown from its source; beyond MARKDOWN_MAX the rest is plain text in a Fold (`render_markdown`,
    imported on first use: markdown-it and Rich's Markdown would slow the explorer's start)."""
    from pitree.widgets.render.markdown import markdown as render

    return render(value)


def json_text(value: Any, limit: int = MAX_CHARS) -> tuple[str, int]:
    """`value` as indented JSON, cut at `limit` bytes (never decoding more), and how many bytes were cut."""
    try:
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        data = as_str(value).encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8", "replace"), 0
    return data[:limit].decode("utf-8", "ignore"), len(data) - limit


def json_view(value: Any, *, head_lines: int = HEAD_LINES, head_chars: int = HEAD_CHARS) -> list[Part]:
    """A JSON value pretty-printed and highlighted, folded when long."""
    text, left_out = json_text(value)
    return _head_and_fold(make_safe(text), left_out_note(left_out, "bytes"), "json", "", head_lines, head_chars)


# ---- blocks and messages ----------------------------------------------------------------------------------


def image_placeholder(block: dict[str, Any]) -> Text:
    """`[image: image/png, 12.3 KB]`, the size decoded from the base64 length; never the data."""
    data = block.get("data")
    mime = make_safe(as_str(block.get("mimeType")) or "unknown type", keep_newlines=False)
    if not isinstance(data, str):
        return Text(f"[image: {mime}, no data]", "bold blue")
    if is_blob_ref(data):  # oh-my-pi stored the bytes in its blob folder
        return Text(f"[image: {mime}, {blob_text(data)}]", "bold blue")
    size = len(data) * 3 // 4 - (2 if data.endswith("==") else 1 if data.endswith("=") else 0)
    shown = f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MB"
    return Text(f"[image: {mime}, {shown}]", "bold blue")


def other_block(block: Any) -> list[Part]:
    kind = block.get("type") if isinstance(block, dict) else None
    head = Text("block ", "dim") + (
        safe_text(kind, "bold", one_line=True) if kind is not None else Text(f"({type(block).__name__})", "dim")
    )
    return [head, *json_view(block)]


def content_parts(content: Any, lexer: str | None = None) -> list[Part]:
    """User, tool-result and custom content shown literally: strings, text blocks, image placeholders."""
    if isinstance(content, str):
        return fold_text(content, lexer)
    if content is None:
        return [Text("(no content)", "dim italic")]
    if not isinstance(content, list):
        return [Text(f"content is a {type(content).__name__}: ", "red"), *json_view(content)]
    out: list[Part] = []
    for btype, block in each_block(content):
        if btype == "text":
            out.extend(fold_text(block.get("text"), lexer))
        elif btype == "image":
            out.append(image_placeholder(block))
        else:
            out.extend(other_block(block))
    return out or [Text("(empty content)", "dim italic")]


def _num(value: Any, cost: bool = False) -> Text:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return safe_text(value, "red" if value is not None else "dim", one_line=True)
    if cost:
        return Text(f"${value:,.4f}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return Text(f"{value:,}" if isinstance(value, int) else f"{value:,.2f}")


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TOKENS = ("input", "output", "cacheRead", "cacheWrite")
_OPTIONAL = ("reasoning", "cacheWrite1h")  # Pi 1.x: parts of output / cacheWrite, when the provider says


def usage_table(usage: Any) -> RenderableType:
    """input, output, cacheRead, cacheWrite, totalTokens and cost of one model call. A missing totalTokens
    shows the sum of the four (what Pi adds up), marked `Σ`; reasoning and cacheWrite1h when present."""
    if not isinstance(usage, dict):
        return label("usage", usage, "red")
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="dim", padding=(0, 2, 0, 0))
    cols = (*_TOKENS, *(c for c in _OPTIONAL if c in usage), "totalTokens")
    for name in (*cols, "cost"):
        table.add_column(Text(name), justify="right")
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else cost
    cells = [_num(usage.get(c)) for c in cols]
    four = [usage.get(c) for c in _TOKENS]
    if usage.get("totalTokens") is None and all(_is_num(v) for v in four):
        cells[-1] = Text("Σ ", "dim") + _num(sum(four))
    table.add_row(*cells, _num(total, cost=True))
    return table


def field_parts(key: Any, value: Any) -> list[Part]:
    """One field, shown generically: scalars on one line, text and JSON below the key (folded when long)."""
    name = make_safe(as_str(key), keep_newlines=False)
    if isinstance(value, str) and "\n" not in value and len(value) <= 200:
        return [label(name, value)]
    if value is None or isinstance(value, bool | int | float):
        return [label(name, value, "" if value is not None else "dim")]
    if isinstance(value, str):
        return [Text(f"{name}:", "dim"), *fold_text(value)]
    compact = as_str(value)
    if len(compact) <= 100:
        return [Text(f"{name}: ", "dim") + highlighted(make_safe(compact), "json")]
    return [Text(f"{name}:", "dim"), *json_view(value)]


def extra_fields(obj: dict[str, Any], known: set[str]) -> list[Part]:
    """Every field of `obj` not in `known`, generically (unknown fields are shown, never dropped)."""
    out: list[Part] = []
    for key, value in obj.items():
        if key not in known:
            out.extend(field_parts(key, value))
    return out


def ref(tree: SessionTree | None, entry_id: Any) -> Text:
    """An entry id and where it is (line), or that it is not in this session."""
    t = safe_text(entry_id, "cyan", one_line=True) if entry_id is not None else Text("(none)", "dim")
    if tree is not None and isinstance(entry_id, str):
        target = tree.get(entry_id)
        if target is not None:
            t.append(f"  (line {target.line:,})", "dim")
        else:
            t.append("  (not in this session)", "yellow")
    return t
