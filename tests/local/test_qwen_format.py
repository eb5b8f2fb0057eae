"""Qwen2.5's chat format, without a model: the prompt is what the GGUF's own template renders, and a completion
reads back as OpenAI tool calls.

The expected prompt below was rendered by the jinja template stored in the Qwen2.5-Coder-0.5B-Instruct GGUF file
(``tokenizer.chat_template``, jinja2's sandbox as llama-cpp-python uses it) for the same conversation.
"""

from __future__ import annotations

import json
from typing import Any

from ariadne_lc.local._qwen_format import DEFAULT_SYSTEM, parse_completion, render_prompt

MULTIPLY = {
    "type": "function",
    "function": {
        "name": "multiply",
        "description": "Multiply a and b.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}

CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Q"},
    {
        "role": "assistant",
        "content": "I will multiply.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "multiply", "arguments": '{"a": 12, "b": 9}'}},
            {"id": "c2", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
        ],
    },
    {"role": "tool", "content": "108", "tool_call_id": "c1"},
    {"role": "tool", "content": "3", "tool_call_id": "c2"},
    {"role": "assistant", "content": "It is 108."},
    {"role": "user", "content": "thanks"},
]

RENDERED_BY_THE_GGUF_TEMPLATE = (
    "<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user query."
    "\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    '{"type": "function", "function": {"name": "multiply", "description": "Multiply a and b.", "parameters": '
    '{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}'
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call><|im_end|>\n<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nI will multiply.\n<tool_call>\n"
    '{"name": "multiply", "arguments": {"a": 12, "b": 9}}\n</tool_call>\n<tool_call>\n'
    '{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n108\n'
    "</tool_response>\n<tool_response>\n3\n</tool_response><|im_end|>\n<|im_start|>assistant\nIt is 108.<|im_end|>\n"
    "<|im_start|>user\nthanks<|im_end|>\n<|im_start|>assistant\n"
)


def test_the_prompt_is_what_the_models_own_template_renders() -> None:
    prompt = render_prompt(CONVERSATION, [MULTIPLY])
    assert prompt.text == RENDERED_BY_THE_GGUF_TEMPLATE
    assert prompt.prefill == "" and prompt.forced == ""


def test_without_a_system_message_qwens_default_opens_the_prompt() -> None:
    prompt = render_prompt([{"role": "user", "content": [{"type": "text", "text": "Hi"}]}])
    assert prompt.text == (
        f"<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )


def test_a_trailing_assistant_message_is_continued_not_closed() -> None:
    messages = [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "I should multiply"}]
    prompt = render_prompt(messages)
    assert prompt.text.endswith("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nI should multiply")
    assert parse_completion(prompt, " 12 by 9.").content == "I should multiply 12 by 9."


def test_with_tools_a_prefill_ends_with_the_line_break_that_precedes_a_call() -> None:
    thought = "I should multiply 12 by 9."
    messages = [{"role": "user", "content": "Q"}, {"role": "assistant", "content": thought}]
    prompt = render_prompt(messages, [MULTIPLY])
    assert prompt.text.endswith(f"<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n{thought}\n")
    reply = parse_completion(prompt, '<tool_call>\n{"name": "multiply", "arguments": {"a": 12, "b": 9}}\n</tool_call>')
    assert reply.content == thought
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in reply.tool_calls] == [
        ("multiply", {"a": 12, "b": 9})
    ]
    assert parse_completion(prompt, "Then I add 1.").content == f"{thought}\nThen I add 1."


def test_a_bare_json_call_as_the_small_model_writes_it_is_a_call_when_tools_are_listed() -> None:
    messages = [{"role": "user", "content": "Q"}]
    prompt = render_prompt(messages, [MULTIPLY])
    for text in (
        '{"name": "multiply", "arguments": {"a": 12, "b": 9}}',
        'I multiply.\n```json\n{"name": "multiply", "arguments": {"a": 12, "b": 9}}\n```',
    ):
        reply = parse_completion(prompt, text)
        assert [json.loads(c["function"]["arguments"]) for c in reply.tool_calls] == [{"a": 12, "b": 9}], text
        assert reply.content in (None, "I multiply.")
    two = '{"name": "multiply", "arguments": {"a": 1, "b": 2}}\n{"name": "add", "arguments": {"a": 3, "b": 4}}'
    assert [c["function"]["name"] for c in parse_completion(prompt, two).tool_calls] == ["multiply", "add"]
    for not_a_call in ('The JSON is {"name": "x", "arguments": {}}', '{"name": "x", "arguments": {}, "other": 1}'):
        assert parse_completion(prompt, not_a_call).tool_calls == [], not_a_call
    assert parse_completion(render_prompt(messages), '{"name": "multiply", "arguments": {}}').tool_calls == []


def test_tool_choice_none_lists_no_tools_and_a_named_choice_ends_the_prompt_inside_the_call() -> None:
    messages = [{"role": "user", "content": "Q"}]
    assert "<tools>" not in render_prompt(messages, [MULTIPLY], "none").text
    named = render_prompt(messages, [MULTIPLY], {"type": "function", "function": {"name": "multiply"}})
    assert named.text.endswith('<|im_start|>assistant\n<tool_call>\n{"name": "multiply", "arguments": ')
    reply = parse_completion(named, '{"a": 2, "b": 3}}\n</tool_call>')
    assert reply.content is None and reply.tool_calls[0]["function"]["name"] == "multiply"
    required = render_prompt(messages, [MULTIPLY], "required")
    assert parse_completion(required, 'multiply", "arguments": {"a": 1, "b": 1}}').tool_calls


def test_every_well_formed_call_is_read_and_ids_depend_only_on_request_and_reply() -> None:
    prompt = render_prompt([{"role": "user", "content": "Q"}], [MULTIPLY])
    text = (
        'Two calls.\n<tool_call>\n{"name": "multiply", "arguments": {"a": 1, "b": 2}}\n</tool_call>\n'
        '<tool_call>\n{"name": "multiply", "arguments": "{\\"a\\": 3, \\"b\\": 4}"}\n</tool_call>\n'
        "<tool_call>\nnot json\n</tool_call>\n"
        '<tool_call>\n{"name": "multiply", "arguments": {"a": 5, "b": 6}}'  # cut off by max_tokens: still whole
    )
    reply = parse_completion(prompt, text)
    assert reply.content == "Two calls."
    assert [json.loads(c["function"]["arguments"]) for c in reply.tool_calls] == [
        {"a": 1, "b": 2},
        {"a": 3, "b": 4},
        {"a": 5, "b": 6},
    ]
    ids = [c["id"] for c in reply.tool_calls]
    assert len(set(ids)) == 3 and all(i.startswith("call_") for i in ids)
    assert [c["id"] for c in parse_completion(prompt, text).tool_calls] == ids


def test_text_without_a_well_formed_call_stays_content() -> None:
    prompt = render_prompt([{"role": "user", "content": "Q"}], [MULTIPLY])
    for text in ("The answer is 108.\n", "<tool_call>\n{not json}\n</tool_call>", '<tool_call>{"arguments": {}}'):
        reply = parse_completion(prompt, text)
        assert reply.tool_calls == [] and reply.content == text.rstrip()
