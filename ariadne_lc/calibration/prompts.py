"""What the ground-truth agents ask the model: a one-line thought that commits to an answer, or a bare answer.

Both prompts are few-shot chats (system instructions, worked examples as turns, the question): small models copy
a demonstrated exchange far better than they follow rules, and :class:`~ariadne_lc.local.CompletionChatModel`
renders the same chat as a plain transcript for a base model. Against the llama.cpp server the format is also
enforced with a GBNF grammar (``extra_body={"grammar": ...}``), so that every thought ends in a commitment the
coupled path can read and every bare answer is a number or a letter. Without a grammar (other endpoints, scripted
models) the replies are parsed leniently, and a thought without a commitment simply commits to nothing.

- The **thought** (``think`` node): ``Thought: <reasoning> The answer is <calculation | letter>.``
- The **bare answer** (``answer`` node, the bypass path): ``Final Answer: <number | letter>``, asked from the
  question alone.
"""

from __future__ import annotations

import json
import re

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from ariadne_lc.calibration.decisive import QuestionKind
from ariadne_lc.demo import FINAL_ANSWER_PREFIX, extract_final_answer

__all__ = [
    "ANSWER_INSTRUCTIONS",
    "READER_INSTRUCTIONS",
    "THOUGHT_INSTRUCTIONS",
    "answer_grammar",
    "answer_prompt",
    "option_letters",
    "parse_answer",
    "parse_thought",
    "reader_prompt",
    "thought_grammar",
    "thought_prompt",
]

THOUGHT_INSTRUCTIONS = (
    "You answer questions. Reply with one line: a short thought that explains the answer, "
    "ending with 'The answer is' and the calculation or the option letter."
)
ANSWER_INSTRUCTIONS = "You answer questions. Reply with the final answer only: a number, or an option letter."

_MAX_THOUGHT_CHARS = 160
_NUMBER_QUESTION = "Question: A box holds 4 pens. How many pens are in 3 boxes?"
_CHOICE_QUESTION = "Question: Which animal is a mammal?\nA. shark\nB. dog\nC. frog"
_THOUGHT_LABEL = re.compile(r"^\s*thought\s*:\s*", re.I)
_OPTION_LETTER = re.compile(r"^\s*([A-J])\.\s", re.M)


def option_letters(question: str) -> str:
    """The letters of the options the question lists (``"ABCDE"``), or ``""``."""
    return "".join(_OPTION_LETTER.findall(question))


def thought_prompt(question: str) -> list[BaseMessage]:
    """The chat that asks for a one-line thought committing to an answer."""
    return [
        SystemMessage(THOUGHT_INSTRUCTIONS),
        HumanMessage(_NUMBER_QUESTION),
        AIMessage("Thought: 3 boxes with 4 pens each hold 3 times 4 pens. The answer is 3 * 4."),
        HumanMessage(_CHOICE_QUESTION),
        AIMessage("Thought: A dog has hair and feeds its young with milk, so it is a mammal. The answer is B."),
        HumanMessage(f"Question: {question}"),
    ]


def answer_prompt(question: str) -> list[BaseMessage]:
    """The chat that asks for the bare answer from the question alone (no thought anywhere in it)."""
    return [
        SystemMessage(ANSWER_INSTRUCTIONS),
        HumanMessage(_NUMBER_QUESTION),
        AIMessage(f"{FINAL_ANSWER_PREFIX} 12"),
        HumanMessage(_CHOICE_QUESTION),
        AIMessage(f"{FINAL_ANSWER_PREFIX} B"),
        HumanMessage(f"Question: {question}"),
    ]


READER_INSTRUCTIONS = (
    "You read a thought and give the final answer it leads to: a number, or an option letter. "
    "Follow the thought even if it is wrong."
)
_NUMBER_THOUGHT = "Thought: 3 boxes with 4 pens each hold 3 times 4 pens. The answer is 3 * 4."
_CHOICE_THOUGHT = "Thought: A dog has hair and feeds its young with milk, so it is a mammal. The answer is B."
_WRONG_THOUGHT = "Thought: 3 boxes with 4 pens each hold 3 plus 4 pens. The answer is 3 + 4."


def reader_prompt(thought: str, question: str | None = None) -> list[BaseMessage]:
    """The chat that asks for the final answer a thought leads to: with the question (the gate's reader, early
    answering) or without it (the LLM-reader coupled agent, whose answer can depend on nothing but the thought).

    The examples include a wrong thought read faithfully (``3 + 4`` gives 7, not 12): the reader must follow the
    thought, not solve the question.
    """

    def turn(q: str, t: str) -> HumanMessage:
        return HumanMessage(f"{q}\n{t}" if question is not None else t)

    return [
        SystemMessage(READER_INSTRUCTIONS),
        turn(_NUMBER_QUESTION, _NUMBER_THOUGHT),
        AIMessage(f"{FINAL_ANSWER_PREFIX} 12"),
        turn(_NUMBER_QUESTION, _WRONG_THOUGHT),
        AIMessage(f"{FINAL_ANSWER_PREFIX} 7"),
        turn(_CHOICE_QUESTION, _CHOICE_THOUGHT),
        AIMessage(f"{FINAL_ANSWER_PREFIX} B"),
        turn(f"Question: {question}" if question is not None else "", f"Thought: {thought}"),
    ]


def _letters_rule(question: str) -> str:
    letters = option_letters(question) or "ABCDE"
    return "(" + " | ".join(json.dumps(c) for c in letters) + ")"


_NUMBER_RULES = [
    'expr ::= num (" " op " " num){0,3}',
    'num ::= [0-9]{1,7} ("." [0-9]{1,2})?',
    'op ::= "+" | "-" | "*" | "/"',
]


def thought_grammar(question: str, kind: QuestionKind) -> str:
    """GBNF (llama.cpp): ``Thought: <text> The answer is <calculation | letter>.`` on one line."""
    value = "expr" if kind == "number" else "letter"
    rules = [
        f'root ::= "Thought: " text " The answer is " {value} "."',
        f"text ::= [^\\n]{{1,{_MAX_THOUGHT_CHARS}}}",
    ]
    rules += _NUMBER_RULES if kind == "number" else [f"letter ::= {_letters_rule(question)}"]
    return "\n".join(rules)


def answer_grammar(question: str, kind: QuestionKind) -> str:
    """GBNF (llama.cpp): ``Final Answer: <number | letter>``."""
    if kind == "number":
        return f'root ::= "{FINAL_ANSWER_PREFIX} " ("-")? num\nnum ::= [0-9]{{1,7}} ("." [0-9]{{1,2}})?'
    return f'root ::= "{FINAL_ANSWER_PREFIX} " letter\nletter ::= {_letters_rule(question)}'


def parse_thought(reply: str) -> str:
    """The thought as one line, without its ``Thought:`` label (the first non-empty line of the reply)."""
    lines = [line for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return " ".join(_THOUGHT_LABEL.sub("", lines[0], count=1).split())


def parse_answer(reply: str) -> str:
    """The bare answer: the text after ``Final Answer:``, else the reply's first line."""
    answer = extract_final_answer(reply)
    if answer is not None and answer.strip():
        return " ".join(answer.split("\n", 1)[0].split())
    lines = [line for line in reply.strip().splitlines() if line.strip()]
    return " ".join(lines[0].split()) if lines else ""
