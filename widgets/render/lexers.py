"""Which pygments lexer shows a tool's output: from the file path in Pi's formatted call text, or guessed
from how the output starts.
"""

from __future__ import annotations

import orjson

_LEXERS = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "ts": "typescript",
    "tsx": "tsx",
    "jsx": "jsx",
    "json": "json",
    "jsonl": "json",
    "md": "markdown",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "rs": "rust",
    "go": "go",
    "toml": "toml",
    "yaml": "yaml",
    "yml": "yaml",
    "html": "html",
    "htm": "html",
    "css": "css",
    "scss": "scss",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "hpp": "cpp",
    "java": "java",
    "kt": "kotlin",
    "rb": "ruby",
    "php": "php",
    "swift": "swift",
    "sql": "sql",
    "xml": "xml",
    "lua": "lua",
    "diff": "diff",
    "patch": "diff",
    "ini": "ini",
    "cfg": "ini",
    "tf": "terraform",
    "cs": "csharp",
    "scala": "scala",
    "vue": "html",
}


def lexer_for_path(path: str | None) -> str | None:
    """A pygments lexer name from a file name's extension (or Makefile / Dockerfile)."""
    if not path:
        return None
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if name in ("Makefile", "makefile", "GNUmakefile"):
        return "make"
    if name.startswith("Dockerfile"):
        return "docker"
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return _LEXERS.get(ext)


def lexer_for_text(text: str) -> str | None:
    """A lexer guessed from the start of a tool's output: JSON, a diff, a script with a #! line, XML/HTML."""
    start = text[:2000].lstrip()
    if start.startswith(("{", "[")) and len(text) <= 5_000_000:
        try:
            orjson.loads(text)
            return "json"
        except orjson.JSONDecodeError:
            pass
    if start.startswith(("diff --git", "--- ", "Index: ")) and "\n+++ " in start and "\n@@" in start:
        return "diff"
    if start.startswith("#!"):
        first = start.split("\n", 1)[0]
        for needle, lexer in (("python", "python"), ("node", "javascript"), ("bash", "bash"), ("sh", "bash")):
            if needle in first:
                return lexer
    if start.startswith(("<?xml", "<svg")):
        return "xml"
    if start[:15].lower().startswith(("<!doctype html", "<html")):
        return "html"
    return None


def call_path(call: str | None) -> str | None:
    """The file path in Pi's formatted call text (`[read: src/x.py:10-40]`, `[edit: a.py]`)."""
    if not call:
        return None
    for prefix in ("[read: ", "[write: ", "[edit: "):
        if call.startswith(prefix) and call.endswith("]"):
            path = call[len(prefix) : -1]
            head, sep, tail = path.rpartition(":")
            return head if sep and tail.replace("-", "").isdigit() else path
    return None
