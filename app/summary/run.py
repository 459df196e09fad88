"""Producing a branch summary for a jump from the prepared entries (`SummaryJob`, made by `ops.jump.prepare_job`
under Pi's budget): either fill the headings offline (extractive) or stream a model's answer, and wrap it as
Pi does."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pitree.session.text import count
from pitree.summary.backends import extractive
from pitree.summary.prepare import (
    SUMMARIZATION_SYSTEM_PROMPT,
    FileOps,
    Prepared,
    build_prompt_text,
    finish_summary,
)

NO_CONTENT = "No content to summarize"
DEFAULT_RESERVE = 16384
RATE_LIMIT_RETRIES = 3
MAX_RETRY_WAIT = 60.0


@dataclass
class SummaryJob:
    entries: list[dict[str, Any]]
    prepared: Prepared

    @property
    def empty(self) -> bool:
        return not self.prepared.messages


def left_behind(entries: int, prepared: Prepared | None) -> str:
    """What the jump leaves behind, sized as Pi's prepareBranchEntries counts it (tool results skipped, budget kept)."""
    if not entries:
        return "nothing (no summary needed)"
    head = count(entries, "entry", "entries")
    if prepared is None:
        return f"{head}; counting…"
    n = len(prepared.messages)
    return (
        f"{head}; a summary reads {count(n, 'message')}, ~{prepared.total_tokens:,} tokens "
        "(Pi's branch-summary count: tool results skipped)"
    )


def no_content() -> tuple[str, list[str], list[str]]:
    """Pi 1.6 when no message survives preparation: this literal, no preamble, empty file lists, still written."""
    return NO_CONTENT, [], []


def extractive_summary(job: SummaryJob) -> tuple[str, list[str], list[str]]:
    """(summary text with Pi's preamble and file lists, read files, modified files).

    Reads that never succeeded (a directory, a missing file, no result) are left out of the read files here: the offline
    summary is pitree's own, and a person would not list them. A model summary keeps Pi's lists exactly."""
    if job.empty:
        return no_content()
    # The budgeted messages are what a model would see; the extractive pass reads the same window.
    kept = {id(m) for m in job.prepared.messages}
    window = [e for e in job.entries if id(e.get("message")) in kept or e.get("type") != "message"]
    tool_results = [
        e for e in job.entries if isinstance(e.get("message"), dict) and e["message"].get("role") == "toolResult"
    ]
    position = {id(e): i for i, e in enumerate(job.entries)}
    ordered = sorted(window + tool_results, key=lambda e: position[id(e)])
    ops = job.prepared.file_ops
    failed = extractive.failed_reads(job.entries)
    if failed:
        ops = FileOps(ops.read - failed, ops.written, ops.edited)
    return finish_summary(extractive.summarize(ordered), ops)


def model_request_text(job: SummaryJob, instructions: str | None) -> tuple[str, str]:
    """(system prompt, user prompt text) exactly as Pi's generateBranchSummary builds them."""
    return SUMMARIZATION_SYSTEM_PROMPT, build_prompt_text(job.prepared, instructions)


async def stream_model_summary(
    job: SummaryJob,
    backend: Any,
    instructions: str | None,
    max_answer_tokens: int = DEFAULT_RESERVE,
    max_tokens: int = 2048,
    on_retry: Callable[[str], None] | None = None,
) -> AsyncIterator[str]:
    """Text deltas of the model's answer (the caller joins them and calls `finish_summary`).

    A 429 before any text is retried up to RATE_LIMIT_RETRIES times after the server's Retry-After (at most
    MAX_RETRY_WAIT s each), `on_retry` told each time. An answer longer than `max_answer_tokens` (Pi's
    estimate; Pi reserves branchSummary.reserveTokens for it) or cut by the output limit fails, as Pi's does."""
    import asyncio
    from contextlib import aclosing

    from pitree.summary.backends.base import BackendError, BackendRateLimited, SummaryRequest

    system, prompt = model_request_text(job, instructions)
    request = SummaryRequest(system_prompt=system, prompt_text=prompt, max_tokens=max_tokens)
    max_answer_tokens = max(max_answer_tokens, max_tokens)  # an answer within what was asked for is never cut
    limit = max_answer_tokens * 4
    for attempt in range(RATE_LIMIT_RETRIES + 1):
        size = 0
        try:
            async with aclosing(backend.stream(request)) as deltas:
                async for delta in deltas:
                    size += len(delta)
                    if size > limit:
                        raise BackendError(
                            f"{backend.name}: the answer passed {max_answer_tokens:,} tokens, the budget Pi reserves "
                            "for a branch summary; stopped it, nothing written"
                        )
                    yield delta
            break
        except BackendRateLimited as exc:
            if size or attempt == RATE_LIMIT_RETRIES:
                raise
            wait = min(MAX_RETRY_WAIT, exc.retry_after if exc.retry_after is not None else 2.0 * (attempt + 1))
            if on_retry is not None:
                on_retry(f"rate limited; retry {attempt + 1} of {RATE_LIMIT_RETRIES} in {wait:g} s")
            await asyncio.sleep(wait)
    if getattr(backend, "stop_reason", "stop") == "length":
        raise BackendError(
            f"{backend.name}: branch summarization failed: generation hit the token cap and the summary is incomplete"
        )


def finish_model_summary(job: SummaryJob, model_text: str) -> tuple[str, list[str], list[str]]:
    text, read, modified = finish_summary(model_text, job.prepared.file_ops)
    return (text or "No summary generated"), read, modified
