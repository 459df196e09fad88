"""Search queries in Pi's session-picker forms, as an FTS5 MATCH expression plus an exact post-filter.

Pi 0.73 (modes/interactive/components/session-selector-search.js `parseSearchQuery`/`matchSession`):
- `re:PATTERN` (after trimming): the rest, trimmed, is a case-insensitive regex; nothing else is parsed.
  pitree uses Python's `re` (close to JavaScript's for ordinary patterns) with IGNORECASE.
- otherwise tokens split on whitespace; `"…"` groups a phrase; unbalanced quotes make the whole query plain
  whitespace-split words (the quote characters then belong to the words), exactly as Pi does.
- a phrase matches when it occurs in the text, both lower-cased with whitespace runs folded to one space.
- every token must match. Pi matches a plain word as a fuzzy subsequence of the session's whole text; pitree
  matches it as a case-insensitive substring of one entry's text (a hit is an entry, and a subsequence cannot be
  looked up in an index). The FTS5 index finds candidates by word prefix (`"word"*`), so a word matches where
  one of the text's words starts with it (`conf` finds `config`, `fig` does not); the post-filter then checks
  the substring exactly. Words without any letter or digit are checked by the post-filter alone.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query: all `words` and `phrases` must match, or the `regex` must (never both kinds)."""

    raw: str
    words: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    regex: re.Pattern[str] | None = None

    @property
    def empty(self) -> bool:
        return not self.words and not self.phrases and self.regex is None


def _fold(text: str) -> str:
    """Pi's normalizeWhitespaceLower."""
    return " ".join(text.lower().split())


def parse_query(text: str) -> Query:
    """Parse `text`; a bad or empty `re:` pattern raises ValueError with a message for the user."""
    trimmed = text.strip()
    if not trimmed:
        return Query(text)
    if trimmed.startswith("re:"):
        pattern = trimmed[3:].strip()
        if not pattern:
            raise ValueError("empty regex after re:")
        try:
            with warnings.catch_warnings():  # "possible nested set" and the like are not the user's concern
                warnings.simplefilter("ignore")
                return Query(text, regex=re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"bad regex {pattern!r}: {exc}") from None
    words: list[str] = []
    phrases: list[str] = []
    buf: list[str] = []
    in_quote = False

    def flush(phrase: bool) -> None:
        value = "".join(buf).strip()
        buf.clear()
        if value:
            (phrases if phrase else words).append(value)

    for ch in trimmed:
        if ch == '"':
            flush(in_quote)
            in_quote = not in_quote
            continue
        if not in_quote and ch.isspace():
            flush(False)
            continue
        buf.append(ch)
    if in_quote:  # unbalanced: Pi falls back to plain whitespace tokens
        return Query(text, words=tuple(trimmed.split()))
    flush(False)
    return Query(text, words=tuple(words), phrases=tuple(p for p in phrases if _fold(p)))


def _as_query(query: Query | str) -> Query:
    return query if isinstance(query, Query) else parse_query(query)


def _fts_string(value: str) -> str:
    # SQLite reads the expression as a C string: a NUL would end it inside the quotes.
    return '"' + value.replace('"', '""').replace("\x00", " ") + '"'


def _has_token(value: str) -> bool:
    # unicode61 keeps letters, digits (and private-use characters); anything else separates tokens.
    return any(ch.isalnum() for ch in value)


def to_fts_match(query: Query | str) -> str | None:
    """An FTS5 MATCH expression finding (a superset of) the matching documents; None when only a scan can.

    Every part is one quoted FTS5 string with a prefix star, so no query text is ever read as FTS5 syntax
    (AND, OR, NOT, NEAR, column filters, `^`, parentheses)."""
    q = _as_query(query)
    if q.regex is not None:
        return None
    parts = [_fts_string(w) + "*" for w in q.words if _has_token(w)]
    parts += [_fts_string(_fold(p)) + "*" for p in q.phrases if _has_token(p)]
    return " AND ".join(parts) if parts else None


def matches(query: Query | str, text: str) -> bool:
    """True when `text` satisfies the whole query (the exact test after the index's candidates)."""
    q = _as_query(query)
    if q.regex is not None:
        return q.regex.search(text) is not None
    if q.empty:
        return True
    lower = text.lower()
    for word in q.words:
        if word.lower() not in lower:
            return False
    if q.phrases:
        folded = _fold(text)
        for phrase in q.phrases:
            if _fold(phrase) not in folded:
                return False
    return True


def _regex_literals(pattern: str) -> list[str]:
    """Runs of plain characters at the top level of `pattern`: every match contains each of them."""
    try:
        from re import _parser  # type: ignore[attr-defined]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            items = list(_parser.parse(pattern, re.IGNORECASE))
        literal = _parser.LITERAL
    except Exception:  # noqa: BLE001 - an internal module: no pre-filter rather than a failure
        return []
    runs: list[str] = []
    run: list[str] = []
    for op, av in items:
        if op is literal:
            run.append(chr(av))
            continue
        runs.append("".join(run))
        run = []
    runs.append("".join(run))
    return runs


def required_literals(query: Query | str, most: int = 3) -> list[str]:
    """Up to `most` ASCII strings (lower-case) every matching text contains, for a cheap case-insensitive
    pre-filter (SQL LIKE) before the exact test; [] when nothing is known. LIKE folds ASCII case only, so text
    that matches only through a non-ASCII case fold of an ASCII letter (the Kelvin sign for `k`) is missed."""
    q = _as_query(query)
    if q.regex is not None:
        pieces = _regex_literals(q.regex.pattern)
    else:
        pieces = [*q.words, *(part for p in q.phrases for part in p.split())]
    usable = {p.lower() for p in pieces if len(p) >= 2 and p.isascii() and p.isprintable()}
    return sorted(usable, key=lambda p: (-len(p), p))[:most]


def first_match(query: Query | str, text: str) -> tuple[int, int] | None:
    """(start, end) in `text` of the first thing the query matched, for a snippet; None if nothing did."""
    q = _as_query(query)
    if q.regex is not None:
        m = q.regex.search(text)
        return (m.start(), m.end()) if m else None
    best: tuple[int, int] | None = None
    for needle in (*q.words, *q.phrases):
        parts = needle.split()
        if not parts:
            continue
        # Phrases may span any whitespace in the original text.
        pattern = r"\s+".join(re.escape(p) for p in parts)
        m = re.search(pattern, text, re.IGNORECASE)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), m.end())
    return best


def snippet(query: Query | str, text: str, width: int = 160) -> str:
    """About `width` characters of `text` around its first match, on one line, with `…` where cut."""
    span = first_match(query, text)
    start = 0 if span is None else max(0, span[0] - width // 3)
    end = min(len(text), start + width)
    start = max(0, min(start, end - width))
    piece = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")
