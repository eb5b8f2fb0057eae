"""The completion adapter for base models: the transcript it sends, what it reads back, and its errors.

The HTTP side is exercised against a real llama.cpp server in ``tests/calibration/test_calibration_local.py``;
here a real loopback HTTP server (the standard library's) stands in, so that the request body can be checked.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from ariadne_lc.local import CompletionChatModel, LocalModelServerError, render_transcript


class _Handler(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    reply: ClassVar[tuple[int, dict[str, Any]]] = (200, {})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, **body})
        status, payload = type(self).reply
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Handler.requests = []
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def test_the_chat_becomes_one_transcript_and_the_reply_a_message(endpoint: str) -> None:
    _Handler.reply = (
        200,
        {
            "choices": [{"text": " 42 apples.", "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
        },
    )
    model = CompletionChatModel(base_url=endpoint, model="gemma", max_tokens=7)
    messages = [
        SystemMessage("Answer."),
        HumanMessage("Question: 6 * 7?"),
        AIMessage("Thought: multiply."),
        HumanMessage("Question: 2 + 2?"),
    ]
    reply = model.invoke(messages, stop=["\n"], extra_body={"grammar": "root ::= [0-9]+"})
    assert reply.text == " 42 apples." and reply.usage_metadata == {
        "input_tokens": 9,
        "output_tokens": 3,
        "total_tokens": 12,
    }
    (request,) = _Handler.requests
    assert request["path"] == "/v1/completions" and request["model"] == "gemma" and request["max_tokens"] == 7
    assert (
        request["prompt"]
        == render_transcript(messages)
        == "Answer.\n\nQuestion: 6 * 7?\nThought: multiply.\nQuestion: 2 + 2?\n"
    )
    assert request["stop"] == ["\nQuestion:", "\n"] and request["grammar"] == "root ::= [0-9]+"
    assert request["temperature"] == 0.0


async def test_async_and_call_overrides(endpoint: str) -> None:
    _Handler.reply = (200, {"choices": [{"text": "B"}]})
    model = CompletionChatModel(base_url=endpoint, model="gemma")
    reply = await model.ainvoke("Question: which?", max_tokens=3)
    assert reply.text == "B" and _Handler.requests[0]["max_tokens"] == 3


def test_http_errors_and_empty_replies_are_named_errors(endpoint: str) -> None:
    model = CompletionChatModel(base_url=endpoint, model="gemma")
    _Handler.reply = (500, {"error": "boom"})
    with pytest.raises(LocalModelServerError, match="HTTP 500"):
        model.invoke("hi")
    _Handler.reply = (200, {"choices": []})
    with pytest.raises(LocalModelServerError, match="no text"):
        model.invoke("hi")
