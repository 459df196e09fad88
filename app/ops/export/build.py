"""The sections of an exported path (root -> leaf), made a batch of entries at a time (`Builder.sections`), so
that a million-entry path is never held in memory whole: the entries a batch needs are read from the file by
offset (`BATCH_ENTRIES` entries or `BATCH_BYTES` of lines, whichever comes first), rendered, and dropped.

What pairs a tool call with its result (pairing.py) and the context edits in effect at the leaf are found before
the first batch, from the tree's entries and the edit entries alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from pitree.ops.export import pi1
from pitree.ops.export.doc import Part, Section, content_parts, image_part, json_pretty, markdown_parts
from pitree.ops.export.doc import describe as _describe
from pitree.ops.export.pairing import Pairing
from pitree.session.edits import path_edits
from pitree.session.entries import Node
from pitree.session.text import as_str, cut_huge, format_tool_call, js_string
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader

BATCH_ENTRIES = 512
BATCH_BYTES = 4 << 20  # a batch's lines; one bigger entry is a batch of its own (cut_huge shortens what it holds)

# Called after each batch with (entries done, entries on the path); it may raise to stop the export.
Progress = Callable[[int, int], None]


# ---- small readers of the entry JSON (any field may be missing or of the wrong type) ----------------------


def format_time(node: Node) -> str | None:
    ts = node.ts
    if ts != ts or math.isinf(ts):
        return None
    try:
        return datetime.fromtimestamp(ts / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return None


def model_of(node: Node) -> str | None:
    if node.model is None:
        return None
    provider, model = node.model
    return f"{js_string(provider)}/{js_string(model)}"


# ---- the sections ------------------------------------------------------------------------------------------


class Builder:
    """The sections of `path`, entries read from `reader` as they are needed (see the module docstring)."""

    def __init__(
        self, tree: SessionTree, reader: EntryReader, path: list[Node], thinking: bool, progress: Progress | None
    ) -> None:
        self.tree, self.reader, self.path = tree, reader, path
        self.thinking = thinking
        self.progress = progress
        # Tool results on the path are folded under the call they answer, not shown again.
        self.pairing = Pairing(tree, path)
        edit_nodes = [n for n in path if n.type == "context_edit"]
        edit_entries = dict(zip(map(id, edit_nodes), self.read(edit_nodes), strict=True))
        self.edit_entries = {n.id: edit_entries[id(n)] for n in edit_nodes}

        def read_once(nodes: list[Node]) -> list[dict[str, Any]]:  # the edits are read already
            fresh = self.read([n for n in nodes if id(n) not in edit_entries])[::-1]
            return [edit_entries[id(n)] if id(n) in edit_entries else fresh.pop() for n in nodes]

        self.edits = path_edits(path, read_once)  # as at the exported leaf
        self._batch_results: dict[str, dict[str, Any]] = {}  # the current batch's folded results, by call id

    def read(self, nodes: list[Node]) -> list[dict[str, Any]]:
        return self.reader.entries(nodes, shape=cut_huge)  # a 200 MB tool result is exported cut, with its size

    def sections(self) -> Iterator[Section]:
        path, total, start = self.path, len(self.path), 0
        while start < total:
            end, size = start, 0
            while end < total and end - start < BATCH_ENTRIES and (end == start or size < BATCH_BYTES):
                size += path[end].length
                end += 1
            batch = [n for n in path[start:end] if not self.pairing.paired(n)]
            answers = {
                id(r): r
                for i in range(start, end)
                if path[i].role == "assistant"
                for c in path[i].call_ids()
                if isinstance(c, str) and (r := self.pairing.result_of(c, i)) is not None
            }
            extra = sorted(answers.values(), key=lambda n: n.idx)
            entries = self.read(batch + extra)
            self._batch_results = {r.call_id: e for r, e in zip(extra, entries[len(batch) :], strict=True)}
            del entries[len(batch) :]
            for node, entry in zip(batch, entries, strict=True):
                section = self.section(node, entry)
                section.parts[:0] = pi1.edited_note(node, self.edits, self.edit_entries)
                section.entry_id, section.time = node.id, format_time(node)
                section.label = self.tree.labels.get(node.id)
                yield section
            self._batch_results = {}
            start = end
            if self.progress is not None:
                self.progress(end, total)

    def result_message(self, call_id: str) -> dict[str, Any] | None:
        """The message of the result folded under the call `call_id` of the batch being made (None: no result
        on the path)."""
        entry = self._batch_results.get(call_id)
        if entry is None:
            return None
        msg = entry.get("message")
        return msg if isinstance(msg, dict) else {}

    def section(self, node: Node, entry: dict[str, Any]) -> Section:
        etype = entry.get("type")
        if etype == "message":
            msg = entry.get("message")
            if not isinstance(msg, dict):
                return Section("unknown", "message", parts=[Part("note", f"message is {_describe(msg)}")])
            return self.message(node, msg)
        if etype == "compaction":
            details = entry.get("details")
            parts = [
                Part(
                    "note",
                    f"tokens before: {js_string(entry.get('tokensBefore'))} · first kept entry: "
                    f"{js_string(entry.get('firstKeptEntryId'))}"
                    + (" · from an extension" if entry.get("fromHook") else ""),
                ),
                *markdown_parts(entry.get("summary")),
            ]
            parts.extend(self.file_lists(details))
            parts.extend(pi1.compaction_parts(entry))
            return Section("compaction", "compaction summary", parts=parts)
        if etype == "branch_summary":
            parts = [Part("note", f"summary of an abandoned branch (from {js_string(entry.get('fromId'))})")]
            parts.extend(markdown_parts(entry.get("summary")))
            parts.extend(self.file_lists(entry.get("details")))
            return Section("branchSummary", "branch summary", parts=parts)
        if etype == "custom_message":
            parts = content_parts(entry.get("content"))
            if entry.get("display") is False:
                parts.insert(0, Part("note", "not displayed in Pi (display: false); sent to the model"))
            title = f"custom message: {js_string(entry.get('customType'))}"
            return Section("custom", title, parts=parts)
        if etype == "model_change":
            if "modelId" not in entry and "model" in entry:  # oh-my-pi: {model: "provider/id", role}
                role = entry.get("role")
                shown = f" ({js_string(role)})" if role not in (None, "default") else ""
                return Section("setting", f"model → {js_string(entry.get('model'))}{shown}", compact=True)
            title = f"model → {js_string(entry.get('provider'))}/{js_string(entry.get('modelId'))}"
            return Section("setting", title, compact=True)
        if etype == "thinking_level_change":
            return Section("setting", f"thinking level → {js_string(entry.get('thinkingLevel'))}", compact=True)
        if etype == "label":
            label, target = entry.get("label"), js_string(entry.get("targetId"))
            title = f"label on {target}: {js_string(label)}" if label else f"label cleared on {target}"
            return Section("setting", title, compact=True)
        if etype == "session_info":
            name = entry.get("name")
            return Section("setting", f"session name: {js_string(name) if name else '(cleared)'}", compact=True)
        if etype == "context_edit":
            return pi1.context_edit_section(entry, self.edits)
        if etype == "usage":
            return pi1.usage_section(entry)
        if etype == "custom":
            parts = [Part("fold", "data", parts=[Part("code", json_pretty(entry.get("data")), "json")])]
            title = f"extension state: {js_string(entry.get('customType'))}"
            return Section("setting", title, parts=parts, compact=True)
        return Section(
            "unknown",
            f"unknown entry type: {js_string(etype)}",
            parts=[Part("fold", "entry JSON", parts=[Part("code", json_pretty(entry), "json")])],
        )

    def file_lists(self, details: Any) -> list[Part]:
        if not isinstance(details, dict):
            return []
        lines = []
        for key, name in (("readFiles", "read"), ("modifiedFiles", "modified")):
            files = details.get(key)
            if isinstance(files, list) and files:
                lines.append(f"{name}:")
                lines.extend("  " + as_str(f) for f in files)
        return [Part("fold", "files", parts=[Part("code", "\n".join(lines))])] if lines else []

    def message(self, node: Node, msg: dict[str, Any]) -> Section:
        role = msg.get("role")
        if role == "user":
            return Section("user", "user", parts=content_parts(msg.get("content")))
        if role == "assistant":
            return Section("assistant", "assistant", model=model_of(node), parts=self.assistant(msg))
        if role == "toolResult":
            name = js_string(msg.get("toolName") or "tool")
            fold = Part("fold", f"[{name}] result" + self.error_mark(msg), parts=self.result_parts(msg))
            return Section("toolResult", f"tool result: {name}", parts=[fold])
        if role == "bashExecution":
            return Section("bash", "bash (run by the user)", parts=self.bash(msg))
        if role == "custom":
            parts = content_parts(msg.get("content"))
            if msg.get("display") is False:
                parts.insert(0, Part("note", "not displayed in Pi (display: false)"))
            return Section("custom", f"custom: {js_string(msg.get('customType'))}", parts=parts)
        if role == "system":
            return pi1.system_section(msg)
        if role in ("branchSummary", "compactionSummary"):
            return Section("branchSummary", js_string(role), parts=content_parts(as_str(msg.get("summary"))))
        parts = content_parts(msg.get("content")) if "content" in msg else []
        parts.append(Part("fold", "message JSON", parts=[Part("code", json_pretty(msg), "json")]))
        return Section("unknown", f"role: {js_string(role)}", parts=parts)

    @staticmethod
    def error_mark(msg: dict[str, Any]) -> str:
        return " (error)" if msg.get("isError") is True else ""

    def result_parts(self, msg: dict[str, Any]) -> list[Part]:
        parts = content_parts(msg.get("content"), as_code=True)
        return parts or [Part("note", "(no output)")]

    def assistant(self, msg: dict[str, Any]) -> list[Part]:
        parts: list[Part] = []
        content = msg.get("content")
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    parts.append(Part("code", json_pretty(block), "json"))
                    continue
                btype = block.get("type")
                if btype == "text":
                    text = as_str(block.get("text"))
                    if text:
                        parts.append(Part("markdown", text))
                elif btype == "thinking":
                    text = as_str(block.get("thinking"))
                    if self.thinking and text:
                        parts.append(Part("fold", "thinking", parts=[Part("markdown", text)]))
                elif btype == "toolCall":
                    parts.append(self.tool_call(block))
                elif btype == "image":
                    parts.append(image_part(block))
                else:
                    parts.append(Part("note", f"[{js_string(btype)} block]"))
        else:
            parts.extend(content_parts(content))
        stop = msg.get("stopReason")
        if stop in ("error", "aborted", "length") or msg.get("errorMessage"):
            why = f"stopped: {js_string(stop)}"
            if msg.get("errorMessage"):
                why += f" — {as_str(msg.get('errorMessage'))}"
            parts.append(Part("note", why))
        return parts

    def tool_call(self, block: dict[str, Any]) -> Part:
        call_id = block.get("id")
        found = self.result_message(call_id) if isinstance(call_id, str) else None
        summary = format_tool_call(block.get("name"), block.get("arguments"))
        body = [Part("code", json_pretty(block.get("arguments")), "json")]
        if found is None:
            body.append(Part("note", "no result on this path"))
        else:
            summary += self.error_mark(found)
            body.append(Part("note", "result:"))
            body.extend(self.result_parts(found))
        return Part("fold", summary, parts=body)

    def bash(self, msg: dict[str, Any]) -> list[Part]:
        parts = [Part("code", "$ " + as_str(msg.get("command")), "sh")]
        notes = [f"exit code {js_string(msg.get('exitCode'))}"]
        if msg.get("cancelled"):
            notes.append("cancelled")
        if msg.get("truncated"):
            notes.append("output truncated")
        if msg.get("excludeFromContext"):
            notes.append("not sent to the model (!!)")
        output = as_str(msg.get("output"))
        parts.append(Part("fold", "output · " + ", ".join(notes), parts=[Part("code", output or "(no output)")]))
        return parts
