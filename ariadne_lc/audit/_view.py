"""What an :class:`~ariadne_lc.Auditor` is made of, read-only: its replayer, critic, scorer, readers, rule and
sinks' counters (a base class: the auditor holds ``_runner``, ``_rule`` and ``sinks``)."""

from __future__ import annotations

from ariadne_lc.audit._assemble import Rule
from ariadne_lc.audit._run import Runner
from ariadne_lc.audit._sinks import AuditSink, ScoreWriteBackSink
from ariadne_lc.interventions import Critic
from ariadne_lc.interventions.implied import AnswerReader
from ariadne_lc.records import ReplayMode
from ariadne_lc.replay import Replayer, ToolCallDeriver
from ariadne_lc.scoring import SimilarityScorer

__all__ = ["AuditorView"]


class AuditorView:
    """The auditor's components and settings, as properties."""

    _runner: Runner
    _rule: Rule
    sinks: tuple[AuditSink, ...]

    @property
    def replayer(self) -> Replayer:
        return self._runner.replayer

    @property
    def critic(self) -> Critic:
        return self._runner.critic

    @property
    def paraphraser(self) -> Critic:
        return self._runner.paraphraser

    @property
    def scorer(self) -> SimilarityScorer:
        return self._runner.scorer

    @property
    def reader(self) -> AnswerReader | None:
        """Who reads the answers thoughts imply for the decisiveness gate; ``None`` with the gate off."""
        gate = self._runner.gate
        return None if gate is None else gate.reader

    @property
    def decisive(self) -> bool:
        """Whether the decisiveness gate is on."""
        return self._runner.gate is not None

    @property
    def replay_mode(self) -> ReplayMode:
        """What replays do with the audited step's own tool calls: ``recorded`` or ``rederive``."""
        return self.replayer.tool_calls

    @property
    def tool_call_deriver(self) -> ToolCallDeriver | None:
        """Who re-derives the step's tool calls (``rederive`` mode); ``None`` in ``recorded`` mode."""
        return self.replayer.tool_call_deriver

    @property
    def tau(self) -> float:
        return self._rule.tau

    @property
    def lam(self) -> int:
        return self._rule.lam

    @property
    def min_strength(self) -> float | None:
        return self._rule.min_strength

    @property
    def writeback_errors(self) -> int:
        """Score write-backs that failed so far (over every :class:`~ariadne_lc.audit.ScoreWriteBackSink`)."""

        return sum(s.errors for s in self.sinks if isinstance(s, ScoreWriteBackSink))
