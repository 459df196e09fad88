"""Branch-summary preparation, Pi 1.6's rules: which entries are left behind, the token budget, file operations,
and the prompt a model is sent (Pi's `branch-summarization.js` and `compaction/utils.js`).

Pi 1.6 applies `context_edit`s among the collected entries, counts system messages in the budget without
serializing them, and leaves thinking out. pitree follows 1.6 for every file, 0.x ones too (Pi 1.6 opens
those); `serialize_conversation(..., thinking=True)` keeps 0.73's form for its parity tests.

Pure: entries come in as dicts (already re-read and migrated by the store).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitree.session.content import blocks, text_of, tool_calls
from pitree.session.entries import Node, estimate_message_tokens, js_len
from pitree.session.estimate import text_image_chars
from pitree.session.text import as_str, json_compact
from pitree.session.tree import SessionTree

BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
)

SUMMARIZATION_SYSTEM_PROMPT = (
    "You are a context summarization assistant. Your task is to read a conversation between a user and an "
    "AI assistant, then produce a structured summary following the exact format specified.\n\n"
    "Do NOT continue the conversation. Do NOT respond to any questions in the conversation. "
    "ONLY output the structured summary."
)

BRANCH_SUMMARY_PROMPT = """Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages."""

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"
TOOL_RESULT_MAX_CHARS = 2000
DEFAULT_CONTEXT_WINDOW = 128000
DEFAULT_RESERVE_TOKENS = 16384


@dataclass
class FileOps:
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def lists(self) -> tuple[list[str], list[str]]:
        """Pi's computeFileLists: (read only, modified), each sorted."""
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)


@dataclass
class Prepared:
    messages: list[dict[str, Any]]  # agent messages, oldest first, within the budget
    file_ops: FileOps
    total_tokens: int
    entry_count: int  # entries collected (before the budget)


def collect_for_summary(tree: SessionTree, old_leaf: Node | None, target: Node) -> tuple[list[Node], Node | None]:
    """Pi's collectEntriesForBranchSummary: old leaf up to (not incl.) the common ancestor, oldest first."""
    if old_leaf is None:
        return [], None
    ancestor = tree.common_ancestor(old_leaf, target)
    return tree.branch(old_leaf, after=ancestor), ancestor


def _project(message: dict[str, Any], edit: dict[str, Any]) -> dict[str, Any] | None:
    """Pi's projectContextEntry for one message under a context_edit: null omits, else the content is replaced
    (a string becomes one text block for assistant and toolResult targets)."""
    replacement = edit.get("replacement")
    if not isinstance(replacement, dict):
        return None
    if message.get("role") not in ("user", "assistant", "toolResult", "custom"):
        return message
    content = replacement.get("content")
    if message.get("role") in ("assistant", "toolResult") and isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return {**message, "content": content}


def message_of_entry(entry: dict[str, Any], edit: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Pi's getMessageFromEntry (branch summarization): tool results and settings give nothing; `edit` is the
    latest context_edit aimed at this entry."""
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        if not isinstance(msg, dict) or msg.get("role") == "toolResult":
            return None
        if edit is not None:
            if msg.get("role") == "system" and msg.get("content") is None:
                msg = {**msg, "content": ""}
            elif msg.get("role") in ("user", "assistant") and msg.get("content") is None:
                msg = {**msg, "content": []}
            return _project(msg, edit)
        return msg
    if etype == "custom_message":
        custom: dict[str, Any] = {
            "role": "custom",
            "customType": entry.get("customType"),
            "content": entry.get("content") if edit is None or entry.get("content") is not None else [],
            "display": entry.get("display"),
        }
        return custom if edit is None else _project(custom, edit)
    if etype == "branch_summary":
        return {"role": "branchSummary", "summary": entry.get("summary"), "fromId": entry.get("fromId")}
    if etype == "compaction":
        return {"role": "compactionSummary", "summary": entry.get("summary"), "tokensBefore": entry.get("tokensBefore")}
    return None


def extract_file_ops(message: dict[str, Any], ops: FileOps) -> None:
    """Pi's extractFileOpsFromMessage: read/write/edit tool calls with a string path."""
    if message.get("role") != "assistant":
        return
    for block in tool_calls(message.get("content")):
        args = block.get("arguments")
        if not isinstance(args, dict):
            continue
        path = args.get("path")
        if not isinstance(path, str) or not path:
            continue
        name = block.get("name")
        if name == "read":
            ops.read.add(path)
        elif name == "write":
            ops.written.add(path)
        elif name == "edit":
            ops.edited.add(path)


def estimate_tokens(message: dict[str, Any], pi073: bool = False) -> int:
    """Pi 1.6's estimateTokens: a system message counts its content, its sections and its added tools' JSON;
    a user message counts images too (4,800 characters each; `pi073`: not, as 0.73 did)."""
    role = message.get("role")
    if pi073:
        return estimate_message_tokens(role, message)
    if role == "system":
        chars = text_image_chars(message.get("content"))
        sections = message.get("sections")
        if isinstance(sections, dict):
            chars += sum(js_len(v) for v in sections.values() if isinstance(v, str) and v)
        if message.get("toolsAdded"):
            chars += js_len(json_compact(message.get("toolsAdded")))
        return -(-chars // 4)
    if role == "user":
        return -(-text_image_chars(message.get("content")) // 4)
    return estimate_message_tokens(role, message)


def prepare_branch_entries(entries: list[dict[str, Any]], token_budget: int = 0, pi073: bool = False) -> Prepared:
    """Pi's prepareBranchEntries: newest to oldest within the budget, the latest context_edit per target
    honoured; file ops from summaries' details and from the messages walked."""
    prepared = _prepare(entries, token_budget, pi073, 0, len(entries))
    assert prepared is not None
    return prepared


TAIL_FIRST = 4096  # the newest entries read first for a budgeted summary; four times more each time it is not enough
_PASS_ONE = ("branch_summary", "context_edit")  # the types Pi's first passes read from every entry


def prepare_branch_tail(
    nodes: list[Node],
    read: Callable[[list[Node]], list[dict[str, Any]]],
    token_budget: int,
    pi073: bool = False,
) -> tuple[list[dict[str, Any]], Prepared]:
    """`prepare_branch_entries(read(nodes), token_budget)` without reading every entry of a long branch: Pi's
    first passes only take branch summaries and context edits, and its walk back stops at the budget, so the
    entries read are those of these types, then the newest ones, in tails that grow until the walk stops inside
    one. Returns the entries read (file order) with what Pi prepares."""
    take = TAIL_FIRST
    while True:
        start = max(0, len(nodes) - take) if token_budget > 0 else 0
        older = [n for n in nodes[:start] if n.type in _PASS_ONE]
        entries = read(older + nodes[start:])
        prepared = _prepare(entries, token_budget, pi073, len(older), len(nodes))
        if prepared is not None:
            return entries, prepared
        take *= 4


def _prepare(entries: list[dict[str, Any]], token_budget: int, pi073: bool, stop: int, count: int) -> Prepared | None:
    """Pi's passes over `entries`, the walk back going no further than `stop`: None when it got there within the
    budget and `stop` is not the first entry (older entries, not read, might still fit)."""
    ops = FileOps()
    for entry in entries:
        details = entry.get("details")
        if entry.get("type") == "branch_summary" and not entry.get("fromHook") and isinstance(details, dict):
            read, modified = details.get("readFiles"), details.get("modifiedFiles")
            if isinstance(read, list):
                ops.read.update(f for f in read if isinstance(f, str))
            if isinstance(modified, list):
                ops.edited.update(f for f in modified if isinstance(f, str))
    edits: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.get("type") == "context_edit" and isinstance(entry.get("targetId"), str):
            edits[entry["targetId"]] = entry
    messages: list[dict[str, Any]] = []
    total = 0
    for i in range(len(entries) - 1, stop - 1, -1):
        entry = entries[i]
        eid = entry.get("id")
        message = message_of_entry(entry, edits.get(eid) if isinstance(eid, str) else None)
        if message is None:
            continue
        extract_file_ops(message, ops)
        tokens = estimate_tokens(message, pi073)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.get("type") in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.insert(0, message)
                total += tokens
            break
        messages.insert(0, message)
        total += tokens
    else:
        if stop > 0:
            return None
    return Prepared(messages, ops, total, count)


def _bash_to_text(msg: dict[str, Any]) -> str:
    text = f"Ran `{as_str(msg.get('command'))}`\n"
    output = msg.get("output")
    text += f"```\n{as_str(output)}\n```" if output else "(no output)"
    code = msg.get("exitCode")
    if msg.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif code is not None and code != 0:
        text += f"\n\nCommand exited with code {as_str(code)}"
    if msg.get("truncated") and msg.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {as_str(msg.get('fullOutputPath'))}]"
    return text


def convert_to_llm(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pi's convertToLlm: bash executions, custom messages and summaries become user messages."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role")
        if role == "bashExecution":
            if m.get("excludeFromContext"):
                continue
            out.append({"role": "user", "content": [{"type": "text", "text": _bash_to_text(m)}]})
        elif role == "custom":
            content = m.get("content")
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": content}] if isinstance(content, str) else content,
                }
            )
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + as_str(m.get("summary")) + BRANCH_SUMMARY_SUFFIX
            out.append({"role": "user", "content": [{"type": "text", "text": text}]})
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + as_str(m.get("summary")) + COMPACTION_SUMMARY_SUFFIX
            out.append({"role": "user", "content": [{"type": "text", "text": text}]})
        elif role in ("system", "user", "assistant", "toolResult"):
            out.append(m)
    return out


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[... {len(text) - limit} more characters truncated]"


def serialize_conversation(messages: list[dict[str, Any]], thinking: bool = False) -> str:
    """Pi 1.6's serializeConversation: `[User]: …`, `[Assistant]: …`, tool calls, tool results cut at 2000;
    system messages and thinking give no line (`thinking=True`: Pi 0.73's `[Assistant thinking]` too)."""
    parts: list[str] = []
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            content = text_of(msg.get("content"), "")
            if content:
                parts.append(f"[User]: {content}")
        elif role == "assistant":
            texts: list[str] = []
            thoughts: list[str] = []
            calls: list[str] = []
            for btype, block in blocks(msg.get("content")):
                if btype == "text":
                    texts.append(as_str(block.get("text")))
                elif btype == "thinking" and thinking:
                    thoughts.append(as_str(block.get("thinking")))
                elif btype == "toolCall":
                    args = block.get("arguments")
                    items = args.items() if isinstance(args, dict) else []
                    args_s = ", ".join(f"{k}={json_compact(v)}" for k, v in items)
                    calls.append(f"{as_str(block.get('name'))}({args_s})")
            if thoughts:
                parts.append("[Assistant thinking]: " + "\n".join(thoughts))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == "toolResult":
            content = text_of(msg.get("content"), "")
            if content:
                parts.append(f"[Tool result]: {_truncate(content, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)


def build_prompt_text(prepared: Prepared, instructions: str | None = None, replace: bool = False) -> str:
    """The user message Pi sends: the conversation in <conversation> tags, then the instructions."""
    if replace and instructions:
        text = instructions
    elif instructions:
        text = f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {instructions}"
    else:
        text = BRANCH_SUMMARY_PROMPT
    conversation = serialize_conversation(convert_to_llm(prepared.messages))
    return f"<conversation>\n{conversation}\n</conversation>\n\n{text}"


def format_file_operations(read: list[str], modified: list[str]) -> str:
    sections = []
    if read:
        sections.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        sections.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


def finish_summary(model_text: str, ops: FileOps) -> tuple[str, list[str], list[str]]:
    """Pi's wrapping of the model's answer: preamble before, file lists after."""
    read, modified = ops.lists()
    return BRANCH_SUMMARY_PREAMBLE + model_text + format_file_operations(read, modified), read, modified


def token_budget(context_window: int = DEFAULT_CONTEXT_WINDOW, reserve: int = DEFAULT_RESERVE_TOKENS) -> int:
    return (context_window or DEFAULT_CONTEXT_WINDOW) - reserve
