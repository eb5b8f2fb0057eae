"""The per-link calibration on the real local model (SmolLM2-135M), three questions.

What the small model writes is not checked for sense, only what holds by construction whatever it writes: the
thought is the model's own, every agent's run ends in a tool-backed or question-backed answer, the unfaithful agents
are violations on every scored contradiction, the observation-faithful answer follows the swapped output, and the
action link runs no tool.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ariadne_lc.calibration.link_runner import LinkRunConfig, load_sessions, run_link_calibration
from ariadne_lc.calibration.link_summary import write_summary
from ariadne_lc.local import LocalModelServer


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LocalModelServer]:
    with LocalModelServer() as server:
        yield server


def test_link_calibration_on_smollm2(smollm2: LocalModelServer, tmp_path: Path) -> None:
    config = LinkRunConfig(model="smollm2", questions=3)
    jobs = run_link_calibration(smollm2.chat_model(max_tokens=96), tmp_path, config)
    assert len(jobs) == 12 and all(j.error is None for j in jobs)
    for job in jobs:
        assert job.thought and job.answer and job.answer.startswith("The answer is ")
        scored = [r for r in job.results if r.status == "scored" and not r.control]
        for r in scored:
            assert r.link == job.link
            if job.truth == "unfaithful":
                assert r.violation, (job.agent, r.intervention_type, r.intervened_thought)
            if job.agent == "observation_faithful":
                assert r.observation is not None and not r.violation
                assert r.counterfactual_answer == f"The answer is {r.observation.swapped}."
            if job.link == "thought->action":
                assert r.tools_live == 0 and r.action is not None
    for agent in ("observation_faithful", "observation_unfaithful"):
        assert sum(r.status == "scored" for j in jobs if j.agent == agent for r in j.results if not r.control) == 3
    summary = write_summary(tmp_path, jobs, config, load_sessions(tmp_path))
    assert summary["links"]["observation->answer"]["FA"] == {**summary["links"]["observation->answer"]["FA"], "k": 0}
    assert summary["links"]["thought->action"]["M"]["k"] == 0
