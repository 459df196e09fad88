"""The fake model server's scripted tool calls and OpenAI usage chunk (what Pi 1.6's CLI needs from it)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from tests.llm_server import FakeLLMServer, ok, tool_call


def post(url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()  # type: ignore[no-any-return]


def sse(data: bytes) -> list[tuple[str | None, Any]]:
    events = []
    for block in data.decode().split("\n\n"):
        name, payload = None, None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                payload = line[6:]
        if payload is not None:
            events.append((name, payload if payload == "[DONE]" else json.loads(payload)))
    return events


def test_openai_stream_ends_with_usage_when_asked() -> None:
    with FakeLLMServer() as server:
        server.script(ok("abcdefgh"))
        body = {"model": "m", "stream": True, "stream_options": {"include_usage": True}, "messages": []}
        events = sse(post(server.openai_url + "/chat/completions", body))
        body.pop("stream_options")
        plain = sse(post(server.openai_url + "/chat/completions", body))
    assert events[-1][1] == "[DONE]" and events[-2][1]["choices"] == []
    usage = events[-2][1]["usage"]
    assert usage["completion_tokens"] == 2 and usage["prompt_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + 2
    assert usage["prompt_tokens_details"]["cached_tokens"] == usage["prompt_tokens"] // 2
    assert not any("usage" in e[1] for e in plain if isinstance(e[1], dict))  # not asked: no usage chunk


@pytest.mark.parametrize("stream", [True, False])
def test_openai_tool_call(stream: bool) -> None:
    with FakeLLMServer() as server:
        server.script(tool_call("read", {"path": "a.txt"}), ok("after"))
        raw = post(server.openai_url + "/chat/completions", {"model": "m", "stream": stream, "messages": []})
        second = post(server.openai_url + "/chat/completions", {"model": "m", "stream": False, "messages": []})
    if stream:
        chunks = [e[1] for e in sse(raw) if isinstance(e[1], dict)]
        calls = [c for ch in chunks for c in ch["choices"][0]["delta"].get("tool_calls", [])]
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
        assert not any(ch["choices"][0]["delta"].get("content") for ch in chunks)
    else:
        choice = json.loads(raw)["choices"][0]
        calls = choice["message"]["tool_calls"]
        assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("read", {"path": "a.txt"})
    ]
    assert json.loads(second)["choices"][0]["message"]["content"] == "after"


@pytest.mark.parametrize("stream", [True, False])
def test_anthropic_tool_call(stream: bool) -> None:
    with FakeLLMServer() as server:
        server.script(tool_call("bash", {"command": "ls"}, text="Listing."))
        raw = post(server.anthropic_url + "/v1/messages", {"model": "m", "stream": stream, "messages": []})
    if stream:
        events = sse(raw)
        starts = [e[1]["content_block"] for e in events if e[0] == "content_block_start"]
        assert [b["type"] for b in starts] == ["text", "tool_use"] and starts[1]["name"] == "bash"
        partial = "".join(
            e[1]["delta"]["partial_json"] for e in events if e[0] == "content_block_delta" and e[1]["index"] == 1
        )
        assert json.loads(partial) == {"command": "ls"}
        assert next(e[1] for e in events if e[0] == "message_delta")["delta"]["stop_reason"] == "tool_use"
    else:
        body = json.loads(raw)
        assert body["stop_reason"] == "tool_use"
        assert body["content"] == [
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "call_1", "name": "bash", "input": {"command": "ls"}},
        ]
