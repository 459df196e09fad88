"""`FakeLLMServer`: a real HTTP server on 127.0.0.1 that speaks enough OpenAI and Anthropic for their SDKs.

POST /v1/chat/completions (OpenAI chat completions) and POST /v1/messages (Anthropic Messages), streaming
(SSE) or not. Each request is answered by the next scripted `Behaviour` (the last one repeats):

- `ok(text, chunks, delay)`: the text in `chunks` pieces, `delay` seconds apart;
- `status(code, message)`: an error status with the provider's JSON error body;
- `hang(after=None)`: no answer at all, or `after` pieces and then nothing, until the client goes away;
- `disconnect(after)`: `after` pieces, then the socket is cut in the middle of the chunked body;
- `error_event(after)`: `after` pieces, then the provider's in-stream error;
- `tool_call(name, arguments, text)`: an answer that calls the tool `name` (after `text`, if any), stop reason
  tool_calls / tool_use;
- `garbage(after)`: `after` pieces, then a `data:` line that is not JSON, then the rest;
- `status(429, retry_after="0")`: an error status with a Retry-After header.

A streamed OpenAI answer ends with a usage chunk when the request asks for one (`stream_options.include_usage`, as
OpenAI does): prompt_tokens = the request body's bytes / 4, half of them reported as cached, completion_tokens = the
answer's characters / 4 (at least 1); `ok(..., usage=(prompt, completion))` fixes those figures (nothing cached).
Anthropic answers report usage in message_start/message_delta.

Every request is recorded (`requests`: path, lower-cased headers, JSON body). While waiting (hang, delays)
the server watches the socket, and when a client closes a connection before its answer is complete,
`closed_early` counts it. Use it as a context manager: `with FakeLLMServer() as server: ...`.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Kind = Literal["ok", "status", "hang", "disconnect", "error_event", "tool_call", "garbage"]

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Behaviour:
    kind: Kind = "ok"
    text: str = "Hello from the fake model."
    chunks: int = 3
    delay: float = 0.0
    status: int = 200
    message: str = ""
    after: int | None = None
    tool: str = ""
    arguments: str = "{}"  # the tool call's arguments as JSON text
    retry_after: str | None = None
    finish: str = "stop"
    usage: tuple[int, int] | None = None  # (prompt, completion) for the OpenAI usage chunk


def ok(
    text: str = "Hello from the fake model.",
    chunks: int = 3,
    delay: float = 0.0,
    finish: str = "stop",
    usage: tuple[int, int] | None = None,
) -> Behaviour:
    """`finish="length"`: the answer ends as cut by the output limit; `usage`: the OpenAI usage chunk's figures."""
    return Behaviour("ok", text=text, chunks=chunks, delay=delay, finish=finish, usage=usage)


def status(code: int, message: str = "", retry_after: str | None = None) -> Behaviour:
    return Behaviour("status", status=code, message=message or f"scripted HTTP {code}", retry_after=retry_after)


def garbage(after: int = 1, text: str = "one two three four") -> Behaviour:
    return Behaviour("garbage", text=text, chunks=4, after=after)


def hang(after: int | None = None, text: str = "one two three four") -> Behaviour:
    return Behaviour("hang", text=text, chunks=4, after=after)


def disconnect(after: int = 1, text: str = "one two three four") -> Behaviour:
    return Behaviour("disconnect", text=text, chunks=4, after=after)


def error_event(after: int = 1, message: str = "Overloaded", code: int = 529) -> Behaviour:
    return Behaviour("error_event", text="one two three four", chunks=4, after=after, status=code, message=message)


def tool_call(name: str, arguments: dict[str, Any], text: str = "") -> Behaviour:
    return Behaviour("tool_call", text=text, chunks=1, tool=name, arguments=json.dumps(arguments))


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def split(text: str, n: int) -> list[str]:
    """`text` in `n` pieces (fewer if it is shorter) that join back to exactly `text`."""
    n = max(1, min(n, len(text))) if text else 1
    size, extra = divmod(len(text), n)
    out, pos = [], 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(text[pos : pos + step])
        pos += step
    return out


@dataclass
class _State:
    script: list[Behaviour] = field(default_factory=lambda: [ok()])
    requests: list[Received] = field(default_factory=list)
    closed_early: int = 0
    active: int = 0
    lock: threading.Condition = field(default_factory=threading.Condition)
    stop: threading.Event = field(default_factory=threading.Event)

    def next_behaviour(self) -> Behaviour:
        with self.lock:
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        state = self.server.state
        with state.lock:
            state.active += 1
        try:
            self._answer(state)
        except (_ClientGone, BrokenPipeError, ConnectionResetError):
            with state.lock:
                state.closed_early += 1
                state.lock.notify_all()
        finally:
            self.close_connection = True
            with state.lock:
                state.active -= 1
                state.lock.notify_all()

    # -- protocol -----------------------------------------------------------------------------------

    def _answer(self, state: _State) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path.split("?")[0]
        with state.lock:
            state.requests.append(Received(path, {k.lower(): v for k, v in self.headers.items()}, body))
            state.lock.notify_all()
        if path.endswith("/chat/completions"):
            proto = "openai"
        elif path.endswith("/messages"):
            proto = "anthropic"
        else:
            self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            return
        b = state.next_behaviour()
        model = str(body.get("model", "fake-model"))
        if b.kind == "hang" and b.after is None:
            self._wait(state, None)
            return
        if b.kind == "status":
            extra = {"Retry-After": b.retry_after} if b.retry_after is not None else {}
            self._json(b.status, _error_body(proto, b.status, b.message), extra)
            return
        pieces = split(b.text, b.chunks) if b.text or b.kind != "tool_call" else []
        call = (f"call_{len(state.requests)}", b.tool, b.arguments) if b.kind == "tool_call" else None
        if not body.get("stream"):
            self._json(200, _full_body(proto, model, b.text, call))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        options = body.get("stream_options")
        usage: dict[str, Any] | None = None
        if proto == "openai" and isinstance(options, dict) and options.get("include_usage"):
            prompt, completion = b.usage or (len(raw) // 4, max(1, len(b.text + b.arguments) // 4))
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": 0 if b.usage else prompt // 2},
            }
        head, deltas, tail = _stream_events(proto, model, pieces, call, usage, b.finish)
        self._events(head)
        limit = b.after if b.kind in ("hang", "disconnect", "error_event") else len(deltas)
        for i, event in enumerate(deltas[:limit]):
            if i and b.delay:
                self._wait(state, b.delay)
            if b.kind == "garbage" and i == b.after:
                self._chunk(b"data: <html>502 Bad Gateway</html>\n\n")
            self._events([event])
        if b.kind == "hang":
            self._wait(state, None)
            return
        if b.kind == "disconnect":
            self.connection.shutdown(socket.SHUT_RDWR)  # no terminating chunk: the body is cut short
            return
        if b.kind == "error_event":
            self._events([_stream_error(proto, b.status, b.message)])
        else:
            self._events(tail)
        self._chunk(b"")

    def _json(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _events(self, events: list[tuple[str | None, str]]) -> None:
        for name, data in events:
            text = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
            self._chunk(text.encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _wait(self, state: _State, seconds: float | None) -> None:
        """Wait `seconds` (None: until the server stops), raising _ClientGone as soon as the client closes."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while not state.stop.is_set():
            left = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
            if left <= 0:
                return
            readable, _, _ = select.select([self.connection], [], [], left)
            if readable:
                try:
                    data = self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    data = b""
                if not data:
                    raise _ClientGone
                time.sleep(left)  # the client sent something more; it is not gone


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


def _error_body(proto: str, code: int, message: str) -> dict[str, Any]:
    if proto == "openai":
        return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": str(code)}}
    kind = _ANTHROPIC_ERROR_TYPES.get(code, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def _stream_error(proto: str, code: int, message: str) -> tuple[str | None, str]:
    if proto == "openai":
        return None, json.dumps({"error": {"message": message, "type": "server_error", "code": str(code)}})
    return "error", json.dumps(_error_body(proto, code, message))


Call = tuple[str, str, str]  # a scripted tool call: id, name, arguments as JSON text


def _full_body(proto: str, model: str, text: str, call: Call | None = None) -> dict[str, Any]:
    if proto == "openai":
        message: dict[str, Any] = {"role": "assistant", "content": text or None if call else text}
        if call:
            message["tool_calls"] = [
                {"id": call[0], "type": "function", "function": {"name": call[1], "arguments": call[2]}}
            ]
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text or not call else []
    if call:
        content.append({"type": "tool_use", "id": call[0], "name": call[1], "input": json.loads(call[2])})
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if call else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


Event = tuple[str | None, str]


def _stream_events(
    proto: str,
    model: str,
    pieces: list[str],
    call: Call | None = None,
    usage: dict[str, Any] | None = None,
    finish: str = "stop",
) -> tuple[list[Event], list[Event], list[Event]]:
    """(opening events, one event per text piece, closing events) of a streamed answer; a tool call goes last."""
    if proto == "openai":

        def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> Event:
            choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
            return None, json.dumps(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": choices,
                    **extra,
                }
            )

        tail = []
        if call:
            function = {"name": call[1], "arguments": call[2]}
            tail.append(chunk({"tool_calls": [{"index": 0, "id": call[0], "type": "function", "function": function}]}))
        tail.append(chunk({}, "tool_calls" if call else finish))
        if usage is not None:
            tail.append(chunk(None, usage=usage))
        return (
            [chunk({"role": "assistant", "content": ""})],
            [chunk({"content": p}) for p in pieces],
            [*tail, (None, "[DONE]")],
        )

    def event(name: str, payload: dict[str, Any]) -> Event:
        return name, json.dumps({"type": name, **payload})

    head = [
        event(
            "message_start",
            {
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                }
            },
        ),
        event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        event("ping", {}),
    ]
    deltas = [event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}}) for p in pieces]
    tail = [event("content_block_stop", {"index": 0})]
    if call:
        block = {"type": "tool_use", "id": call[0], "name": call[1], "input": {}}
        tail += [
            event("content_block_start", {"index": 1, "content_block": block}),
            event("content_block_delta", {"index": 1, "delta": {"type": "input_json_delta", "partial_json": call[2]}}),
            event("content_block_stop", {"index": 1}),
        ]
    stop = "tool_use" if call else ("max_tokens" if finish == "length" else "end_turn")
    tail += [
        event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}),
        event("message_stop", {}),
    ]
    return head, deltas, tail


class FakeLLMServer:
    """Start with `with FakeLLMServer() as server:`; script with `server.script(ok(...), status(401))`."""

    def __init__(self) -> None:
        self._state = _State()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeLLMServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.state = self._state
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm-server", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        self._state.stop.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self.wait_until(lambda: self._state.active == 0, 5)
        self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not running"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """The base URL for OpenAI clients (they append /chat/completions)."""
        return self.url + "/v1"

    @property
    def anthropic_url(self) -> str:
        """The base URL for Anthropic clients (they append /v1/messages)."""
        return self.url

    def script(self, *behaviours: Behaviour) -> None:
        with self._state.lock:
            self._state.script = list(behaviours) or [ok()]

    @property
    def requests(self) -> list[Received]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def closed_early(self) -> int:
        """How many connections the client closed before their answer was complete."""
        with self._state.lock:
            return self._state.closed_early

    @property
    def active(self) -> int:
        """Requests being answered right now."""
        with self._state.lock:
            return self._state.active

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Poll `predicate` (evaluated without the lock) until it holds or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while True:
            if predicate():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with self._state.lock:
                self._state.lock.wait(min(left, 0.05))


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
