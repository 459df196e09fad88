"""The OpenAI and Anthropic backends against a real local HTTP server (tests/llm_server.py) through the real
SDKs: what they send, what they stream back, how each failure maps to a BackendError, and cancellation."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator

import pytest
from pitree.config import load_config, make_backend
from pitree.summary.backends.anthropic_backend import AnthropicBackend
from pitree.summary.backends.base import (
    Backend,
    BackendAuthError,
    BackendError,
    BackendRateLimited,
    BackendTimeout,
    BackendUnavailable,
    SummaryRequest,
    display_url,
    safe_message,
)
from pitree.summary.backends.openai_backend import OpenAIBackend

from tests.llm_server import (
    Behaviour,
    FakeLLMServer,
    closed_port,
    disconnect,
    error_event,
    hang,
    ok,
    split,
    status,
)

pytest.importorskip("openai")
pytest.importorskip("anthropic")

KEY = "sk-test-SECRET-0123456789abcdef"
SYSTEM = "You are a context summarization assistant. (system prompt)"
PROMPT = "<conversation>\n[User]: fix the bug\n</conversation>\n\nSummarize this branch."
REQUEST = SummaryRequest(system_prompt=SYSTEM, prompt_text=PROMPT, max_tokens=2048)
PROVIDERS = ("openai", "anthropic")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as srv:
        yield srv


def make(provider: str, base_url: str, timeout: float = 10.0, key: str = KEY) -> Backend:
    if provider == "openai":
        return OpenAIBackend(key, base_url, model="fake-gpt", timeout=timeout)
    return AnthropicBackend(key, base_url, model="fake-claude", timeout=timeout)


def base_url(provider: str, server: FakeLLMServer) -> str:
    return server.openai_url if provider == "openai" else server.anthropic_url


async def collect(backend: Backend, request: SummaryRequest = REQUEST) -> list[str]:
    return [delta async for delta in backend.stream(request)]


async def failure(backend: Backend) -> tuple[BackendError, list[str], float]:
    """The BackendError a stream ends with, the deltas before it, and the seconds it took."""
    deltas: list[str] = []
    start = time.monotonic()
    with pytest.raises(BackendError) as info:
        async for delta in backend.stream(REQUEST):
            deltas.append(delta)
    return info.value, deltas, time.monotonic() - start


def test_split_joins_back_exactly() -> None:
    for text, n in [("hello world", 3), ("ab", 5), ("", 3), ("ünïcode ✓ — done", 4)]:
        pieces = split(text, n)
        assert "".join(pieces) == text and len(pieces) <= max(n, 1)


# -- success ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_success_streams_the_exact_text_and_sends_the_request(provider: str, server: FakeLLMServer) -> None:
    text = "## Goal\nFix the parser — ünïcode ✓\n\n## Done\n- [x] `app/x.py`"
    server.script(ok(text, chunks=5))
    deltas = await collect(make(provider, base_url(provider, server)))
    assert "".join(deltas) == text
    assert len(deltas) == 5  # streamed piece by piece, not buffered into one
    [got] = server.requests
    body, headers = got.body, got.headers
    assert body["stream"] is True and body["max_tokens"] == 2048
    if provider == "openai":
        assert got.path == "/v1/chat/completions" and body["model"] == "fake-gpt"
        assert body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]
        assert headers["authorization"] == f"Bearer {KEY}"
    else:
        assert got.path == "/v1/messages" and body["model"] == "fake-claude"
        assert body["system"] == SYSTEM
        assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]
        # Older SDK releases send x-api-key; anthropic 2.x sends the key as a bearer token.
        assert headers.get("x-api-key") == KEY or headers.get("authorization") == f"Bearer {KEY}"
        assert "anthropic-version" in headers


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_request_max_tokens_is_passed_through(provider: str, server: FakeLLMServer) -> None:
    await collect(make(provider, base_url(provider, server)), SummaryRequest("s", "p", max_tokens=77))
    assert server.requests[0].body["max_tokens"] == 77


async def test_openai_retries_with_max_completion_tokens_when_the_model_asks(server: FakeLLMServer) -> None:
    server.script(
        status(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
        ),
        ok("fine"),
    )
    assert "".join(await collect(make("openai", server.openai_url))) == "fine"
    first, second = (r.body for r in server.requests)
    assert first["max_tokens"] == 2048 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 2048 and "max_tokens" not in second


async def test_a_plain_400_is_not_retried(server: FakeLLMServer) -> None:
    server.script(status(400, "model 'nope' not found"), ok("never"))
    exc, _, _ = await failure(make("openai", server.openai_url))
    assert type(exc) is BackendError and "request rejected (HTTP 400)" in str(exc) and "not found" in str(exc)
    assert len(server.requests) == 1


# -- failures ---------------------------------------------------------------------------------------------

ERRORS: list[tuple[str, Behaviour, type[BackendError], str]] = [
    ("401", status(401, f"Incorrect API key provided: {KEY}"), BackendAuthError, "authentication failed (HTTP 401)"),
    ("403", status(403), BackendAuthError, "authentication failed (HTTP 403)"),
    ("429", status(429, "slow down"), BackendRateLimited, "rate limited (HTTP 429)"),
    ("500", status(500), BackendUnavailable, "server error (HTTP 500)"),
    ("503", status(503), BackendUnavailable, "server error (HTTP 503)"),
    ("404", status(404, "no such model"), BackendError, "request rejected (HTTP 404)"),
    ("disconnect", disconnect(after=1), BackendUnavailable, "dropped mid-answer"),
    ("stall", hang(after=2), BackendTimeout, "no answer from"),
    ("error event", error_event(after=1, message=f"Overloaded {KEY}"), BackendError, "Overloaded [key]"),
]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("case", "behaviour", "expected", "words"), ERRORS, ids=[e[0] for e in ERRORS])
async def test_failures_map_to_backend_errors(
    provider: str, server: FakeLLMServer, case: str, behaviour: Behaviour, expected: type[BackendError], words: str
) -> None:
    server.script(behaviour)
    exc, deltas, took = await failure(make(provider, base_url(provider, server), timeout=0.5))
    assert isinstance(exc, expected), repr(exc)
    if expected is BackendError and case != "error event":
        assert type(exc) is BackendError
    message = str(exc)
    assert words in message
    assert behaviour.kind != "status" or message.endswith(behaviour.message.replace(KEY, "[key]"))
    assert message.startswith(f"{provider}: ") and "\n" not in message
    assert KEY not in message and KEY not in repr(exc)
    assert len(server.requests) == 1  # max_retries=0: one request, a fast and definite answer
    assert took < 5
    if case in ("disconnect", "stall", "error event"):
        assert deltas and "".join(deltas) == "one two three four"[: len("".join(deltas))]
    if case == "error event" and provider == "anthropic":
        assert isinstance(exc, BackendUnavailable)  # overloaded_error is the provider's side


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_status_error_names_the_url(provider: str, server: FakeLLMServer) -> None:
    server.script(status(401))
    exc, _, _ = await failure(make(provider, base_url(provider, server)))
    assert f"{provider}: authentication failed (HTTP 401) at {base_url(provider, server)}" in str(exc)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_connection_refused_is_unavailable(provider: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}" + ("/v1" if provider == "openai" else "")
    exc, _, took = await failure(make(provider, url, timeout=5))
    assert isinstance(exc, BackendUnavailable) and "connection refused" in str(exc)
    assert url in str(exc) and KEY not in str(exc) and took < 5


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_server_that_never_answers_times_out_quickly(provider: str, server: FakeLLMServer) -> None:
    server.script(hang())
    exc, deltas, took = await failure(make(provider, base_url(provider, server), timeout=0.5))
    assert isinstance(exc, BackendTimeout) and "within 0.5 s" in str(exc) and not deltas
    assert 0.4 < took < 4
    assert server.wait_until(lambda: server.closed_early == 1 and server.active == 0)


# -- cancellation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_cancelling_the_consumer_closes_the_stream(provider: str, server: FakeLLMServer) -> None:
    server.script(ok("x" * 100, chunks=100, delay=0.1))  # ~10 s if nobody stops it
    backend = make(provider, base_url(provider, server))
    got: list[str] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for delta in backend.stream(REQUEST):
            got.append(delta)
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)
    assert task.cancelled() and time.monotonic() - start < 2
    assert 0 < len(got) < 100
    closed = server.wait_until(lambda: server.closed_early == 1 and server.active == 0)
    assert closed, "the server kept sending"
    assert asyncio.all_tasks() == {asyncio.current_task()}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_slow_stream_completes_when_not_cancelled(provider: str, server: FakeLLMServer) -> None:
    server.script(ok("abcdef", chunks=3, delay=0.05))
    assert "".join(await collect(make(provider, base_url(provider, server), timeout=2))) == "abcdef"
    assert server.closed_early == 0


# -- construction, optional extra, config --------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "module"), [("openai", "openai"), ("anthropic", "anthropic")])
def test_missing_sdk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, provider: str, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import openai` raise ImportError
    with pytest.raises(BackendError) as info:
        make(provider, "http://127.0.0.1:1")
    assert str(info.value) == f"the {provider} backend needs the 'llm' extra: pip install 'pitree[llm]'"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_repr_hides_the_key(provider: str) -> None:
    backend = make(provider, "http://user:pw@127.0.0.1:9/v1")
    assert KEY not in repr(backend) and "pw" not in repr(backend) and "<hidden>" in repr(backend)


async def test_local_server_without_a_key_via_config(server: FakeLLMServer) -> None:
    config = load_config(
        path=None,
        env={
            "PITREE_CONFIG": "/nonexistent/pitree.toml",
            "OPENAI_BASE_URL": server.openai_url,
            "PITREE_SUMMARIZER": "openai",
            "PITREE_MODEL": "llama3.1",
            "PITREE_TIMEOUT": "3",
        },
    )
    backend = make_backend(config)
    assert "".join(await collect(backend)) == "Hello from the fake model."
    [got] = server.requests
    assert got.headers["authorization"] == "Bearer not-needed" and got.body["model"] == "llama3.1"


async def test_anthropic_via_config_uses_its_default_model(server: FakeLLMServer) -> None:
    env = {
        "PITREE_CONFIG": "/nonexistent/pitree.toml",
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": server.anthropic_url,
    }
    config = load_config(path=None, env=env, overrides={"summarizer": "anthropic"})
    await collect(make_backend(config))
    assert server.requests[0].body["model"] == "claude-3-5-haiku-latest"


# -- the fake server's non-streaming answers (kept honest against the SDKs) ----------------------------------


async def test_fake_server_answers_non_streaming_requests(server: FakeLLMServer) -> None:
    import anthropic
    import openai

    server.script(ok("whole answer"))
    async with openai.AsyncOpenAI(api_key=KEY, base_url=server.openai_url, max_retries=0) as oc:
        done = await oc.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert done.choices[0].message.content == "whole answer"
    async with anthropic.AsyncAnthropic(api_key=KEY, base_url=server.anthropic_url, max_retries=0) as ac:
        msg = await ac.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert msg.content[0].text == "whole answer"  # type: ignore[union-attr]


# -- message helpers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("bad key sk-abcdef", ["sk-abcdef"], "bad key [key]"),
        ("two\nlines\there", [], "two lines here"),
        ("escape \x1b[31m", [], "escape [31m"),
        ("short key x", ["x"], "short key x"),
        ("none", [None], "none"),
        ("y" * 400, [], "y" * 299 + "…"),
    ],
)
def test_safe_message(text: str, secrets: list[str | None], expected: str) -> None:
    assert safe_message(text, secrets) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("https://user:secret@proxy.example/v1", "https://proxy.example/v1"),
    ],
)
def test_display_url_drops_credentials(url: str, expected: str) -> None:
    assert display_url(url) == expected


# -- issue #21: non-JSON data lines, 429 with Retry-After, oversized answers; usage --------------------------


def _job():  # type: ignore[no-untyped-def]
    from pitree.summary.prepare import prepare_branch_entries
    from pitree.summary.run import SummaryJob

    from tests.sessions import assistant, user

    entries = [user("u", None, "fix the bug"), assistant("a", "u", "done")]
    return SummaryJob(entries, prepare_branch_entries(entries))


async def _run(backend: Backend, **kw) -> str:  # type: ignore[no-untyped-def]
    from pitree.summary.run import stream_model_summary

    return "".join([d async for d in stream_model_summary(_job(), backend, None, **kw)])


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_non_json_data_line_is_a_clear_backend_error(provider: str, server: FakeLLMServer) -> None:
    from tests.llm_server import garbage

    server.script(garbage(after=1))
    backend = make(provider, base_url(provider, server), timeout=2)
    if provider == "anthropic":  # its SDK skips a data line with no event name: the answer completes
        assert "".join(await collect(backend)) == "one two three four"
        return
    exc, _, _ = await failure(backend)
    assert type(exc) is BackendError and "not JSON" in str(exc) and KEY not in str(exc)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_429_is_retried_after_retry_after_with_progress(provider: str, server: FakeLLMServer) -> None:
    server.script(status(429, "slow down", retry_after="0"), status(429, retry_after="0"), ok("## Goal\nfine"))
    told: list[str] = []
    assert await _run(make(provider, base_url(provider, server)), on_retry=told.append) == "## Goal\nfine"
    assert len(server.requests) == 3 and told == [
        "rate limited; retry 1 of 3 in 0 s",
        "rate limited; retry 2 of 3 in 0 s",
    ]


async def test_429_gives_up_after_three_retries(server: FakeLLMServer) -> None:
    server.script(status(429, "slow down", retry_after="0"))
    with pytest.raises(BackendRateLimited):
        await _run(make("openai", server.openai_url))
    assert len(server.requests) == 4


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_oversized_answer_is_stopped_and_refused(provider: str, server: FakeLLMServer) -> None:
    server.script(ok("x" * 5000, chunks=50))
    with pytest.raises(BackendError, match="passed 1,000 tokens"):
        await _run(make(provider, base_url(provider, server)), max_answer_tokens=1000, max_tokens=500)
    assert server.wait_until(lambda: server.active == 0)
    # A reserve smaller than the output asked for never cuts an answer within it.
    server.script(ok("y" * 3000, chunks=10))
    assert await _run(make(provider, base_url(provider, server)), max_answer_tokens=0, max_tokens=1000) == "y" * 3000


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_answer_cut_by_the_output_limit_fails_like_pi(provider: str, server: FakeLLMServer) -> None:
    server.script(ok("## Goal\ncut", finish="length"))
    with pytest.raises(BackendError, match="hit the token cap"):
        await _run(make(provider, base_url(provider, server)))


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_usage_is_reported_in_pis_shape(provider: str, server: FakeLLMServer) -> None:
    server.script(ok("fine", usage=(10, 5)))
    backend = make(provider, base_url(provider, server))
    await collect(backend)
    assert backend.usage is not None
    assert (backend.usage["input"], backend.usage["output"], backend.usage["totalTokens"]) == (10, 5, 15)
    assert backend.usage["cost"]["total"] == 0
    if provider == "openai":
        assert server.requests[0].body["stream_options"] == {"include_usage": True}
