"""The auditors of a calibration run: one per (agent, p, method), built once, shared by the jobs' threads.

The gate-on auditor of an agent (method ``ariadne``) is built on a fresh ground-truth (or natural) graph with an
in-memory checkpointer; the agent's other methods reuse its graph: ``ariadne_ungated`` without the gate,
``ariadne_rederive`` with the step's tool calls re-derived by the agent's own derivation. One reader, cached, serves
every agent (at temperature 0 the agents write the same thought for a query).
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc.audit import Auditor
from ariadne_lc.calibration._model import ReaderChoice, calibration_reader
from ariadne_lc.calibration.agents import (
    COMMIT_TOOL,
    build_ground_truth_agent,
    build_natural_agent,
    coupled_tool_deriver,
)
from ariadne_lc.calibration.records import AgentKind, Method
from ariadne_lc.demo import extract_final_answer
from ariadne_lc.interventions import Critic
from ariadne_lc.interventions.implied import AnswerReader, CachedReader, RuleReader
from ariadne_lc.scoring import SimilarityScorer

__all__ = ["RunAuditors"]


class RunAuditors:
    """Builds and keeps the auditors of one calibration run (the arguments as :class:`CalibrationRunner`'s)."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        critic: Critic | None,
        scorer: SimilarityScorer | None,
        paraphraser: Critic | None,
        tau: float,
        lam: int,
        constrained: bool,
        seed: int,
        decisive: bool,
        reader: ReaderChoice | AnswerReader,
    ) -> None:
        self.model = model
        self._constrained = constrained
        self._auditor_kwargs: dict[str, Any] = {
            "critic": critic,
            "scorer": scorer,
            "paraphraser": paraphraser,
            "tau": tau,
            "lam": lam,
            "seed": seed,
            "answer_extractor": lambda text: extract_final_answer(text) or text,
        }
        self.decisive = decisive
        # one cache for every agent: at temperature 0 the agents write the same thought for a query
        if reader == "model":
            self._reader: AnswerReader = CachedReader(calibration_reader(model))
        elif reader == "rule":
            self._reader = CachedReader(RuleReader())
        else:
            self._reader = CachedReader(reader)
        self._auditors: dict[tuple[AgentKind, float | None, str], Auditor] = {}
        self._building = threading.Lock()

    def get(self, agent: AgentKind, p: float | None, method: Method = "ariadne") -> Auditor:
        """The auditor of ``agent`` at ``p`` for ``method``, built on first use."""
        with self._building:  # jobs may run on several threads (run(concurrency=...)); one auditor per key
            return self._build_auditor(agent, p, method)

    def _build_auditor(self, agent: AgentKind, p: float | None, method: Method) -> Auditor:
        key = (agent, p, method)
        if key not in self._auditors:
            base = (agent, p, "ariadne")
            if base not in self._auditors:
                saver = InMemorySaver()
                if agent == "natural":
                    graph = build_natural_agent(self.model, checkpointer=saver, constrained=self._constrained)
                else:
                    graph = build_ground_truth_agent(
                        self.model, agent, p=p, checkpointer=saver, constrained=self._constrained
                    )
                self._auditors[base] = Auditor(
                    graph, decisive=self.decisive, reader=self._reader, **self._auditor_kwargs
                )
            if method != "ariadne":
                gated = self._auditors[base]
                extra: dict[str, Any] = {"decisive": False} if method == "ariadne_ungated" else {}
                if method == "ariadne_rederive":
                    # the agent's own derivation of its call; ``commit`` only evaluates, so it may run live (refused,
                    # a re-derived call would answer "unavailable", which moves the answer without tracking anything)
                    extra = {
                        "decisive": self.decisive,
                        "reader": gated.reader,
                        "tool_calls": "rederive",
                        "tool_call_deriver": coupled_tool_deriver(),
                        "safe_tools": (COMMIT_TOOL,),
                    }
                self._auditors[key] = Auditor(gated.replayer.graph, **self._auditor_kwargs, **extra)
        return self._auditors[key]
