"""Pure text helpers: what Pi shows for an entry, and making session text safe for a terminal.

Everything here takes plain Python values (the parsed JSON) and never raises on wrong types:
Pi's files come from crashed agents and hand edits, so every accessor tolerates anything.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

import orjson

ROW_TEXT_MAX = 200  # Pi's extractContent() keeps the first 200 characters of a message


def normalize(text: str) -> str:
    """Pi's row normalisation: newlines and tabs become spaces, then trim (JS trim: all whitespace)."""
    if "\n" in text:
        text = text.replace("\n", " ")
    if "\t" in text:
        text = text.replace("\t", " ")
    return text.strip()


def extract_content(content: Any, max_len: int = ROW_TEXT_MAX) -> str:
    """Pi's TreeList.extractContent: a string, or the text blocks of a list, cut at max_len."""
    if isinstance(content, str):
        return content[:max_len]
    if isinstance(content, list):
        out = ""
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                out += as_str(block.get("text"))
                if len(out) >= max_len:
                    return out[:max_len]
        return out
    return ""


def has_text_content(content: Any) -> bool:
    """Pi's hasTextContent: some text block (or the string) is non-blank."""
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str) and text.strip():
                    return True
    return False


def as_str(value: Any) -> str:
    """A display string for any JSON value: strings as they are, others as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def js_string(value: Any) -> str:
    """JavaScript's String(value) for JSON values, as Pi's template literals produce."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    return "[object Object]"


def _shorten_path(path: str) -> str:
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""
    if home and path.startswith(home):
        return "~" + path[len(home) :]
    return path


def _arg(args: dict[str, Any], *keys: str, default: str = "") -> str:
    """Pi's `String(args.a || args.b || default)`: the first truthy value."""
    for key in keys:
        value = args.get(key)
        if value:
            return js_string(value)
    return default


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_compact(value: Any) -> str:
    """JSON.stringify as Pi uses it for arguments (compact, no spaces)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return js_string(value)


def format_tool_call(name: Any, args: Any) -> str:
    """Pi's TreeList.formatToolCall: how a tool result row shows the call it answers."""
    name_s = js_string(name)
    if not isinstance(args, dict):
        args = {}
    if name_s == "read":
        display = _shorten_path(_arg(args, "path", "file_path"))
        offset, limit = args.get("offset"), args.get("limit")
        # Pi tests `!== undefined`, so a JSON null counts as present; `end ? … : ""` drops an end of 0.
        if "offset" in args or "limit" in args:
            start = offset if offset is not None else 1
            end = ""
            lim = 0 if limit is None else limit  # JavaScript's null + 1 is 1
            if "limit" in args and _is_num(start) and _is_num(lim):
                value = start + lim - 1
                end = js_string(value) if value else ""
            display += f":{js_string(start)}{'-' + end if end else ''}"
        return f"[read: {display}]"
    if name_s in ("write", "edit"):
        return f"[{name_s}: {_shorten_path(_arg(args, 'path', 'file_path'))}]"
    if name_s == "bash":
        raw = _arg(args, "command")
        cmd = normalize(raw)[:50]
        return f"[bash: {cmd}{'...' if len(raw) > 50 else ''}]"
    if name_s == "grep":
        return f"[grep: /{_arg(args, 'pattern')}/ in {_shorten_path(_arg(args, 'path', default='.'))}]"
    if name_s == "find":
        return f"[find: {_arg(args, 'pattern')} in {_shorten_path(_arg(args, 'path', default='.'))}]"
    if name_s == "ls":
        return f"[ls: {_shorten_path(_arg(args, 'path', default='.'))}]"
    args_s = json_compact(args)
    return f"[{name_s}: {args_s[:40]}{'...' if len(args_s) > 40 else ''}]"


# Terminal safety ---------------------------------------------------------------------------------------------

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u180e"


def _visible(ch: str) -> str:
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures" block: ␛ ␀ ␇ ...
    if code == 0x7F:
        return "\u2421"
    return f"<U+{code:04X}>"


# The other Unicode format characters (category Cf): invisible, yet they hide text (tag characters spell out
# "ASCII smuggling" payloads, a soft hyphen splits a word unseen) or join and reorder it.
_FORMAT = (
    "\u00ad\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u2061-\u2064\u206a-\u206f\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + _ZERO_WIDTH + _FORMAT + "\u2028\u2029]")
_UNSAFE_WITH_WS_RE = re.compile("[\x00-\x1f\x7f-\x9f" + _BIDI + _ZERO_WIDTH + _FORMAT + "\u2028\u2029]")


def make_safe(text: str, keep_newlines: bool = True) -> str:
    """Replace every control, C1, bidi-override and zero-width character with a visible symbol.

    ESC becomes ␛ so a CSI/OSC/DCS sequence is shown as text and never interpreted by the terminal.
    Newlines (and tabs) are kept when keep_newlines is true; everything else is made visible.
    """
    pattern = _UNSAFE_RE if keep_newlines else _UNSAFE_WITH_WS_RE
    if not pattern.search(text):
        return text
    return pattern.sub(lambda m: _visible(m.group()), text)


def human_size(n: int) -> str:
    """Bytes as people read them: `812 B`, `77.9 KB`, `2.1 MB`, `1.4 GB`; never four digits before the point
    (1,023,900 bytes is `1.0 MB`, not `999.9 KB` rounded up to `1000.0 KB`)."""
    if n < 1000:
        return f"{n} B"
    value = n / 1024
    for unit in ("KB", "MB"):
        if round(value, 1) < 1000:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
