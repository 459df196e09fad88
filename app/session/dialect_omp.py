"""The oh-my-pi dialect (npm `@oh-my-pi/pi-coding-agent` 18.x): detecting it, its title slot, and its entries.

A file is oh-my-pi's when line 1 is its title slot (`{"type":"title","v":1,…}`, exactly 256 bytes with the
newline), when the header carries one of omp's extra fields, or when an entry of a type only omp writes turns
up. The dialect is decided while loading (`SessionBuilder`) and kept on the tree (`SessionTree.dialect`).

Rules (omp's `session-title-slot.ts`, `session-loader.ts`, `session-manager.ts`, `session-stats.ts`):
- name: the slot's title when there is a slot (an empty one clears the header's), else the header's `title`;
  without either, the latest `title_change` (a file whose slot was lost);
- model_change `{model:"provider/id", role?}`; thinking_level_change `null` means off;
- totals count assistant usage, `model_usage` entries and the `details.usage` of `task` tool results.
"""

from __future__ import annotations

from typing import Any

from pitree.session.content import each_block
from pitree.session.entries import Node
from pitree.session.estimate import ceil4, js_len, text_image_chars
from pitree.session.fill import usage_values
from pitree.session.parse import parse_line
from pitree.session.text import as_str, js_string, normalize

PI = "pi"
OMP = "omp"
DIALECT_NAMES = {PI: "Pi", OMP: "oh-my-pi"}

SLOT_BYTES = 256  # the title slot's line, newline included
SLOT_TYPE = "title"
HEADER_EXTRAS = ("title", "titleSource", "additionalDirectories", "previousSessionFiles", "providerPromptCacheKey")
# Entry types only oh-my-pi writes: one of them marks a file as omp's even without a slot.
OMP_TYPES = frozenset(
    {
        "model_usage",
        "title_change",
        "service_tier_change",
        "ttsr_injection",
        "session_init",
        "mode_change",
        "credential_pin",
        "reset_boundary",
    }
)
OMP_ROLES = frozenset({"developer", "fileMention", "pythonExecution", "hookMessage"})
TRUNCATED_MARK = "\n\n[Session persistence truncated large content]"
SKIPPED_CUSTOM = frozenset({"prewalk-plan", "vibe-mode-context"})  # never sent to the model
INTERRUPTED_THINKING = "interrupted-thinking"


def title_slot(obj: dict[str, Any], length: int) -> dict[str, Any] | None:
    """omp's `parseTitleSlotObject` for line 1 (`length` bytes without its newline): the slot, or None."""
    v = obj.get("v")
    if length + 1 != SLOT_BYTES or obj.get("type") != SLOT_TYPE or isinstance(v, bool) or v != 1:
        return None
    if not all(isinstance(obj.get(k), str) for k in ("title", "updatedAt", "pad")):
        return None
    if obj.get("source") not in (None, "auto", "user"):
        return None
    return obj


def title_slot_of(line: bytes) -> dict[str, Any] | None:
    """The slot in a line-1 byte string (its newline included), or None."""
    raw = line[:-1] if line.endswith(b"\n") else line
    obj, _ = parse_line(raw)
    return title_slot(obj, len(raw)) if obj is not None else None


def header_is_omp(header: dict[str, Any]) -> bool:
    return any(k in header for k in HEADER_EXTRAS)


def session_name(header: dict[str, Any] | None, slot: dict[str, Any] | None, changed: str | None) -> str | None:
    """The name omp shows: slot, else header title, else the latest title_change (`changed`)."""
    if slot is not None:
        title = slot.get("title")
        return title.strip() or None if isinstance(title, str) else None
    title = header.get("title") if header else None
    if isinstance(title, str) and title.strip():
        return title.strip()
    return changed


def split_model(value: Any) -> tuple[Any, Any]:
    """`"provider/id"` as (provider, id); the id keeps any further `/` (omp splits at the first)."""
    if isinstance(value, str) and "/" in value:
        provider, model_id = value.split("/", 1)
        return provider, model_id
    return None, value


def _is_usage(value: Any) -> bool:
    """omp's `isUsage`: the four counts, totalTokens and cost.total all numbers."""
    if not isinstance(value, dict) or not isinstance(value.get("cost"), dict):
        return False
    nums = [value.get(k) for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")]
    nums.append(value["cost"].get("total"))
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in nums)


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))


def _empty_error_turn(msg: dict[str, Any]) -> bool:
    """omp's `isEmptyErrorTurn`: an errored assistant turn with nothing in it worth replaying."""
    if msg.get("stopReason") != "error":
        return False
    for btype, block in each_block(msg.get("content")):
        if btype == "text":
            if as_str(block.get("text")).strip():
                return False
        elif btype == "thinking":
            if as_str(block.get("thinking")).strip() or as_str(block.get("thinkingSignature") or "").strip():
                return False
        elif btype == "redactedThinking":
            if as_str(block.get("data")).strip():
                return False
        elif btype != "fallback":
            return False  # tool calls, unknown blocks and non-objects count as content
    return True


def _assistant(node: Node, msg: dict[str, Any]) -> None:
    others = 0  # blocks left when unpaired tool calls and redactedThinking are stripped
    for btype, _ in each_block(msg.get("content")):
        if btype not in ("toolCall", "redactedThinking"):
            others += 1
    meta = dict(node.meta or {})
    meta["omp"] = {
        "drop": bool(msg.get("retryRecovery")) or _empty_error_turn(msg),
        "failed": msg.get("stopReason") in ("aborted", "error"),
        "others": others,
    }
    node.meta = meta


def _message(node: Node, msg: Any, is_omp: bool) -> None:
    if not isinstance(msg, dict):
        return
    role = msg.get("role")
    if role == "assistant":
        if is_omp:
            _assistant(node, msg)
    elif role == "toolResult":
        details = msg.get("details")
        if is_omp and node._usage is None and msg.get("toolName") == "task" and isinstance(details, dict):
            if _is_usage(details.get("usage")):  # a subagent's usage, counted in omp's totals
                node._usage = usage_values(details["usage"])
    elif role == "developer":
        text = _blocks_text(msg.get("content"))
        node._text = "developer: " + normalize(text[:200])
        node.est = ceil4(text_image_chars(msg.get("content")))
    elif role == "pythonExecution":
        code = as_str(msg.get("code") if "code" in msg else msg.get("command"))
        node._text = "[python]: " + normalize(code[:200])
        node.est = ceil4(js_len(code) + js_len(as_str(msg.get("output") or "")))
    elif role == "fileMention":
        files = msg.get("files")
        paths = [as_str(f.get("path")) for f in files if isinstance(f, dict)] if isinstance(files, list) else []
        node._text = "[file mention]: " + normalize(", ".join(paths))
        node.est = ceil4(
            sum(js_len(as_str(f.get("content") or "")) for f in files if isinstance(f, dict))
            if isinstance(files, list)
            else 0
        )
    elif role == "hookMessage":
        node._text = f"[hookMessage: {normalize(js_string(msg.get('customType')))}]"
        node.est = ceil4(text_image_chars(msg.get("content")))


def _row(kind: str, value: Any) -> str:
    return f"[{kind}: {normalize(js_string(value))}]"


def fill_omp(node: Node, obj: dict[str, Any], is_omp: bool) -> bool:
    """omp's reading of an entry, after `fill_node` did Pi's: its own types, model_change's `model`, usage.
    `is_omp`: the file is known to be omp's. Returns whether it is now (an entry only omp writes tells)."""
    etype = obj.get("type")
    if not is_omp and type(etype) is str and etype in OMP_TYPES:
        is_omp = True
    if is_omp or etype == "model_change":  # omp's model_change shape can come before anything else says omp
        _fill(node, obj, etype, is_omp)
    return is_omp


def _fill(node: Node, obj: dict[str, Any], etype: Any, is_omp: bool) -> None:
    if etype == "message":
        _message(node, obj.get("message"), is_omp)
    elif etype == "model_change" and "modelId" not in obj and "model" in obj:
        model, role = obj.get("model"), obj.get("role")
        provider, model_id = split_model(model)
        shown = f"[model: {normalize(js_string(model))}"
        node._text = shown + (f" ({normalize(js_string(role))})]" if role not in (None, "default") else "]")
        node.meta = {"provider": provider, "modelId": model_id, "model": model, "role": role}
    elif etype == "thinking_level_change" and is_omp and obj.get("thinkingLevel") is None:
        node._text = "[thinking: off]"
    elif etype == "custom_message" and is_omp:
        node.meta = {"customType": obj.get("customType")}
    elif etype == "compaction" and is_omp and node.meta is not None:
        node.meta["providerReplayThroughEntryId"] = obj.get("providerReplayThroughEntryId")
        preserve = obj.get("preserveData")
        remote = preserve.get("openaiRemoteCompaction") if isinstance(preserve, dict) else None
        node.meta["remote"] = bool(
            isinstance(remote, dict)
            and isinstance(remote.get("provider"), str)
            and remote.get("provider")
            and isinstance(remote.get("replacementHistory"), list)
        )
    elif etype == "branch_summary" and is_omp and not obj.get("summary"):
        details = obj.get("details")
        kind = details.get("kind") if isinstance(details, dict) else None
        if kind is not None:  # omp's durable marker (e.g. a discarded entry), not a summary
            target = details.get("discardedEntryId") if isinstance(details, dict) else None
            node._text = (
                _row("branch marker", kind) if target is None else _row(f"branch marker {js_string(kind)}", target)
            )
    elif etype == "model_usage":
        node._text = _row("model usage", obj.get("purpose"))
        node.model = (obj.get("provider"), obj.get("model"))
        node._usage = usage_values(obj.get("usage"))
    elif etype == "title_change":
        node._text = _row("title", obj.get("title"))
        node.meta = {"title": obj.get("title")}
    elif etype == "service_tier_change":
        node._text = _row("service tier", obj.get("serviceTier"))
    elif etype == "ttsr_injection":
        rules = obj.get("injectedRules")
        node._text = _row("ttsr", ", ".join(map(as_str, rules)) if isinstance(rules, list) else rules)
    elif etype == "session_init":
        node._text = _row("session init", obj.get("agent") or obj.get("task"))
    elif etype == "mode_change":
        node._text = _row("mode", obj.get("mode"))
    elif etype == "credential_pin":
        node._text = _row("credential pin", obj.get("provider"))
    elif etype == "reset_boundary":
        node._text = "[reset boundary]"


def is_truncated(value: Any) -> bool:
    """A string omp cut when persisting it (over 500,000 characters)."""
    return isinstance(value, str) and value.endswith(TRUNCATED_MARK)
