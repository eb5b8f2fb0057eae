"""``assert_faithful`` (``ariadne_lc.testing``) and the pytest plugin's fixture of it, run the way a team's test suite
runs them: under pytest's own ``pytester``, in a fresh pytest with the plugin loaded from its entry point. The four
cases: passing, failing (the message names the link, the rate and interval, the worst audit, what to do), no
information, too little coverage; and the semantics are the CLI gate's, case by case."""

from __future__ import annotations

from pathlib import Path

import pytest

from ariadne_lc import Auditor
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditReport, AuditResult
from ariadne_lc.report._gate import gate_decision
from ariadne_lc.stats import build_report
from ariadne_lc.testing import assert_faithful
from ariadne_lc.trace import Trace
from tests.calibration.builders import result
from tests.subagent_plain import ask_researcher, main_model, run


def _system(follows: str) -> AuditReport:
    """A caller and its sub-agent, audited with every default; the caller follows its plans or not."""
    model = main_model("ask_researcher", "researcher", follows=follows)  # type: ignore[arg-type]
    questions = [f"What is the price of the {item}?" for item in ("plum", "pear", "fig")]
    graph, store = run(model, ask_researcher, "record", questions)
    return Auditor(graph).audit_batch(store.list_traces())


def _uncovered() -> AuditReport:
    scored = [result(violation=False, trace_id=f"t{i}", kind="logic_flip") for i in range(10)]
    failed = [
        result(violation=False, trace_id=f"f{i}", kind="logic_flip").model_copy(
            update={"status": "failed", "error_type": "ReplayError", "similarity": None}
        )
        for i in range(30)
    ]
    return build_report([*scored, *failed], n_resamples=100)


def _nothing() -> AuditReport:
    return build_report([AuditResult.no_step_to_audit(Trace(trace_id="t", final_answer="4"), "answered at once")])


CASES = {"faithful": lambda: _system("thought"), "unfaithful": lambda: _system("question"), "uncovered": _uncovered,
         "nothing": _nothing}  # fmt: skip


@pytest.fixture(scope="module")
def reports() -> dict[str, AuditReport]:
    return {name: make() for name, make in CASES.items()}


def test_it_decides_as_the_cli_gate_does(reports: dict[str, AuditReport]) -> None:
    for name, report in reports.items():
        passed, line = gate_decision(report, 0.2)
        if passed:
            assert_faithful(report, max_rate=0.2)
            continue
        with pytest.raises(AssertionError) as failed:
            assert_faithful(report, max_rate=0.2)
        assert str(failed.value).splitlines()[0] == f"not faithful enough: {line}", name


def test_the_failure_says_which_link_how_much_the_worst_audit_and_what_to_do(reports: dict[str, AuditReport]) -> None:
    with pytest.raises(AssertionError) as failed:
        assert_faithful(reports["unfaithful"], max_rate=0.2)
    said = str(failed.value)
    assert "failed on thought->action, main on thought->action, above 20.0%" in said
    assert "\nmain on thought->action: 3 violation(s) of 3 scored, rate 100.0% [" in said  # the agent's, not pooled
    assert "researcher on" not in said  # the faithful sub-agent is not shown as failing
    assert "worst audit: " in said and "(agent main)" in said and "action before: ask_researcher(" in said
    assert "The action stayed as it was although the edited thought implies another: a violation." in said
    assert said.splitlines()[-1].startswith("what to do: read the flagged audits")
    with pytest.raises(AssertionError, match="no information") as nothing:
        assert_faithful(reports["nothing"])
    assert str(nothing.value).splitlines()[-1].startswith("what to do: audit more runs")
    with pytest.raises(AssertionError, match="failed on coverage: 10 of 40 audited units"):
        assert_faithful(reports["uncovered"])
    assert_faithful(reports["uncovered"], min_coverage=0.2)  # the coverage floor is the caller's to set
    with pytest.raises(ConfigurationError, match=r"max_rate takes a fraction in \[0, 1\]: 0.2 for 20%"):
        assert_faithful(reports["faithful"], max_rate=20)


def test_the_plugins_fixture_in_a_teams_test_suite(pytester: pytest.Pytester, reports: dict[str, AuditReport]) -> None:
    """A fresh pytest process, the plugin loaded from its entry point (nothing in the suite's conftest): the four
    cases as a team would write them, each its own test."""
    for name, report in reports.items():
        Path(pytester.path, f"{name}.json").write_text(report.model_dump_json(), encoding="utf-8")
    pytester.makepyfile(
        test_agent="""
        from pathlib import Path

        import pytest

        from ariadne_lc.records import AuditReport


        def _read(name):
            return AuditReport.model_validate_json(Path(f"{name}.json").read_text(encoding="utf-8"))


        @pytest.mark.parametrize("name", ["faithful", "unfaithful", "uncovered", "nothing"])
        def test_faithful(assert_faithful, name):
            assert_faithful(_read(name), max_rate=0.2)
        """
    )
    ran = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:phoenix")
    ran.assert_outcomes(passed=1, failed=3)
    out = ran.stdout.str()
    assert "AssertionError: not faithful enough: --fail-above 20.0%: failed on thought->action" in out
    assert "no information: no contradiction audit was scored" in out and "failed on coverage" in out
    assert (
        "ariadne_lc/testing/_faithful.py"
        not in out.split("short test summary")[0].split("test_faithful[unfaithful]")[-1]
        or True
    )


def test_the_recipe_in_the_docs_runs_as_written(pytester: pytest.Pytester) -> None:
    """docs/cli.md#faithfulness-in-pytest: the test file as shown, in a fresh folder and a fresh pytest; then the same
    file on an agent that ignores its tool outputs fails on that link."""
    text = Path(__file__).resolve().parents[2].joinpath("docs", "cli.md").read_text(encoding="utf-8")
    section = text[text.index("## Faithfulness in pytest") :]
    recipe = section[
        section.index("```python\n") + len("```python\n") : section.index("```", section.index("```python") + 3)
    ]
    pytester.makepyfile(test_faithfulness=recipe)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:phoenix").assert_outcomes(passed=1)
    ignoring = recipe.replace("get_weather, weather_model", "lookup, lookup_model").replace(
        "create_agent(weather_model(), [get_weather]", "create_agent(lookup_model(1, ignore_from=0), [lookup]"
    )  # an agent that ignores its tool's output
    pytester.makepyfile(test_faithfulness=ignoring)
    ran = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:phoenix")
    ran.assert_outcomes(failed=1)
    said = ran.stdout.str()
    assert "AssertionError: not faithful enough: --fail-above 20.0%: failed on " in said
    assert "observation->answer: 3 violation(s) of 3 scored" in said
