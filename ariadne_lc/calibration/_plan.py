"""The plan of a calibration: which agent is asked which question, on which half, in what order.

:func:`plan_jobs` splits the questions in two halves per domain (:func:`split_queries`). On the *calibrate* half the
coupled and the bypass agent run (their audits give the false-alarm and miss rates); on the *validate* half the
mixtures run at each p, and the natural agent beside them. Jobs are interleaved query by query, so a run stopped
early (budget, Ctrl-C, a crash) is still balanced across agents and domains.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ariadne_lc.calibration.agents import FAITHFUL_KINDS, truth_of
from ariadne_lc.calibration.records import AgentKind, Split, Truth
from ariadne_lc.demo import DemoQuery
from ariadne_lc.errors import ConfigurationError

__all__ = ["DEFAULT_PS", "CalibrationJob", "plan_jobs", "split_queries"]

DEFAULT_PS: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The mixture rates validated on the held-out half."""


@dataclass(frozen=True)
class CalibrationJob:
    """One question asked of one agent."""

    agent: AgentKind
    p: float | None
    split: Split
    query: DemoQuery
    reference: bool = True
    """Whether the reference method (when the runner has one) also audits this job."""

    @property
    def truth(self) -> Truth | None:
        """Known by construction for the ground-truth agents; ``None`` for the natural one."""
        if self.agent == "natural":
            return None
        rate = 0.0 if self.agent in FAITHFUL_KINDS else 1.0 if self.agent == "bypass" else self.p
        assert rate is not None
        return truth_of(self.query.question, rate)


def split_queries(queries: Sequence[DemoQuery]) -> dict[str, Split]:
    """Alternate within each domain: the 1st, 3rd, ... question calibrates, the 2nd, 4th, ... validates."""
    seen: dict[str, int] = {}
    out: dict[str, Split] = {}
    for q in queries:
        i = seen.get(q.domain, 0)
        seen[q.domain] = i + 1
        out[q.id] = "calibrate" if i % 2 == 0 else "validate"
    return out


def _interleave(queries: Sequence[DemoQuery]) -> list[DemoQuery]:
    by_domain: dict[str, list[DemoQuery]] = {}
    for q in queries:
        by_domain.setdefault(q.domain, []).append(q)
    out: list[DemoQuery] = []
    for i in range(max((len(v) for v in by_domain.values()), default=0)):
        out += [v[i] for v in by_domain.values() if i < len(v)]
    return out


def plan_jobs(
    queries: Sequence[DemoQuery],
    *,
    ps: Sequence[float] = DEFAULT_PS,
    natural: bool = True,
    natural_limit: int | None = None,
    reference_limit: int | None = None,
    extra_agents: Sequence[AgentKind] = (),
    extra_limit: int | None = None,
    mixture_limit: int | None = None,
) -> list[CalibrationJob]:
    """The jobs of a calibration, interleaved so that any prefix is balanced across agents and domains.

    Args:
        queries: the questions; :func:`split_queries` halves them.
        ps: the mixture rates run on the validate half.
        natural: also run the natural agent on the validate half.
        natural_limit: at most this many natural jobs (its multi-turn runs and replays cost several calls each).
        reference_limit: the reference method audits only the jobs of the first this many questions of each half
            (its re-prompt and two judges cost more than all of our audits of a coupled job).
        extra_agents: more faithful agents run on the calibrate half beside coupled and bypass (``coupled_llm``,
            ``coupled_tool``); their false-alarm rates are reported apart.
        extra_limit: at most this many calibrate questions for the extra agents.
        mixture_limit: the mixtures run on the first this many validate questions only (five agents per question:
            the mixtures cost more than the calibrate half).

    Raises:
        ConfigurationError: a p outside [0, 1], or fewer than two questions (nothing to hold out).
    """
    if len(queries) < 2:
        raise ConfigurationError(f"a calibration needs at least 2 questions (one per half), got {len(queries)}")
    for p in ps:
        if not 0.0 <= p <= 1.0:
            raise ConfigurationError(f"mixture rates must be in [0, 1], got {p}")
    splits = split_queries(queries)
    ordered = _interleave(queries)
    calibrate = [q for q in ordered if splits[q.id] == "calibrate"]
    validate = [q for q in ordered if splits[q.id] == "validate"]
    jobs: list[CalibrationJob] = []
    for i in range(max(len(calibrate), len(validate))):
        ref = reference_limit is None or i < reference_limit
        if i < len(calibrate):
            q = calibrate[i]
            jobs += [CalibrationJob(agent, None, "calibrate", q, ref) for agent in ("coupled", "bypass")]
            if extra_limit is None or i < extra_limit:
                jobs += [CalibrationJob(agent, None, "calibrate", q, False) for agent in extra_agents]
        if i < len(validate):
            q = validate[i]
            if mixture_limit is None or i < mixture_limit:
                jobs += [CalibrationJob("mixture", p, "validate", q, ref) for p in ps]
            if natural and (natural_limit is None or i < natural_limit):
                jobs.append(CalibrationJob("natural", None, "validate", q, False))
    return jobs
