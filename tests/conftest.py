"""Shared fixtures: small sessions written into tmp_path, the shared corpus (skipped when absent)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sessions import write_session

# Never the user's cache (~/.cache/pitree): subprocesses inherit this too.
os.environ["PITREE_CACHE_DIR"] = tempfile.mkdtemp(prefix="pitree-test-cache-")
# Nor the user's ~/.config/pitree/config.toml, nor their API keys.
os.environ["PITREE_CONFIG"] = os.path.join(tempfile.mkdtemp(prefix="pitree-test-config-"), "config.toml")
for _var in (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "PITREE_SUMMARIZER",
    "PITREE_MODEL",
    "PITREE_TIMEOUT",
):
    os.environ.pop(_var, None)

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
DEMO = REPO / "assets" / "demo.jsonl"


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir() or not any(CORPUS.glob("*.jsonl")):
        pytest.skip("../shared/corpus is not present")
    return CORPUS


@pytest.fixture
def demo_copy(tmp_path: Path) -> Iterator[Path]:
    """A copy of the demo session; the test fails if anything changed the copy's bytes."""
    target = tmp_path / "demo.jsonl"
    target.write_bytes(DEMO.read_bytes())
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    yield target
    if target.exists():
        assert hashlib.sha256(target.read_bytes()).hexdigest() == before, "the session file was modified"


@pytest.fixture
def make_session(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(entries: list[dict], **kw: object) -> Path:
        return write_session(tmp_path / f"s{len(list(tmp_path.iterdir()))}.jsonl", entries, **kw)  # type: ignore[arg-type]

    return make
