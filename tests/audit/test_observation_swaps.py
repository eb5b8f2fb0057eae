"""Several other values per tool output (``Auditor(observation_swaps=k)``): each its own ``observation->answer``
audit, the swapper's value swapped again for the next one, a value already tried never replayed twice.

The scripted agents of ``tests/audit/test_links.py``: after the tool they answer with its output
(observation-faithful) or with the question's product (observation-unfaithful).
"""

from __future__ import annotations

import pytest

from ariadne_lc import Auditor, InterventionOptions
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions.observations import ObservationEdit
from ariadne_lc.online._jobs import result_key
from tests.audit.test_links import RUNS, _create_agent, _on


def test_each_output_gets_k_distinct_values_and_a_faithful_answer_tracks_every_one() -> None:
    graph, trace = _create_agent("thought", "observation")
    before = RUNS.get("multiply", 0)
    results = _on(Auditor(graph, observation_swaps=3).audit(trace, interventions=["observation_swap"]),
                  "observation->answer")  # fmt: skip
    assert RUNS.get("multiply", 0) == before  # served, never run
    assert [r.observation.variant for r in results if r.observation] == [0, 1, 2]
    values = [r.observation.swapped for r in results if r.observation]
    assert values == ["140", "182", "237"] and len(set(values)) == 3  # 108 + 30%, again, again
    assert all(r.status == "scored" and not r.violation and r.answer_changed for r in results)
    assert len({result_key(r) for r in results}) == 3  # a job store keeps all three


def test_an_unfaithful_answer_is_a_violation_on_every_value() -> None:
    graph, trace = _create_agent("thought", "question")
    auditor = Auditor(graph, intervention=InterventionOptions(observation_swaps=2))
    results = _on(auditor.audit(trace, interventions=["observation_swap"]), "observation->answer")
    assert [(r.status, r.violation) for r in results] == [("scored", True), ("scored", True)]


class _Flip:
    """A swapper whose second swap gives the first value back (a yes/no flipped twice)."""

    name = "flip"

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        return ObservationEdit(swapped="140" if output == "108" else "108", method="flip")


def test_a_value_already_tried_is_not_replayed_again() -> None:
    graph, trace = _create_agent("thought", "observation")
    results = _on(
        Auditor(graph, swapper=_Flip(), observation_swaps=2).audit(trace, interventions=["observation_swap"]),
        "observation->answer",
    )
    assert [r.status for r in results] == ["scored", "not_applicable"]
    assert "repeats one already tried" in (results[1].intervention_method or "")


def test_fewer_than_one_value_is_refused_with_what_to_do_instead() -> None:
    with pytest.raises(ConfigurationError, match=r"observation_swaps must be at least 1.*leave observation_swap out"):
        InterventionOptions(observation_swaps=0)


class _Nothing:
    """A swapper that finds no other value (free text for a rule swapper)."""

    name = "nothing"

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        return ObservationEdit(swapped=None, method="no value to swap")


def test_an_output_with_no_other_value_still_names_its_call_so_job_stores_key_it_apart() -> None:
    graph, trace = _create_agent("thought", "observation")
    [result] = _on(Auditor(graph, swapper=_Nothing()).audit(trace, interventions=["observation_swap"]),
                   "observation->answer")  # fmt: skip
    assert result.status == "not_applicable" and result.observation is not None
    assert result.observation.swapped is None and result.observation.call_id == trace.step(0).tool_calls[0].id
    assert result_key(result) == result.plan_key == "0:output:call-plan:observation->answer:observation_swap:0"
    other = result.model_copy(update={"plan_key": "0:output:call-other:observation->answer:observation_swap:0"})
    assert result_key(other) != result_key(result)  # two calls of one step never share a key
