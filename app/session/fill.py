"""How a parsed JSON entry becomes a `Node` (`fill_node`): type, role, Pi's row text, Pi 1.6's token
estimate, usage, tool calls, and the `meta` of the few entry types that need more.

What `meta` holds, by entry type (None for the rest):
- assistant: `responseModel` when the reply names one (Pi 1.x keys its usage by it);
- system message: `system`, the `estimate.SystemFacts` the collapsed system head needs;
- bashExecution: `excludeFromContext`;
- compaction: `tokensBefore`, `firstKeptEntryId`, `summary`, and `checkpoint` = (role, estimate, facts) of its
  `systemMessage` when it has one;
- branch_summary: `fromId`, `summary`, `hasSummary`; context_edit: `targetId`, `omit`, `est` = the
  replacement's estimate as (user/custom/toolResult, assistant);
- model_change, thinking_level_change, custom, label, session_info: the fields their rows and Pi's rules read.
Usage (`Node.usage`) is kept for every source Pi 1.x totals: assistant and tool-result messages, `usage`
entries, compactions and branch summaries.
"""

from __future__ import annotations

import math
from marshal import dumps as _marshal_dumps
from typing import Any

from pitree.session.content import blocks
from pitree.session.entries import (
    ALWAYS_HIDDEN,
    FROM_HOOK,
    HIDDEN_TOOL_ONLY,
    IS_ERROR,
    NO_CONTEXT_USAGE,
    Node,
    shared_string,
    shared_strings,
    tag_of,
)
from pitree.session.estimate import (
    IMAGE_CHARS,
    assistant_chars,
    ceil4,
    estimate_message_tokens,
    js_len,
    system_facts,
    text_image_chars,
)
from pitree.session.text import (
    ROW_TEXT_MAX,
    as_str,
    extract_content,
    format_tool_call,
    js_string,
    json_compact,
    normalize,
)

_intern = shared_string
_known = shared_strings()  # looked up first: a type or role is nearly always one seen before


def _num(value: Any) -> float:
    t = type(value)
    if t is int or t is float:
        return value  # type: ignore[no-any-return]
    return 0.0


def usage_values(usage: Any) -> bytes | None:
    """`pack_usage` of a usage object (input, output, cacheRead, cacheWrite, totalTokens, cost.total); None
    when it is not an object."""
    if type(usage) is not dict:
        return None
    cost = usage.get("cost")
    return _marshal_dumps(
        (
            _num(usage.get("input")),
            _num(usage.get("output")),
            _num(usage.get("cacheRead")),
            _num(usage.get("cacheWrite")),
            _num(usage.get("totalTokens")),
            _num(cost.get("total")) if type(cost) is dict else 0.0,
        ),
        2,
    )


def _assistant(node: Node, msg: dict[str, Any]) -> None:
    # One pass over the blocks gives the row text (Pi's extractContent), whether any text is non-blank
    # (hasTextContent), Pi's character count (estimateTokens) and the tool calls (for result rows).
    content = msg.get("content")
    chars = 0
    text = ""
    has_text = False
    calls: list[tuple[Any, str]] | None = None
    if type(content) is list:
        for block in content:  # `content.blocks`, inlined: a generator costs a step per block on every line
            if type(block) is not dict:
                continue
            btype = block.get("type")
            if btype == "text":
                t = block.get("text")
                if type(t) is not str:
                    t = as_str(t)
                chars += len(t) if t.isascii() else js_len(t)
                if len(text) < ROW_TEXT_MAX:
                    text += t
                if not has_text and t and not t.isspace():
                    has_text = True
            elif btype == "thinking":
                t = block.get("thinking")
                if type(t) is not str:
                    t = as_str(t)
                chars += len(t) if t.isascii() else js_len(t)
            elif btype == "toolCall":
                name, args = block.get("name"), block.get("arguments")
                name_s = name if type(name) is str else as_str(name)
                args_s = json_compact(args)
                chars += js_len(name_s) + (len(args_s) if args_s.isascii() else js_len(args_s))
                if calls is None:
                    calls = []
                calls.append((block.get("id"), format_tool_call(name, args)))
    elif type(content) is str:
        text = content
        has_text = bool(content.strip())
    node.est = -(-chars // 4)
    text = normalize(text[:ROW_TEXT_MAX])
    stop = msg.get("stopReason")
    error_message = msg.get("errorMessage")
    if text:
        node._text = "assistant: " + text
    elif stop == "aborted":
        node._text = "assistant: (aborted)"
    elif error_message:
        node._text = "assistant: " + normalize(as_str(error_message))[:80]
    else:
        node._text = "assistant: (no content)"
    if not has_text and not (stop and stop not in ("stop", "toolUse")):
        node.flags |= HIDDEN_TOOL_ONLY
    if stop == "error" or error_message:
        node.flags |= IS_ERROR
    if stop == "aborted" or stop == "error":
        node.flags |= NO_CONTEXT_USAGE
    provider, model = msg.get("provider"), msg.get("model")
    if provider is not None or model is not None:
        node.model = (provider, model)
    node._usage = usage_values(msg.get("usage"))
    if calls:
        node._calls = tuple(calls)
    response = msg.get("responseModel")
    if response is not None:  # Pi 1.x: the usage breakdown keys the reply by `responseModel ?? model`
        node.meta = {"responseModel": response}


def _user(node: Node, msg: dict[str, Any]) -> None:
    content = msg.get("content")
    if type(content) is str:
        node.est = -(-(len(content) if content.isascii() else js_len(content)) // 4)
        node._text = "user: " + normalize(content[:ROW_TEXT_MAX])
        return
    chars = 0
    text = ""
    if type(content) is list:
        for btype, block in blocks(content):
            if btype == "text":
                t = block.get("text")
                if type(t) is not str:
                    t = as_str(t)
                if t:
                    chars += len(t) if t.isascii() else js_len(t)
                if len(text) < ROW_TEXT_MAX:
                    text += t
            elif btype == "image":
                chars += IMAGE_CHARS  # Pi 1.x counts a user's images too (0.73 did not)
    node.est = -(-chars // 4)
    node._text = "user: " + normalize(text[:ROW_TEXT_MAX])


def _message(node: Node, msg: Any) -> None:
    if not isinstance(msg, dict):
        node._tag = tag_of("message", None, 0)
        node._text = f"[message: {type(msg).__name__ if msg is not None else 'missing'}]"
        return
    role = msg.get("role")
    node._tag = tag_of("message", (_known.get(role) or _intern(role)) if type(role) is str else js_string(role), 0)
    if role == "user":
        _user(node, msg)
        return
    if role == "assistant":
        _assistant(node, msg)
        return
    if role == "toolResult":
        node.est = ceil4(text_image_chars(msg.get("content")))  # `estimate_message_tokens`, its dispatch skipped
        node.call_id = msg.get("toolCallId")
        # Pi shows the formatted call instead once the tree knows it (its toolCallMap); one copy per tool name.
        node._text = _intern(f"[{js_string(msg.get('toolName') or 'tool')}]")
        if msg.get("isError") is True:
            node.flags |= IS_ERROR
        if msg.get("usage"):  # Pi 1.x: what a tool's own model calls cost (counted in the totals)
            node._usage = usage_values(msg.get("usage"))
        return
    node.est = estimate_message_tokens(role, msg)
    if role == "system":
        node._text = "[system]"
        node.meta = {"system": system_facts(msg)}
    elif role == "bashExecution":
        node._text = "[bash]: " + normalize(as_str(msg.get("command")))
        code = msg.get("exitCode")
        if isinstance(code, int | float) and code != 0:
            node.flags |= IS_ERROR
        if msg.get("excludeFromContext"):
            node.meta = {"excludeFromContext": True}
    else:
        node._text = f"[{node.role}]"


def _compaction(node: Node, obj: dict[str, Any]) -> None:
    before = obj.get("tokensBefore")
    summary = as_str(obj.get("summary"))
    if isinstance(before, int | float) and not isinstance(before, bool):
        rounded = math.floor(before / 1000 + 0.5) if math.isfinite(before) else before  # Math.round
        node._text = f"[compaction: {js_string(rounded)}k tokens]"
    else:
        node._text = f"[compaction: {js_string(before)} tokens]"
    node.est = -(-js_len(summary) // 4)
    node.meta = meta = {
        "tokensBefore": before,
        "firstKeptEntryId": obj.get("firstKeptEntryId"),
        "summary": summary,
    }
    checkpoint = obj.get("systemMessage")
    if checkpoint:  # Pi 1.x: the prompt and tools replayed first in the context after this compaction
        role = checkpoint.get("role") if isinstance(checkpoint, dict) else None
        msg = checkpoint if isinstance(checkpoint, dict) else {}
        meta["checkpoint"] = (
            js_string(role),
            estimate_message_tokens(role, msg),
            system_facts(msg) if role == "system" else None,
        )
    if obj.get("fromHook"):
        node.flags |= FROM_HOOK
    if obj.get("usage"):
        node._usage = usage_values(obj.get("usage"))


def _context_edit(node: Node, obj: dict[str, Any]) -> None:
    """Pi 1.x: `replacement` null omits the target from the context, else its content is replaced. The
    replacement's estimate is kept for both shapes Pi counts (user-like: text and images; assistant: text,
    thinking and tool calls), since the target's role decides which applies."""
    target = obj.get("targetId")
    omit = "replacement" in obj and obj["replacement"] is None
    shown = js_string(target) if "targetId" in obj else "undefined"
    node._text = f"[context {'omit' if omit else 'replace'}: {normalize(shown)}]"
    replacement = obj.get("replacement")
    content = replacement.get("content") if isinstance(replacement, dict) else None
    node.meta = {
        "targetId": target,
        "omit": omit,
        "est": (-(-text_image_chars(content) // 4), -(-assistant_chars(content) // 4)),
    }


def fill_node(node: Node, obj: dict[str, Any]) -> None:
    """Set type, role, row text, estimate, usage and meta of `node` from its parsed JSON object."""
    etype = obj.get("type")
    if etype == "message":  # the type and the role in one go (`Node._tag`): most entries are messages
        _message(node, obj.get("message"))
        return
    node.type = (_known.get(etype) or _intern(etype)) if type(etype) is str else js_string(etype)
    if etype == "compaction":
        _compaction(node, obj)
    elif etype == "branch_summary":
        summary = as_str(obj.get("summary"))
        node._text = "[branch summary]: " + normalize(summary)  # Pi shows it whole (cut only by the width)
        node.est = -(-js_len(summary) // 4) if obj.get("summary") else 0
        node.meta = {"fromId": obj.get("fromId"), "summary": summary, "hasSummary": bool(obj.get("summary"))}
        if obj.get("fromHook"):
            node.flags |= FROM_HOOK
        if obj.get("usage"):
            node._usage = usage_values(obj.get("usage"))
    elif etype == "custom_message":
        content = obj.get("content")
        text = content if isinstance(content, str) else extract_content(content, max_len=10**9)
        node._text = f"[{js_string(obj.get('customType'))}]: " + normalize(text)  # whole, as Pi shows it
        node.est = estimate_message_tokens("custom", {"content": content})
    elif etype == "model_change":
        node._text = f"[model: {js_string(obj.get('modelId'))}]"
        node.meta = {"provider": obj.get("provider"), "modelId": obj.get("modelId")}
    elif etype == "thinking_level_change":
        node._text = f"[thinking: {js_string(obj.get('thinkingLevel'))}]"
        node.meta = {"thinkingLevel": obj.get("thinkingLevel")}
    elif etype == "custom":
        node._text = f"[custom: {js_string(obj.get('customType'))}]"
        node.meta = {"customType": obj.get("customType")}
    elif etype == "label":
        label = obj.get("label")
        node._text = f"[label: {js_string(label) if label is not None else '(cleared)'}]"
        # the raw timestamp too: an export writes the label again as Pi stored it
        node.meta = {"targetId": obj.get("targetId"), "label": label, "timestamp": obj.get("timestamp")}
    elif etype == "session_info":
        name = obj.get("name")
        node._text = f"[title: {normalize(js_string(name)) if name else 'empty'}]"  # Pi 1.6's row
        node.meta = {"name": name}
    elif etype == "context_edit":
        _context_edit(node, obj)
    elif etype == "usage":
        # Pi 1.x: usage that no message carries (e.g. `cache_warm`); always hidden in the tree, counted in totals
        node._text = f"[usage: {normalize(js_string(obj.get('kind')))}]"
        provider, model = obj.get("provider"), obj.get("model")
        node.model = (provider, model)
        node._usage = usage_values(obj.get("usage"))
        node.flags |= ALWAYS_HIDDEN
    else:
        node._text = f"[{node.type or 'unknown type'}]"
