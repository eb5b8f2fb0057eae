"""A sub-agent in LangChain's recommended pattern (tests/subagent_pattern.py): its graph is a module global that the
calling tool's function reads, and its runs are audited on that graph (issue 39 item 2, issue 41 item 5)."""

from __future__ import annotations

from typing import Any

import pytest

from ariadne_lc import Auditor
from ariadne_lc.errors import ConfigurationError, SubgraphNotReplayableError
from tests import subagent_pattern
from tests.harness_agents import QUESTIONS


def _run() -> tuple[Any, list[Any]]:
    main = subagent_pattern.build_main()
    before = {t.trace_id for t in subagent_pattern.STORE.list_traces()}
    for i, question in enumerate(QUESTIONS):
        main.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": f"sub-{id(main)}-{i}"}})  # type: ignore[attr-defined]
    return main, [t for t in subagent_pattern.STORE.list_traces() if t.trace_id not in before]


def test_a_module_level_sub_agent_is_found_through_the_tools_globals_and_audited() -> None:
    main, traces = _run()
    assert sorted({t.agent_name for t in traces}) == ["LangGraph", "researcher"]
    results = Auditor(main).audit_batch(traces).results
    researcher = [r for r in results if r.agent_name == "researcher"]
    assert researcher and not [r.error for r in results if r.status == "failed"]
    scored = [r for r in researcher if r.status == "scored" and not r.control]
    assert {r.link for r in scored} >= {"thought->action", "observation->answer"}
    assert not any(r.violation for r in scored)  # the researcher is faithful on every link
    assert all(r.input_checked for r in scored)


def test_a_sub_agent_graph_can_be_handed_over_and_a_missing_one_is_named() -> None:
    main, traces = _run()
    given = Auditor(main, agents={"researcher": subagent_pattern.researcher}).audit_batch(traces).results
    assert not [r for r in given if r.status == "failed"]
    with pytest.raises(ConfigurationError, match=r"agents\['researcher'\] must be the agent's compiled graph"):
        Auditor(main, agents={"researcher": "not a graph"})


def test_the_refusal_says_where_it_looked_and_how_to_hand_the_graph_over(monkeypatch: pytest.MonkeyPatch) -> None:
    main, traces = _run()
    monkeypatch.setattr(subagent_pattern, "researcher", None)  # the tool reaches no graph now
    failed = [r for r in Auditor(main).audit_batch(traces).results if r.status == "failed"]
    assert failed and all(r.error_type == SubgraphNotReplayableError.__name__ for r in failed)
    error = failed[0].error or ""
    assert "module globals" in error and "Auditor(graph, agents={'researcher'" in error


def test_two_levels_of_module_level_sub_agents_are_each_audited_on_their_own_graph() -> None:
    """top -> (tool) manager -> (tool) clerk: the clerk's graph is found in the manager's tool, below the manager's."""
    from tests import subagent_nested

    top = subagent_nested.build_top()
    before = {t.trace_id for t in subagent_nested.STORE.list_traces()}
    for i, question in enumerate(QUESTIONS):
        top.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": f"nested-{id(top)}-{i}"}})
    traces = [t for t in subagent_nested.STORE.list_traces() if t.trace_id not in before]
    assert sorted({t.agent_name for t in traces}) == ["LangGraph", "clerk", "manager"]
    report = Auditor(top).audit_batch(traces)
    assert not [r.error for r in report.results if r.status == "failed"]
    coverage = report.coverage
    assert coverage is not None and coverage.rate == 1.0 and set(coverage.by_agent) == {"LangGraph", "clerk", "manager"}
    scored = [r for r in report.results if r.status == "scored" and not r.control]
    assert {r.agent_name for r in scored} == {"LangGraph", "clerk", "manager"}
    assert not any(r.violation for r in scored) and all(r.input_checked for r in scored)
