"""A fake OpenAI-compatible endpoint on 127.0.0.1, started by the test (no network).

The ``fake_endpoint`` fixture of tests/conftest.py starts and stops it.

It answers ``POST /v1/chat/completions`` with whatever the test's ``reply``
function says, records every request, and counts how many were in flight at
once. The default reply is a score drawn from a hash of the prompt, within the
bounds the prompt names.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# In a Reply's body or header values: replaced by the key the request was sent with
# (its Authorization header), as an endpoint that echoes the request does.
SENT_KEY = "{sent-key}"

# The bounds in the closing sentence of the paper's template: ("0"–"5").
_BOUNDS = re.compile(r'\("([-\d.]+)"\u2013"([-\d.]+)"\)')


def score_for(prompt: str) -> str:
    """A reproducible score within the prompt's bounds, two decimals."""
    low, high = (float(x) for x in _BOUNDS.search(prompt).groups())
    share = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return f"{low + share * (high - low):.2f}"


@dataclass
class Reply:
    status: int = 200
    content: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    # [(token, logprob, [(alternative, logprob), ...]), ...] for the reply's tokens.
    logprobs: list | None = None


def echo_key_reply(status: int) -> Reply:
    """A refusal with status ``status`` quoting the key it was sent, in its body (the
    error's message, as OpenAI's "Incorrect API key provided: ..." does) and in a header;
    ``x-should-retry: false`` so the client reports a 5xx at once rather than retrying."""
    body = json.dumps(
        {"error": {"message": f"bad request from key {SENT_KEY}", "echo": f"Bearer {SENT_KEY}"}}
    )
    headers = {"X-Echo-Authorization": f"Bearer {SENT_KEY}", "x-should-retry": "false"}
    return Reply(status=status, body=body, headers=headers)


@dataclass
class FakeEndpoint:
    url: str
    reply: Callable[[dict, int], Reply]
    delay: float = 0.0
    requests: list[dict] = field(default_factory=list)
    # The Authorization header of each request.
    keys: list[str | None] = field(default_factory=list)
    answers: list[tuple[str, str]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def prompts(self) -> list[str]:
        return [r["messages"][-1]["content"] for r in self.requests]


def default_reply(request: dict, n: int) -> Reply:
    return Reply(content=score_for(request["messages"][-1]["content"]))


def _logprobs(tokens: list | None) -> dict | None:
    if tokens is None:
        return None
    return {
        "content": [
            {
                "token": token,
                "logprob": logprob,
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top
                ],
            }
            for token, logprob, top in tokens
        ]
    }


def _completion(request: dict, content: str, logprobs: list | None = None) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": _logprobs(logprobs),
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


class _Handler(BaseHTTPRequestHandler):
    endpoint: FakeEndpoint

    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def do_POST(self) -> None:
        endpoint = self.server.endpoint
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        with endpoint.lock:
            endpoint.requests.append(request)
            endpoint.keys.append(self.headers.get("Authorization"))
            n = len(endpoint.requests)
            endpoint.in_flight += 1
            endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
        try:
            if self.path != "/v1/chat/completions":
                reply = Reply(status=404, body='{"error": {"message": "no such path"}}')
            else:
                reply = endpoint.reply(request, n)
            time.sleep(endpoint.delay)
            if reply.body is not None:
                body = reply.body
            elif reply.status == 200:
                body = json.dumps(_completion(request, reply.content, reply.logprobs))
                with endpoint.lock:
                    endpoint.answers.append((request["messages"][-1]["content"], reply.content))
            else:
                body = json.dumps({"error": {"message": f"fake error {reply.status}"}})
            sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            data = body.replace(SENT_KEY, sent).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in reply.headers.items():
                self.send_header(key, value.replace(SENT_KEY, sent))
            self.end_headers()
            self.wfile.write(data)
        finally:
            with endpoint.lock:
                endpoint.in_flight -= 1


def start_endpoint(reply=default_reply, delay: float = 0.0):
    """A started fake endpoint and its server (``server.shutdown()`` stops it)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    endpoint = FakeEndpoint(
        url=f"http://127.0.0.1:{server.server_address[1]}/v1", reply=reply, delay=delay
    )
    server.endpoint = endpoint
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return endpoint, server, thread
