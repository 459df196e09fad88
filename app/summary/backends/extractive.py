"""The `extractive` summarizer: Pi's structured headings filled from the entries themselves.

Offline, instant and deterministic. Goal = the first user message on the abandoned path; Done = edits,
writes and commands whose results were not errors; Blocked = failed tool results and model errors;
In Progress = the last request if the branch ended without an answer; Key Decisions / Next Steps = the
sentences of the last assistant text that say so (or its opening sentences).
"""

from __future__ import annotations

import re
from typing import Any

from ...session.text import as_str

MAX_ITEMS = 12
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CONSTRAINT = re.compile(
    r"\b(must|mustn't|don't|do not|never|always|only|prefer|without|no \w+ allowed|avoid|make sure|keep)\b", re.I
)
_DECISION = re.compile(r"\b(decid\w*|instead|because|chose|choose|went with|use |using |rather than|so that)\b", re.I)
_NEXT = re.compile(r"\b(next|then|todo|to do|should|will|remaining|still need|need to|follow[- ]up)\b", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.*\S)")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(as_str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if re.search(r"(Error|error:|FAILED|failed|Traceback|No such file|not found|denied)", ln):
            if not ln.startswith("Traceback"):
                return ln
    return lines[-1] if lines else "(no output)"


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for para in text.split("\n"):
        para = para.strip()
        if para and not para.startswith("```"):
            out.extend(s.strip() for s in _SENTENCE.split(para) if s.strip())
    return out


def _call_line(name: str, args: dict[str, Any]) -> str | None:
    path = args.get("path") if isinstance(args.get("path"), str) else None
    if name == "edit" and path:
        return f"Edited `{path}`"
    if name == "write" and path:
        return f"Wrote `{path}`"
    if name == "bash" and isinstance(args.get("command"), str):
        return f"Ran `{_one_line(args['command'], 120)}`"
    return None


def summarize(entries: list[dict[str, Any]]) -> str:
    """The headings of Pi's branch-summary prompt, filled from `entries` (oldest first)."""
    user_texts: list[str] = []
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    done: list[str] = []
    blocked: list[str] = []
    last_assistant_text = ""
    last_kind = ""
    for entry in entries:
        etype = entry.get("type")
        msg = entry.get("message") if etype == "message" else None
        if etype in ("branch_summary", "compaction"):
            last_kind = "summary"
            continue
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        if role == "user":
            text = _text_of(msg.get("content")).strip()
            if text:
                user_texts.append(text)
                last_kind = "user"
        elif role == "assistant":
            content = msg.get("content")
            text = _text_of(content).strip()
            if text:
                last_assistant_text = text
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    raw_args = block.get("arguments")
                    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
                    calls[as_str(block.get("id"))] = (as_str(block.get("name")), args)
            if msg.get("stopReason") == "error" or msg.get("errorMessage"):
                reason = msg.get("errorMessage") or "reply failed"
                blocked.append(f"Model reply failed: {_one_line(as_str(reason), 160)}")
                last_kind = "failed"
            elif msg.get("stopReason") == "aborted":
                last_kind = "failed"  # the user stopped the reply: whatever was asked is still open
            else:
                last_kind = "assistant" if text else last_kind
        elif role == "toolResult":
            name, args = calls.get(as_str(msg.get("toolCallId")), (as_str(msg.get("toolName")), {}))
            line = _call_line(name, args)
            if msg.get("isError") is True:
                what = line or f"`{name}`"
                blocked.append(f"{what} failed: {_one_line(_first_error_line(_text_of(msg.get('content'))), 160)}")
            elif line:
                # A command that failed earlier and now succeeds is no longer blocking.
                blocked = [b for b in blocked if not b.startswith(line + " failed")]
                if line not in done:
                    done.append(line)
        elif role == "bashExecution":
            command = _one_line(as_str(msg.get("command")), 120)
            code = msg.get("exitCode")
            if code not in (0, None):
                blocked.append(f"`{command}` exited with code {as_str(code)}")
            else:
                done.append(f"Ran `{command}` (user)")

    goal = _one_line(user_texts[0], 400) if user_texts else "(no user message on this branch)"
    constraints = [_one_line(s, 160) for t in user_texts for s in _sentences(t) if _CONSTRAINT.search(s)]
    # The branch ended on a request without an answer (or on a failed reply): that request is open.
    in_progress = [_one_line(user_texts[-1], 200)] if user_texts and last_kind in ("user", "failed") else []

    sentences = _sentences(last_assistant_text)
    listed = [m.group(1) for ln in last_assistant_text.splitlines() if (m := _LIST_ITEM.match(ln))]
    decisions = [s for s in sentences if _DECISION.search(s)][:4]
    if not decisions and sentences:
        decisions = sentences[:2]
    next_steps = [s for s in listed if _NEXT.search(s)] or [s for s in sentences if _NEXT.search(s)]
    if not next_steps:
        next_steps = [f"Continue from: {_one_line(user_texts[-1], 160)}"] if in_progress else []
    if not next_steps and user_texts:
        next_steps = ["Pick up where this branch stopped; its last answer is summarized above"]

    def bullets(items: list[str], empty: str, prefix: str = "- ") -> list[str]:
        items = list(dict.fromkeys(items))[:MAX_ITEMS]
        return [f"{prefix}{i}" for i in items] if items else [empty]

    lines = ["## Goal", goal, "", "## Constraints & Preferences"]
    lines += bullets(constraints, "- (none)")
    lines += ["", "## Progress", "### Done"]
    lines += bullets(done, "- (nothing completed)", "- [x] ")
    lines += ["", "### In Progress"]
    lines += bullets(in_progress, "- (none)", "- [ ] ")
    lines += ["", "### Blocked"]
    lines += bullets(blocked, "- (none)")
    lines += ["", "## Key Decisions"]
    lines += [f"- **{_one_line(d, 80)}**" + (f": {_one_line(d, 200)}" if len(d) > 80 else "") for d in decisions] or [
        "- (none recorded)"
    ]
    lines += ["", "## Next Steps"]
    lines += [f"{i}. {_one_line(s, 200)}" for i, s in enumerate(next_steps[:MAX_ITEMS], 1)] or ["1. (none)"]
    return "\n".join(lines)
