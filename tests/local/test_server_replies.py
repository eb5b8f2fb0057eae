"""What the local server does with a request: the token cap reaches it, and an identical request gets the
identical reply whatever request came before it.

Both failed before: langchain-openai sent the cap only as ``max_completion_tokens``, which llama-cpp-python's
server ignores (a 5-token request generated 492 tokens), and llama.cpp's prompt-prefix reuse made a prompt answer
"12" right after one request and "10" after another. The server's default now reuses prefixes only in aligned
chunks (:mod:`ariadne_lc.local._serve`); run with ``ARIADNE_LLAMA_PREFIX_CACHE=1`` in the environment (the server
then keeps llama.cpp's reuse) to see the second test fail; ``benchmarks/llama_determinism.py`` measures how often.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from langchain_core.messages import BaseMessage

from ariadne_lc.calibration.agents import ANSWER_MAX_TOKENS, THOUGHT_MAX_TOKENS
from ariadne_lc.calibration.prompts import answer_prompt, thought_prompt
from ariadne_lc.demo import load_demo_queries
from ariadne_lc.local import LocalModelServer, openai_compatible_chat_model

Request = tuple[list[BaseMessage], dict[str, Any]]


def calibration_requests(n_queries: int = 4) -> list[Request]:
    """The ground-truth agents' two requests (a thought, a bare answer) for a few benchmark questions."""
    queries = load_demo_queries(2, seed=0)[:n_queries]
    out: list[Request] = []
    for q in queries:
        out.append((thought_prompt(q.question), {"stop": ["\n"], "max_tokens": THOUGHT_MAX_TOKENS}))
        out.append((answer_prompt(q.question), {"stop": ["\n"], "max_tokens": ANSWER_MAX_TOKENS}))
    return out


def orders(n: int) -> list[list[int]]:
    """Request orders in which every request follows a different request each time, and once itself."""
    forward = list(range(n))
    evens_then_odds = forward[::2] + forward[1::2]
    twice = [i for i in forward for _ in range(2)]
    return [forward, forward[::-1], evens_then_odds, twice]


def test_the_token_cap_reaches_the_server(local_server: LocalModelServer) -> None:
    prompt = "Write a long story about a cat who sails around the world, with many chapters."
    for model in (
        local_server.chat_model(max_tokens=5),
        openai_compatible_chat_model(local_server.base_url, local_server.model_alias, max_tokens=5),
    ):
        reply = model.invoke(prompt)
        usage = reply.response_metadata["token_usage"]
        assert 0 < usage["completion_tokens"] <= 5, usage


def test_an_identical_request_gets_the_identical_reply_after_any_other(local_server: LocalModelServer) -> None:
    model = local_server.chat_model()
    requests = calibration_requests()
    replies: dict[int, list[str]] = defaultdict(list)
    for order in orders(len(requests)):
        for i in order:
            messages, kwargs = requests[i]
            replies[i].append(model.invoke(messages, **kwargs).text)
    differing = {i: sorted(set(texts)) for i, texts in replies.items() if len(set(texts)) > 1}
    assert not differing, differing
