"""Text helpers for the offline summary: the prose a person typed or wrote, apart from what was pasted or logged.

User messages in real sessions hold diffs, logs, tracebacks, screenshots' paths and one-word nudges
("continue"); assistant texts hold markdown, code and chatter ("Let me check…"). These helpers keep the
sentences a summary can quote.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_DIFF_LINE = re.compile(r"^(@@ |diff --git |index [0-9a-f]|--- |\+\+\+ |[+-](?![-+ ]*$))")
_LOG_LINE = re.compile(
    r"^\s*(at |File \"|Traceback|\[[\w .:-]+\]|[➜❯$#>] |\d+[:|]\s|npm (ERR|error)|error(\[\w+\])?:|warning:|"
    r"E\s{2,}|[A-Za-z]*Error\b:?|\^+$|\||[+-]\s?\d+\s|[⠀-⣿]|Debugger attached|Waiting for the debugger|"
    r"~?/?[\w./-]+ \([\w/.-]+\) )"
)
_BLOB = re.compile(
    r"[\[{]\s*\\?\"[^\n]{40,}|\b(Error|Exception): [^\n]{20,}"
)  # inline JSON pasted into a sentence, to the end of its line
_PATH_ONLY = re.compile(r"^['\"]?(~|\.{0,2}/|[A-Za-z]:\\)[^\s'\"]*['\"]?$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")
_MD = re.compile(r"(\*\*|__|~~)")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_LIST = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(?:\[[ xX]\]\s+)?(.*\S)")
_WORD = re.compile(r"[A-Za-zÀ-ÿ]{2,}")
NUDGES = frozenset(
    "continue go on ok okay yes yep y no nope k thanks thank you ty do it proceed go ahead try again again next "
    "sure cool nice good great perfect lgtm done keep going carry on resume retry and".split()
)


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def short(text: str, limit: int = 160) -> str:
    """`text` on one line, cut at a sentence or word boundary near `limit`."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    for stop in (". ", "? ", "! ", "; ", ", ", " "):
        at = cut.rfind(stop, limit // 2)
        if at > 0:
            return cut[: at + (1 if stop != " " else 0)].rstrip() + "…"
    return cut.rstrip() + "…"


def _pasted_block(lines: list[str]) -> bool:
    """Most of these lines look like a diff or a log."""
    code = sum(1 for ln in lines if _DIFF_LINE.match(ln) or _LOG_LINE.match(ln))
    return len(lines) >= 3 and code * 2 >= len(lines)


def prose_lines(text: str) -> list[str]:
    """The lines of `text` a person wrote: no fenced code, no diff or log lines, no bare paths, no headings."""
    out: list[str] = []
    fenced = False
    lines = text.splitlines()
    diff = _pasted_block([ln for ln in lines if ln.strip()])
    dropped = False  # the previous line was pasted: an indented line after it continues it
    for raw in lines:
        line = _BLOB.sub("…", raw)
        if _FENCE.match(line):
            fenced = not fenced
            continue
        stripped = line.strip()
        pasted = (
            fenced
            or _PATH_ONLY.match(stripped) is not None
            or (diff and _DIFF_LINE.match(line) is not None)
            or _LOG_LINE.match(line) is not None
            or (len(stripped) > 60 and " " not in stripped)  # a hash, a URL, a minified blob
            or (line.startswith(("    ", "\t")) and not _LIST.match(line))  # indented code or output
            or (dropped and line[:1].isspace())
        )
        if not stripped or _HEADING.match(line):
            dropped = False
            continue
        dropped = bool(pasted) or line != raw
        if not pasted:
            out.append(stripped)
    return out


def sentences(text: str) -> list[str]:
    """Prose sentences of `text`, markdown emphasis removed, list markers dropped, each with real words."""
    out: list[str] = []
    for line in prose_lines(text):
        m = _LIST.match(line)
        line = _MD.sub("", m.group(1) if m else line)
        for s in _SENTENCE.split(line):
            s = s.strip()
            if len(_WORD.findall(s)) >= 2 and not _noisy(s):
                out.append(s)
    return out


def _noisy(text: str) -> bool:
    """Terminal output or data rather than a sentence: few letters, or many symbols and figures."""
    plain = sum(1 for ch in text if ch.isalpha() or ch in " ,.'’-")
    return plain < 0.8 * len(text)


def list_items(text: str) -> list[str]:
    """The markdown list items of `text`'s prose, emphasis removed."""
    out = []
    for line in prose_lines(text):
        m = _LIST.match(line)
        if m and len(_WORD.findall(m.group(1))) >= 2:
            out.append(_MD.sub("", m.group(1)))
    return out


_NEXT_HEADING = re.compile(r"^\s*#{1,6}\s*(next|todo|to do|remaining|follow[- ]?ups?|open (questions|items))", re.I)


def next_items(text: str) -> list[str]:
    """The list items under a "Next steps" / "TODO" / "Remaining" heading of `text`."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if _HEADING.match(line):
            inside = bool(_NEXT_HEADING.match(line))
            continue
        m = _LIST.match(line)
        if inside and m and len(_WORD.findall(m.group(1))) >= 1:
            out.append(_MD.sub("", m.group(1)))
    return out


def is_nudge(text: str) -> bool:
    """A message that only keeps the conversation going ("continue", "ok do it"), or a slash command."""
    t = text.strip().lower()
    if not t or t.startswith("/"):
        return True
    words = re.findall(r"[a-z']+", t)
    return len(words) <= 4 and all(w in NUDGES for w in words)


def request_text(text: str) -> str:
    """What a user message asks, without what was pasted into it ('' when nothing is left)."""
    if is_nudge(text):
        return ""
    prose = " ".join(prose_lines(text))
    return prose if len(_WORD.findall(prose)) >= 3 else ""
