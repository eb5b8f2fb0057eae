"""``audit --dry-run`` warns, before any model call, when a planned audit cannot run (issue 41): a sub-agent whose own
graph the auditor cannot find."""

from __future__ import annotations

from pathlib import Path

import pytest

from ariadne_lc import Auditor
from ariadne_lc.audit import DEFAULT_INTERVENTIONS
from ariadne_lc.cli._dry_run import cannot_run, dry_run_audit
from ariadne_lc.store import SQLiteTraceStore
from tests.test_coverage import _REGISTRY, _hidden_sub_agent


def test_a_sub_agent_whose_graph_cannot_be_found_is_warned_about_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph, store = _hidden_sub_agent()
    traces = store.list_traces()
    [sub] = [t for t in traces if t.parent is not None]
    [top] = [t for t in traces if t.parent is None]
    auditor = Auditor(graph)
    assert cannot_run(auditor, top) is None
    why = cannot_run(auditor, sub)
    assert why is not None and "agents=" in why and "researcher" in why
    assert cannot_run(Auditor(graph, agents={"researcher": _REGISTRY.agent}), sub) is None
    saved = SQLiteTraceStore(tmp_path / "traces.db")
    for t in traces:
        saved.put(t)
    dry_run_audit(tmp_path / "traces.db", None, list(DEFAULT_INTERVENTIONS), None, None, auditor)
    out = " ".join(capsys.readouterr().out.split())
    assert f"warning: the audits of trace {sub.trace_id} (researcher) cannot run" in out
    assert f"trace {top.trace_id}" not in out
