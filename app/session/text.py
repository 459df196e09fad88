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
# ONE rule for every output (terminal text, the TUI, JSON, Markdown and HTML exports): these code points never
# reach an output as themselves. C0/C1 controls and DEL (a terminal acts on them: U+009B is a one-byte CSI),
# bidi controls (U+202E reverses what follows), zero-width characters, and the other Unicode format characters
# (category Cf): invisible, yet they hide text (tag characters spell out "ASCII smuggling" payloads, a soft
# hyphen splits a word unseen) or join and reorder it.
UNSAFE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00, 0x1F),
    (0x7F, 0x9F),
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


def _class(ranges: tuple[tuple[int, int], ...], skip: str = "") -> str:
    parts: list[str] = []
    for lo, hi in ranges:
        chars = [chr(c) for c in range(lo, hi + 1) if chr(c) not in skip]
        parts.extend(re.escape(c) for c in chars)
    return "[" + "".join(parts) + "]"


_UNSAFE_RE = re.compile(_class(UNSAFE_RANGES, skip="\n\t"))
_UNSAFE_WITH_WS_RE = re.compile(_class(UNSAFE_RANGES))


def _visible(ch: str) -> str:
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures" block: ␛ ␀ ␇ ...
    if code == 0x7F:
        return "\u2421"
    return f"<U+{code:04X}>"


def make_safe(text: str, keep_newlines: bool = True) -> str:
    """Replace every control, C1, bidi, zero-width and format character (UNSAFE_RANGES) with a visible symbol.

    ESC becomes ␛ so a CSI/OSC/DCS sequence is shown as text and never interpreted by the terminal; U+009B
    becomes `<U+009B>`. Newlines and tabs are kept when keep_newlines is true; everything else is made visible.
    """
    pattern = _UNSAFE_RE if keep_newlines else _UNSAFE_WITH_WS_RE
    if not pattern.search(text):
        return text
    return pattern.sub(lambda m: _visible(m.group()), text)


def one_line(value: str | os.PathLike[str], limit: int | None = None) -> str:
    """A path or a string from outside pitree (a file name, another process's command line) as one printable
    line for a message: repr() when it holds control or undecodable characters; cut to `limit` characters."""
    text = os.fspath(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text if text.isprintable() else repr(text)


def name_safe(text: str) -> str:
    """`text` for a file name pitree suggests: every unsafe character (and `/`) becomes `_`."""
    return _UNSAFE_WITH_WS_RE.sub("_", text).replace("/", "_")


def _json_escape(ch: str) -> bytes:
    code = ord(ch)
    if code > 0xFFFF:  # JSON's \u escapes are UTF-16: a surrogate pair
        code -= 0x10000
        return b"\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
    return b"\\u%04x" % code


# Their UTF-8 forms (U+0080 on; JSON encoders already escape C0), for JSON text: inside a JSON string a `\u009b`
# escape is the same character to a parser, and nothing a terminal acts on when the output is read on screen.
def _utf8_pattern(ranges: tuple[tuple[int, int], ...]) -> re.Pattern[bytes]:
    """One alternative per UTF-8 prefix with the last bytes as a class (an alternation of every literal scans
    many times slower)."""
    by_prefix: dict[bytes, list[int]] = {}
    for lo, hi in ranges:
        for code in range(max(lo, 0x7F), hi + 1):
            raw = chr(code).encode()
            by_prefix.setdefault(raw[:-1], []).append(raw[-1])
    alts = [re.escape(p) + b"[" + b"".join(re.escape(bytes([b])) for b in last) + b"]" for p, last in by_prefix.items()]
    return re.compile(b"|".join(alts))


# Their UTF-8 forms (U+007F on; JSON encoders already escape C0), for JSON text: inside a JSON string a `\u009b`
# escape is the same character to a parser, and nothing a terminal acts on when the output is read on screen.
_UNSAFE_UTF8_RE = _utf8_pattern(UNSAFE_RANGES)


# What the quick test drops: a character's UTF-8 bytes are all >= 0x80, so the rest still holds every one whole,
# and the pattern scans a few percent of the output instead of all of it.
_ASCII_BUT_DEL = bytes(range(0x7F))


def json_safe(data: bytes) -> bytes:
    """JSON bytes (as orjson writes them) with every unsafe character inside its strings as a `\\uXXXX` escape:
    the same data to a JSON parser, nothing raw on a terminal."""
    if (data.isascii() and b"\x7f" not in data) or not _UNSAFE_UTF8_RE.search(data.translate(None, _ASCII_BUT_DEL)):
        return data
    return _UNSAFE_UTF8_RE.sub(lambda m: b"".join(_json_escape(c) for c in m.group().decode()), data)


# Huge strings ------------------------------------------------------------------------------------------------

CUT_CHARS = 1_000_000  # of one string, for what is shown or exported: a 200 MB tool result is never read through


def cut_note(total: int, limit: int = CUT_CHARS) -> str:
    return f"\n… [cut: the first {limit:,} of {total:,} characters are shown]"


def cut_huge(value: Any, limit: int = CUT_CHARS) -> Any:
    """`value` (parsed JSON, changed in place) with every string value longer than `limit` cut to its first
    `limit` characters and a note of its length (`cut_note`). Iterative: nesting as deep as JSON allows.
    An image block's `data` is kept: it is never shown, but its length gives the image's size."""
    stack = [value] if isinstance(value, dict | list) else []
    while stack:
        node = stack.pop()
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        image = isinstance(node, dict) and node.get("type") == "image"
        for key, item in list(pairs):
            if isinstance(item, str):
                if len(item) > limit and not (image and key == "data"):
                    node[key] = item[:limit] + cut_note(len(item), limit)
            elif isinstance(item, dict | list):
                stack.append(item)
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + cut_note(len(value), limit)
    return value


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


def plural(n: int, one: str, many: str | None = None) -> str:
    """`one` for exactly 1, else `many` (default: one + "s"); callers write the number themselves."""
    return one if n == 1 else (many if many is not None else one + "s")


def count(n: int, one: str, many: str | None = None) -> str:
    """"1 message", "2 messages", "1,234 entries"."""
    return f"{n:,} {plural(n, one, many)}"
