"""The `extractive` summarizer: Pi's branch-summary headings filled from the entries themselves, offline.

What a person would write from the branch, as far as rules can tell:
- Goal: the user's real requests (pasted diffs, logs, paths and "continue" left out), the first one as the goal
  and the weightiest later ones after it;
- Constraints: the user's own sentences that say must / never / always / don't / make sure / prefer;
- Done: files changed, and the commands that count (tests, checks, builds, installs, commits with their
  message), not the greps that explored; then the last answer's opening;
- In Progress: the last request when the branch ended without an answer (or the reply failed or was stopped);
- Blocked: failures nothing later fixed (a grep finding nothing, or a command the user stopped, is no failure);
- Key Decisions: the assistant's sentences that choose, explain a cause, or prefer one way to another;
- Next Steps: what the last answer lists or proposes as next, else the open request or the failure to fix.
"""

from __future__ import annotations

import re
from typing import Any

from pitree.session.content import text_of, tool_calls
from pitree.session.text import as_str
from pitree.summary.backends.prose import is_nudge, list_items, next_items, one_line, request_text, sentences, short

MAX_ITEMS = 8
_MODEL = frozenset({"model"})
_CONSTRAINT = re.compile(
    r"\b(must|mustn't|never|always|don't|do not|make sure|ensure|prefer|no need|should not|shouldn't|"
    r"without|avoid|keep|only use|not allowed)\b",
    re.I,
)
_DECISION = re.compile(
    r"\b(instead of|rather than|decided|decide to|going with|went with|chose|switch(ed)? to|the fix (is|was)|"
    r"fixed by|root cause|the (problem|issue|bug|cause) (is|was)|because|so that|caused by|we('ll| will) use|"
    r"I('ll| will) use|better to|the reason)\b",
    re.I,
)
_CHATTER = re.compile(
    r"^(let me|now let me|now i|i'll (check|look|read|run|start|see)|let's (check|look|see)|"
    r"oh wait|hmm|ok[,.]? |okay[,.]? |great|perfect|done[.!]?$|i see)",
    re.I,
)
_NEXT = re.compile(
    r"\b(next step|next,|next:|remaining|still need|still to do|todo|to do:|follow[- ]up|you (can|could|may want to)|"
    r"want me to|should i|shall i|would you like|then we|after that)\b",
    re.I,
)
_WORTHY_FIRST = frozenset(
    "pytest jest vitest mocha tox nox ruff mypy pyright tsc tsgo eslint biome prettier make cmake cargo go npm npx "
    "pnpm yarn bun deno pip pip3 uv poetry docker gradle mvn dotnet swift alembic".split()
)
_WORTHY_GIT = frozenset("commit push tag merge rebase revert cherry-pick".split())
_NOT_THINKING = re.compile(r"\b(don't|do not) (think|tink|know|understand|see|get|remember)\b", re.I)
_EXPLORE = re.compile(
    r"^(grep|rg|ag|find|ls|cat|head|tail|less|wc|sed -n|awk|echo|pwd|which|type|file|tree|stat|"
    r"git (log|status|diff|show|branch|blame)|test |\[)\b"
)
_COMMIT_MSG = re.compile(r"""git commit\b.*?-[a-zA-Z]*m\s+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
_FILLER = re.compile(
    r"^((ok(ay)?|alright|so|actually|now|then|also|please|pls|and|but|hm+|well|wait|great|cool)\b[,.!]?\s*)+", re.I
)
_IMPERATIVE = re.compile(
    r"^(fix|add|make|create|write|implement|port|update|remove|delete|rename|move|refactor|change|use|read|document|"
    r"test|adjust|copy|build|set|check|find|explain|investigate|look|review|improve|support|handle|run|show|revert|"
    r"undo|let's|we need|we should|i want|i need|can you|could you|would you|pls|please)\b",
    re.I,
)
_PROBLEM = re.compile(
    r"\b(fails?|failing|broken|bug|errors?|crash\w*|doesn't work|does not work|not work\w*|wrong|incorrect\w*|"
    r"correctly|explod\w*|issue)\b",
    re.I,
)


def _command_keys(command: str) -> frozenset[str]:
    """The steps of a command (`a && b; c`) by their first two words, `cd` left out: a later run sharing a step
    with a failed one counts as its retry."""
    keys = set()
    for step in re.split(r"&&|\|\||;", command):
        words = step.split()
        if words and words[0] != "cd":
            keys.add("bash:" + " ".join(words[:2]))
    return frozenset(keys)


def _bare(command: str) -> str:
    return re.sub(r"^\s*cd\s+\S+\s*(&&|;)\s*", "", command.strip())


def _strip_pipes(command: str) -> str:
    """`npm run check 2>&1 | head -50` -> `npm run check`: the same run, however its output was cut."""
    return re.split(r"\s*(?:2>&1|\|(?!\|))", command, maxsplit=1)[0].strip() or command


def _worthy(command: str) -> bool:
    """A command that builds, tests, checks, installs or commits (by its first word in any `&&` step)."""
    for step in re.split(r"&&|\|\||;", command):
        words = step.split()
        if not words:
            continue
        first = words[0].rsplit("/", 1)[-1]
        if first in _WORTHY_FIRST or first.endswith("test"):
            return True
        if first == "git" and len(words) > 1 and words[1] in _WORTHY_GIT:
            return True
    return False


def _no_failure(command: str, code: Any, text: str) -> bool:
    """Not a failure worth reporting: a search that found nothing, or a command the user stopped."""
    if "aborted" in text.lower()[:200] or "cancelled" in text.lower()[:200]:
        return True
    return code in (1, "1") and bool(_EXPLORE.match(_bare(command)))


def _error_line(text: str) -> str:
    """The line of a failed tool's output that says what failed (not its exit-code footer)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not re.match(r"(Command )?exited with code \d+$", ln)] or lines
    for ln in lines:
        if re.search(r"(Error|error:|FAIL|failed|No such file|not found|denied|Cannot|cannot|✗|×)", ln):
            if not ln.startswith("Traceback"):
                return ln
    return lines[-1] if lines else "(no output)"


def _exit_code(text: str) -> int | None:
    m = re.search(r"(?:exited with code|exit code:?)\s*(\d+)", text)
    return int(m.group(1)) if m else None


def _weight(request: str) -> int:
    """How much a request looks like a task: real words, an imperative sentence, a problem report."""
    words = len(re.findall(r"(?<![/\w.-])[A-Za-z][a-z']+(?![/\w.-])", request))
    asks = any(_IMPERATIVE.match(_FILLER.sub("", s)) for s in sentences(request) or [request])
    return min(words, 25) + (15 if asks else 0) + (10 if _PROBLEM.search(request) else 0)


def _is_task(request: str) -> bool:
    return any(_IMPERATIVE.match(_FILLER.sub("", s)) for s in sentences(request) or [request]) or bool(
        _PROBLEM.search(request)
    )


def _decision_line(sentence: str) -> str:
    s = one_line(sentence, 400)
    for sep in (" because ", " since ", " so that ", " — ", ": "):
        at = s.find(sep)
        if 12 <= at <= 140:
            head, why = s[:at].rstrip(" ,."), s[at + len(sep) :].strip()
            if len(why.split()) >= 3:
                return f"- **{short(head, 120)}**: {short(why, 200)}"
    return f"- **{short(s, 160)}**"


class _Walk:
    """One pass over the entries, collecting what each heading needs."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.constraints: list[str] = []
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self.changed: list[str] = []
        self.done: list[str] = []
        self.failures: list[tuple[frozenset[str], str]] = []  # (keys a later success clears it by, line)
        self.decisions: list[str] = []
        self.last_text = ""
        self.last_kind = ""
        self.last_request = ""

    def user(self, msg: dict[str, Any]) -> None:
        text = text_of(msg.get("content")).strip()
        if not text:
            return
        request = request_text(text)
        if request:
            self.requests.append(request)
            self.last_request = request
            for s in sentences(text):
                if _CONSTRAINT.search(s) and not _NOT_THINKING.search(s) and not s.endswith("?"):
                    if 4 <= len(s.split()) <= 35:
                        self.constraints.append(s)
        if request or not is_nudge(text):
            self.last_kind = "user"
        elif text:
            self.last_kind = "user"  # "continue" is a request to go on with the last one

    def assistant(self, msg: dict[str, Any]) -> None:
        content = msg.get("content")
        text = text_of(content).strip()
        for block in tool_calls(content):
            args = block.get("arguments")
            self.calls[as_str(block.get("id"))] = (as_str(block.get("name")), args if isinstance(args, dict) else {})
        if text:
            self.last_text = text
            for s in sentences(text):
                if _DECISION.search(s) and not _CHATTER.match(s) and 5 <= len(s.split()) <= 60:
                    self.decisions.append(s)
        stop = msg.get("stopReason")
        if stop == "aborted":
            self.last_kind = "stopped"
        elif stop == "error" or msg.get("errorMessage"):
            reason = as_str(msg.get("errorMessage") or "the reply failed")
            self.failures.append((_MODEL, f"The model's reply failed: {short(reason, 160)}"))
            self.last_kind = "failed"
        elif text:
            self.last_kind = "assistant"
            self._clear(_MODEL)

    def tool_result(self, msg: dict[str, Any]) -> None:
        name, args = self.calls.get(as_str(msg.get("toolCallId")), (as_str(msg.get("toolName")), {}))
        text = text_of(msg.get("content"))
        path = args.get("path") if isinstance(args.get("path"), str) else None
        command = as_str(args.get("command")) if name == "bash" else ""
        key = frozenset({f"{name}:{path}"}) if path else _command_keys(command)
        if msg.get("isError") is True:
            if not args:
                return  # its call is before this branch: nothing to say what failed
            if name == "read" or (name == "bash" and _no_failure(command, _exit_code(text), text)):
                return  # a read that failed (a directory, a missing file) only explored
            what = f"`{short(_bare(command), 100)}`" if command else (f"{name} `{path}`" if path else f"`{name}`")
            self.failures.append((key, f"{what} failed: {short(_error_line(text), 160)}"))
            return
        self._clear(key)
        if name in ("edit", "write") and path and path not in self.changed:
            self.changed.append(path)
        elif command:
            self._command(command)

    def bash_execution(self, msg: dict[str, Any]) -> None:
        command = as_str(msg.get("command"))
        code = msg.get("exitCode")
        key = _command_keys(command)
        if msg.get("cancelled") or code in (0, None):
            if not msg.get("cancelled"):
                self._clear(key)
                self._command(command, " (by the user)")
            return
        if not _no_failure(command, code, as_str(msg.get("output"))):
            self.failures.append((key, f"`{short(_bare(command), 100)}` exited with code {as_str(code)}"))

    def _clear(self, keys: frozenset[str]) -> None:
        self.failures = [f for f in self.failures if not f[0] & keys]

    def _command(self, command: str, who: str = "") -> None:
        bare = _bare(command)
        m = _COMMIT_MSG.search(bare)
        if m:
            line = f"Committed: {short(m.group(1) or m.group(2) or '', 120)}"
        elif _worthy(bare):
            line = f"Ran `{short(_strip_pipes(bare), 100)}`{who}"
        else:
            return
        if line not in self.done:
            self.done.append(line)


def summarize(entries: list[dict[str, Any]]) -> str:
    """The headings of Pi's branch-summary prompt, filled from `entries` (oldest first)."""
    walk = _Walk()
    for entry in entries:
        if entry.get("type") in ("branch_summary", "compaction"):
            continue
        msg = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        if role == "user":
            walk.user(msg)
        elif role == "assistant":
            walk.assistant(msg)
        elif role == "toolResult":
            walk.tool_result(msg)
        elif role == "bashExecution":
            walk.bash_execution(msg)

    requests = list(dict.fromkeys(walk.requests))
    lines = ["## Goal"]
    if requests:
        # The goal is the first real request: an opener ("hope this works") weighs too little to be one.
        goal = next((r for r in requests if _is_task(r)), max(requests, key=_weight))
        lines.append(short(goal, 300))
        rest = [r for r in requests if r is not goal]
        heavy = sorted(rest, key=_weight, reverse=True)[:6]
        later = [r for r in rest if r in heavy and _weight(r) >= 8]
        if later:
            lines += ["", "Also asked:"] + [f"- {short(r, 160)}" for r in later]
    else:
        lines.append("(no request from the user on this branch)")
    lines += ["", "## Constraints & Preferences"] + _bullets(walk.constraints, "- (none)", limit=6)

    # Commits say most about what was done; of the other commands the latest count (the last build, test run).
    commits = [d for d in walk.done if d.startswith("Committed:")][-4:]
    others = [d for d in walk.done if not d.startswith("Committed:")]
    room = MAX_ITEMS - 2 - len(commits)
    keep = sorted(range(len(others)), key=lambda i: (_rank(others[i]), -i))[: max(room, 0)]
    done = commits + [others[i] for i in sorted(keep)]
    if walk.changed:
        names = ", ".join(f"`{_short_path(p)}`" for p in walk.changed[:6])
        more = f" and {len(walk.changed) - 6} more" if len(walk.changed) > 6 else ""
        done.insert(0, f"Changed {len(walk.changed)} file{'s' if len(walk.changed) != 1 else ''}: {names}{more}")
    open_request = walk.last_kind in ("user", "failed", "stopped")
    answer = sentences(walk.last_text)
    if answer and not open_request:
        done.append(f"Last answer: {short(' '.join(answer[:2]), 240)}")
    lines += ["", "## Progress", "### Done"] + _bullets(done, "- (nothing completed)", "- [x] ")
    in_progress = [walk.last_request] if open_request and walk.last_request else []
    lines += ["", "### In Progress"] + _bullets([short(r, 200) for r in in_progress], "- (none)", "- [ ] ")
    blocked = [line for _key, line in walk.failures][-5:]
    lines += ["", "### Blocked"] + _bullets(blocked, "- (none)")

    decisions = list(dict.fromkeys(walk.decisions))[-5:]
    lines += ["", "## Key Decisions"] + ([_decision_line(d) for d in decisions] or ["- (none recorded)"])

    proposed = (
        next_items(walk.last_text)
        or [s for s in list_items(walk.last_text) if _NEXT.search(s)]
        or [s for s in answer if _NEXT.search(s) and not _CHATTER.match(s)]
    )
    if not proposed and in_progress:
        proposed = [f"Continue: {in_progress[0]}"]
    if not proposed and blocked:
        proposed = [f"Resolve: {blocked[-1]}"]
    if not proposed and walk.changed:
        proposed = ["Review and test the changes listed above"]
    steps = [f"{i}. {short(s, 200)}" for i, s in enumerate(list(dict.fromkeys(proposed))[:MAX_ITEMS], 1)]
    lines += ["", "## Next Steps"] + (steps or ["1. (none stated on this branch)"])
    return "\n".join(lines)


_CHECKS = re.compile(r"\b(test|tests|pytest|jest|vitest|check|lint|ruff|mypy|pyright|tsc|tsgo|eslint|biome)\b")


def _rank(done_line: str) -> int:
    """Which command lines to keep when there are many: checks and tests first, then builds, then the rest."""
    if _CHECKS.search(done_line):
        return 0
    return 1 if re.search(r"\b(build|install|make|compile|publish|push|tag)\b", done_line) else 2


def _short_path(path: str) -> str:
    """A long absolute path by its last three parts (the full lists follow the summary)."""
    parts = path.split("/")
    return path if len(path) <= 48 or len(parts) <= 4 else "…/" + "/".join(parts[-3:])


def _bullets(items: list[str], empty: str, prefix: str = "- ", limit: int = MAX_ITEMS) -> list[str]:
    items = list(dict.fromkeys(one_line(i, 240) for i in items))[:limit]
    return [f"{prefix}{i}" for i in items] if items else [empty]


def failed_reads(entries: list[dict[str, Any]]) -> set[str]:
    """Paths no `read` of which succeeded (a directory, a missing file, a read stopped before its result):
    not files the branch read."""
    calls: dict[str, str] = {}
    ok: set[str] = set()
    for entry in entries:
        msg = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "assistant":
            for block in tool_calls(msg.get("content")):
                args = block.get("arguments")
                if block.get("name") == "read" and isinstance(args, dict) and isinstance(args.get("path"), str):
                    calls[as_str(block.get("id"))] = args["path"]
        elif msg.get("role") == "toolResult":
            path = calls.get(as_str(msg.get("toolCallId")))
            if path is not None and msg.get("isError") is not True:
                ok.add(path)
    return set(calls.values()) - ok
