"""Producing a branch summary for a jump: read the abandoned entries, prepare them (Pi's budget), then
either fill the headings offline (extractive) or stream a model's answer, and wrap it as Pi does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ..session.tree import SessionTree
from ..store.session_file import EntryReader
from .backends import extractive
from .jump import JumpPlan
from .prepare import (
    SUMMARIZATION_SYSTEM_PROMPT,
    Prepared,
    build_prompt_text,
    finish_summary,
    prepare_branch_entries,
    token_budget,
)

SUMMARIZERS = ("none", "extractive", "openai", "anthropic")
NO_CONTENT = "No content to summarize"


@dataclass
class SummaryJob:
    entries: list[dict[str, Any]]
    prepared: Prepared

    @property
    def empty(self) -> bool:
        return not self.prepared.messages


def prepare_job(
    tree: SessionTree, reader: EntryReader, plan: JumpPlan, context_window: int = 128000, reserve: int = 16384
) -> SummaryJob:
    entries = reader.entries(plan.to_summarize)
    return SummaryJob(entries, prepare_branch_entries(entries, token_budget(context_window, reserve)))


def no_content() -> tuple[str, list[str], list[str]]:
    """Pi 1.6 when no message survives preparation: this literal, no preamble, empty file lists, still written."""
    return NO_CONTENT, [], []


def extractive_summary(job: SummaryJob) -> tuple[str, list[str], list[str]]:
    """(summary text with Pi's preamble and file lists, read files, modified files)."""
    if job.empty:
        return no_content()
    # The budgeted messages are what a model would see; the extractive pass reads the same window.
    kept = {id(m) for m in job.prepared.messages}
    window = [e for e in job.entries if id(e.get("message")) in kept or e.get("type") != "message"]
    tool_results = [
        e for e in job.entries if isinstance(e.get("message"), dict) and e["message"].get("role") == "toolResult"
    ]
    ordered = sorted(window + tool_results, key=lambda e: job.entries.index(e))
    return finish_summary(extractive.summarize(ordered), job.prepared.file_ops)


def model_request_text(job: SummaryJob, instructions: str | None) -> tuple[str, str]:
    """(system prompt, user prompt text) exactly as Pi's generateBranchSummary builds them."""
    return SUMMARIZATION_SYSTEM_PROMPT, build_prompt_text(job.prepared, instructions)


async def stream_model_summary(job: SummaryJob, backend: Any, instructions: str | None) -> AsyncIterator[str]:
    """Text deltas of the model's answer (the caller joins them and calls `finish_summary`)."""
    from .backends.base import SummaryRequest

    system, prompt = model_request_text(job, instructions)
    async for delta in backend.stream(SummaryRequest(system_prompt=system, prompt_text=prompt, max_tokens=2048)):
        yield delta


def finish_model_summary(job: SummaryJob, model_text: str) -> tuple[str, list[str], list[str]]:
    text, read, modified = finish_summary(model_text, job.prepared.file_ops)
    return (text or "No summary generated"), read, modified
