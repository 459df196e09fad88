"""Readable (non-JSON) output of the scripting commands, through Rich.

Session text only ever becomes `rich.text.Text` with control characters made visible, never markup:
a `[bold]` in a message is printed as `[bold]`, an escape sequence as `␛[31m`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

from pitree.cli.report_context import after_parts
from pitree.cli.text_lines import columns, is_plain, print_lines, print_plain
from pitree.session.layout import LEVEL, Layout
from pitree.session.text import count, make_safe
from pitree.session.tree import SessionTree
from rich.console import Console
from rich.text import Text


def safe(text: Any, style: str = "") -> Text:
    return Text(make_safe(str(text) if text is not None else "", keep_newlines=True), style=style)


def flat(text: Any) -> str:
    """`text` on one line, safe for a terminal."""
    return make_safe(str(text) if text is not None else "", keep_newlines=False)


def one_line(text: Any, style: str = "") -> Text:
    return Text(flat(text), style=style)


ROLE_STYLES = {"user": "bold cyan", "assistant": "green"}


Parts = list[tuple[str, str]]  # a row's pieces of text (safe) and their styles, the guides first


def tree_rows(tree: SessionTree, layout: Layout, room: int | None = None) -> Iterator[Parts]:
    """Each row's parts: guides (dim, the line's style), active-path dot, label, row text, `← leaf` on the leaf,
    id. `room`: the width the lines are cut to: a row's guides past it are not made (thousands of columns for
    a deep row), and guides that fill it come as the one part Rich's cut leaves."""
    leaf = tree.leaf
    stop = None if room is None else room // LEVEL + 1
    made: dict[tuple[int, int, int], str] = {}  # guides by (indent, bits, gutters link): a chain's rows share them
    fields = layout.rows.fields
    for i, row in enumerate(layout.rows):
        node = row.node
        indent, bits, link = fields(i)[:3]
        key = (indent, bits, link)
        guides = made.get(key)
        if guides is None:
            if len(made) >= 4096:
                made.clear()
            # `⊟` (foldable) means something only in the explorer, where a key folds it.
            guides = made[key] = layout.prefix(i, stop=stop).replace("⊟", "─")
        if room is not None and len(guides) >= room:  # one cell a character: the guides fill the line
            yield [(guides[: room - 1] + "…", "dim")]  # as Rich's cut leaves it, without measuring
            continue
        parts = [(guides, "dim")]
        on_path = node in layout.active
        if on_path:
            parts.append(("• ", "bold blue"))
        label = tree.labels.get(node.id)
        if label:
            parts.append((flat(f"[{label}] "), "yellow"))
        style = ROLE_STYLES.get(node.role or "", "")
        if node.type != "message":
            style = "magenta" if node.type in ("compaction", "branch_summary") else "dim"
        elif node.role == "toolResult":
            style = "dim"
        parts.append((flat(tree.row_text(node)), style + (" bold" if on_path and style else "")))
        if node is leaf:
            parts.append((" ← leaf", "bold yellow"))
        parts.append((flat(f"  {node.id}"), "dim"))
        yield parts


def tree_lines(tree: SessionTree, layout: Layout, room: int | None = None) -> Iterator[Text]:
    """`tree_rows` as one Text a row (styled: the guides' dim is the line's own style)."""
    for parts in tree_rows(tree, layout, room):
        line = Text(parts[0][0], style=parts[0][1])
        for text, style in parts[1:]:
            line.append(text, style)
        yield line


def print_tree(console: Console, tree: SessionTree, layout: Layout) -> None:
    """The tree as text, a batch of lines at a time: the lines of a big session never exist at once. Without
    colours the lines are plain strings, cut and written directly (`text_lines.print_plain`)."""
    header = tree.header or {}
    title = Text("session ", style="bold")
    title.append_text(one_line(tree.name or header.get("id") or "(no header)", "bold"))
    title.append(
        f"  {count(tree.entry_count, 'entry', 'entries')}, {len(layout.rows):,} shown ({layout.mode})", style="dim"
    )
    console.print(title)
    if is_plain(console):
        print_plain(console, ("".join(text for text, _ in parts) for parts in tree_rows(tree, layout, console.width)))
    else:
        print_lines(console, tree_lines(tree, layout, console.width))
    _print_skips(console, tree)


def _print_skips(console: Console, tree: SessionTree) -> None:
    if tree.skipped:
        console.print(Text(f"{count(len(tree.skipped), 'line')} skipped:", style="yellow"))
        for s in tree.skipped[:20]:
            console.print(one_line(f"  line {s.line}: {s.reason}", "yellow"))
        if len(tree.skipped) > 20:
            console.print(Text(f"  … and {len(tree.skipped) - 20} more (see --json)", style="yellow"))
    for p in tree.problems[:10]:
        console.print(one_line(f"note: line {p.line}: {p.message}", "dim yellow"))
    if len(tree.problems) > 10:
        console.print(Text(f"note: … and {len(tree.problems) - 10} more (see --json)", style="dim yellow"))


def print_context(console: Console, report: dict[str, Any]) -> None:
    model = report["model"]
    head = one_line(f"context at {report['leaf']}: ", "bold")
    head.append_text(one_line(f"{count(len(report['messages']), 'message')}, model "))
    head.append_text(one_line(f"{model.get('provider')}/{model.get('modelId')}" if model else "unknown"))
    head.append_text(one_line(f", thinking {report['thinkingLevel']}"))
    console.print(head)
    rows: list[tuple[str, ...]] = []
    running = 0
    system = report.get("system")
    if system is not None:  # Pi 1.x: the system messages collapse into one head, sent first
        running += system["tokens"]
        sources = ", ".join(system["sourceEntryIds"])
        tik = system.get("tiktoken")
        tik_text = "" if tik is None else str(tik)
        rows.append(("·", "system head", flat(sources), str(system["tokens"]), tik_text, str(running), ""))
    for i, m in enumerate(report["messages"], 1):
        folded = m["role"] == "system"
        running += m["tokens"] if not m.get("excludeFromContext") and not folded else 0
        role = m["role"] + (" (excluded)" if m.get("excludeFromContext") else "") + (" (in head)" if folded else "")
        rows.append(
            (
                str(i),
                flat(role),
                flat(m["entryId"]),
                str(m["tokens"]),
                str(m.get("tiktoken", "")),
                str(running),
                flat(f"replaced by {m['editedBy']}" if m.get("editedBy") else ""),
            )
        )
    header = ("#", "role", "entry", "tokens", "tiktoken", "running", "edit")
    print_lines(console, columns(header, rows, frozenset({0, 3, 4, 5})))
    for omitted in report.get("omitted", []):
        console.print(one_line(f"omitted: {omitted['entryId']} (by context edit {omitted['editedBy']})", "yellow"))
    tok = report["tokens"]
    console.print(Text(f"total: {tok['estimate']} tokens (Pi's chars/4 estimate), {tok['tiktoken']} (cl100k)"))
    size = report.get("size")
    if size is not None:
        how = (
            f"usage of {size['usageEntryId']} {size['usageTokens']} + {size['trailingTokens']} after it"
            if size["usageEntryId"] is not None
            else f"estimate: {size.get('estimateReason') or 'no valid usage'}"
        )
        console.print(one_line(f"context size (Pi 1.6): {size['tokens']} tokens ({how})"))


def print_compactions(console: Console, report: dict[str, Any]) -> None:
    comps = report["compactions"]
    if not comps:
        console.print("no compactions in this session")
        return
    for c in comps:
        head = one_line(f"compaction {c['id']} (line {c['line']})", "bold magenta")
        if c["onActivePath"]:
            head.append("  on the active path", style="blue")
        console.print(head)
        console.print(one_line(f"  tokens before: {c['tokensBefore']}"))
        summarized, kept = c["summarized"], c["kept"]
        if c.get("retainNone"):
            kept_s = "kept: nothing (retain-none: nothing kept, on purpose)"
        else:
            where = "on" if c["firstKeptOnPath"] else "NOT on"
            kept_s = (
                f"kept: {count(kept['entries'], 'message')}, ~{kept['tokens']} tokens"
                f" from {c['firstKeptEntryId']} ({where} the path)"
            )
        console.print(
            one_line(
                f"  summarized: {count(summarized['entries'], 'message')}, ~{summarized['tokens']} tokens; {kept_s}"
            )
        )
        dropped, checkpoint = c.get("droppedSystem"), c.get("checkpoint")
        if dropped and dropped["entries"]:
            console.print(one_line(f"  system messages dropped: {dropped['entries']}, ~{dropped['tokens']} tokens"))
        if checkpoint is not None:
            names = ""
            if checkpoint.get("sections") is not None:
                names = f": sections {', '.join(map(str, checkpoint['sections'])) or 'none'}; tools "
                names += ", ".join(map(str, checkpoint["tools"])) or "none"
            console.print(one_line(f"  checkpoint: ~{checkpoint['tokens']} tokens{names}"))
        cost = c.get("usage")
        if cost is not None:
            console.print(one_line(f"  cost of the compaction: {cost['tokens']} tokens, ${cost['cost']:.4f}"))
        after = c["tokensAfter"]
        console.print(
            one_line(
                f"  summary: ~{c['summaryTokens']['estimate']} tokens; after: ~{after['estimate']} tokens"
                + (f" ({after['tiktoken']} cl100k)" if after.get("tiktoken") is not None else "")
                + f" ({after_parts(c)})"
            )
        )
        for p in c["problems"]:
            console.print(one_line(f"  problem: {p}", "red"))
        console.print(Text("  summary:", style="dim"))
        for line in (c["summary"] or "(empty)").splitlines():
            console.print(Text("    ").append_text(safe(line)))


def _when(ms: float | None) -> str:
    if ms is None or ms != ms or math.isinf(ms):
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000)) + " UTC"
    except (OverflowError, OSError, ValueError):  # a timestamp no calendar holds (1e300)
        return f"? ({ms:g} ms)"


def _n(count: Any, one: str, many: str | None = None) -> str:
    """`1 leaf`, `5 leaves`, `0 notes`."""
    return f"{count} {one if count == 1 else many or one + 's'}"


def _version(session: dict[str, Any]) -> str:
    version = session.get("version")
    if session.get("migratedInMemory"):
        return f"{version} (migrated to version 3 in memory, as Pi does on open; the file is unchanged)"
    return str(version)


_ERROR_KINDS = {
    "assistant": ("error reply", "error replies"),
    "toolResult": ("failed tool result", "failed tool results"),
    "bashExecution": ("failed bash command", "failed bash commands"),
}


def _errors(report: dict[str, Any]) -> str:
    kinds = report.get("errorKinds") or {}
    shown = [_n(n, *_ERROR_KINDS.get(k, (k, k))) for k, n in kinds.items()]
    return f"{report['errors']}" + (f" ({', '.join(shown)})" if shown else "")


def print_info(console: Console, report: dict[str, Any]) -> None:
    s = report["session"]
    rows: list[tuple[str, Any]] = [
        ("name", s["name"] or "(none)"),
        ("id", s["id"]),
        ("version", _version(s)),
        ("cwd", s["cwd"]),
        ("parent session", s["parentSession"] or "(none)"),
        ("size", f"{report['bytes']} bytes" if report["bytes"] is not None else "?"),
        ("entries", f"{report['entries']} ({_n(report['skipped'], 'line')} skipped, {_n(report['problems'], 'note')})"),
        ("types", ", ".join(f"{k} {v}" for k, v in report["types"].items())),
        ("roles", ", ".join(f"{k} {v}" for k, v in report["roles"].items())),
        ("branches", f"{_n(report['branches'], 'leaf', 'leaves')}; active leaf {report['leaf']}"),
        ("compactions", report["compactions"]),
        ("labels", report["labels"]),
        ("errors", _errors(report)),
        ("time", f"{_when(report['firstTimestamp'])} → {_when(report['lastTimestamp'])}"),
    ]
    u = report["usage"]
    rows.append(
        (
            "usage",
            f"input {u['input']}, output {u['output']}, cache read {u['cacheRead']}, "
            f"cache write {u['cacheWrite']}, total {u['totalTokens']}, cost ${u['cost']:.4f}",
        )
    )
    if u.get("sources"):
        rows.append(("  from", ", ".join(f"{k} {v}" for k, v in u["sources"].items())))
    for model, m in report["models"].items():
        replies = _n(m["messages"], "usage", "usages")
        rows.append((f"  {model}", f"{replies}, {m['totalTokens']} tokens, ${m['cost']:.4f}"))
    # Plain lines, not a Table: a table pads every line to its width, and `pitree info | grep` got the spaces.
    cells = [(one_line(k), one_line(v)) for k, v in rows]
    width = max(k.cell_len for k, _ in cells)
    out = Text()
    for i, (k, v) in enumerate(cells):
        out.append("\n" if i else "")
        out.append(k.plain + " " * (width - k.cell_len), "bold")
        if v.plain:
            out.append("  ")
            out.append(v)
    console.print(out, soft_wrap=True)
