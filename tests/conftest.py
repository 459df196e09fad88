"""Shared fixtures: small sessions written into tmp_path, the shared corpus (skipped when absent)."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.sessions import write_session_file

# Every property test draws the same examples on every run: a suite must not fail once and pass the next time.
# PITREE_HYPOTHESIS_EXPLORE=1 draws fresh ones (to hunt; how a `²` section key was found).
settings.register_profile("pitree", derandomize=os.environ.get("PITREE_HYPOTHESIS_EXPLORE") is None)
settings.load_profile("pitree")


def _temporary_folder(prefix: str) -> str:
    """A folder for this test run, removed when it ends."""
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


# Never the user's cache (~/.cache/pitree): subprocesses inherit this too.
os.environ["PITREE_CACHE_DIR"] = _temporary_folder("pitree-test-cache-")
# Nor the user's ~/.config/pitree/config.toml, nor their API keys.
os.environ["PITREE_CONFIG"] = os.path.join(_temporary_folder("pitree-test-config-"), "config.toml")
# Nor Pi's agent folder (~/.pi/agent: settings, models, auth), which pitree reads for summaries.
os.environ["PI_CODING_AGENT_DIR"] = _temporary_folder("pitree-test-pi-agent-")
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
        return write_session_file(tmp_path / f"s{len(list(tmp_path.iterdir()))}.jsonl", entries, **kw)  # type: ignore[arg-type]

    return make


# ---- the file guard (tests/file_guard.py): a session file is never changed except by an explicit append ----

from tests import file_guard  # noqa: E402

file_guard.install()  # before any test module imports pitree's CLI, so every name it binds is the wrapper

# Existing tests whose own code changes a session file (standing in for Pi, or testing pitree's handling of a
# change), by node id prefix; new tests say `@pytest.mark.writes_session` themselves.
WRITES_SESSION: tuple[str, ...] = (
    "tests/ui/test_app.py::test_tail_append_follow_and_new_branch",
    "tests/ui/test_app.py::test_tail_torn_line_waits_then_completes",
    "tests/ui/test_app.py::test_tail_burst",
    "tests/ui/test_app.py::test_late_creation_with_real_watching",
    "tests/ui/test_entry_view.py::test_a_line_that_changed_under_pitree",
    "tests/unit/test_append.py::test_failed_write[",  # a second writer adds a partial line after pitree's
    "tests/unit/test_append.py::test_rewrite_without_backup",
    "tests/unit/test_append.py::test_rewrite_failures_leave_original[",
    "tests/unit/test_load.py::test_entry_reader_rereads_migrated_entries",
    "tests/unit/test_tail.py::",
    "tests/unit/test_tree_cache.py::test_growth_reuses_prefix_and_parses_the_rest",
    "tests/unit/test_tree_cache.py::test_changed_file_misses[",
    "tests/unit/test_watch.py::",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "writes_session: the test itself changes a session file (a stand-in for Pi); the file guard is off",
    )
    config.addinivalue_line("markers", "slow: takes more than a minute")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(WRITES_SESSION):
            item.add_marker(pytest.mark.writes_session)


@pytest.fixture(autouse=True)
def _file_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """Hash every session file the test has pitree open; fail if one changed other than by an append."""
    with file_guard.guarding(enabled=request.node.get_closest_marker("writes_session") is None):
        yield
