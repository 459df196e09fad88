"""Assistant text as Markdown, made safe: Rich's Markdown built from the source with hyperlinks off and every
parsed token made safe again (entities such as `&#27;` decode to control characters only after parsing).
markdown-it and Rich's Markdown are imported on the first call, not with this module: they are a noticeable
part of the explorer's start, and most first screens hold no Markdown."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from pitree.session.text import as_str, make_safe
from pitree.widgets.render.parts import MARKDOWN_MAX, THEME, Part, cut, fold_safe, left_out_note
from rich.text import Text

if TYPE_CHECKING:
    from markdown_it.token import Token
    from rich.markdown import Markdown


@cache
def safe_markdown_class() -> type[Markdown]:
    """Rich Markdown without hyperlinks, whose parsed tokens are made safe (entities decode after parsing)."""
    from rich.markdown import Markdown

    class SafeMarkdown(Markdown):
        def __init__(self, source: str) -> None:
            super().__init__(make_safe(source), code_theme=THEME, hyperlinks=False)
            _sanitize(self.parsed)

    return SafeMarkdown


def _sanitize(tokens: Iterable[Token]) -> None:
    for token in tokens:
        token.content = make_safe(token.content)
        token.info = make_safe(token.info, keep_newlines=False)
        if token.attrs:
            token.attrs = {
                k: make_safe(v, keep_newlines=False) if isinstance(v, str) else v for k, v in token.attrs.items()
            }
        if token.children:
            _sanitize(token.children)


def markdown(value: Any) -> list[Part]:
    """Markdown from its source; beyond MARKDOWN_MAX the rest is plain text in a Fold."""
    kept, left_out = cut(as_str(value))
    rest = ""
    if len(kept) > MARKDOWN_MAX:
        split = kept.rfind("\n", 0, MARKDOWN_MAX)
        split = split if split > MARKDOWN_MAX // 2 else MARKDOWN_MAX
        kept, rest = kept[:split], kept[split:].lstrip("\n")
    parts: list[Part] = [safe_markdown_class()(kept)]
    if rest:
        lines = rest.count("\n") + 1
        parts.append(fold_safe(f"… {lines:,} more lines (plain text)", make_safe(rest), left_out_note(left_out), None))
    elif left_out:
        parts.append(Text(f"… {left_out:,} more characters not shown", "dim italic"))
    return parts
