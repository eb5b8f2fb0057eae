"""The plan edits of docs/calibration/plan-edits: every plan of ``plans.jsonl`` edited by the default plan critic.

Each plan is one step of an agent (its question, the text it wrote before its call, its tools and the call it made),
phrased the way hosted chat models and the local Qwen models phrase plans, in ``create_agent``, a deep agent and the
sub-agent patterns. The script makes the ``plan_swap`` edits the auditor would make of it (:class:`PlanCritic` given
the step's tools and call, as the auditor gives them) and writes them to ``edits.jsonl``, and a table of them with
their review (``review.jsonl``: a person's reading of each edit) to ``summary.md``. ``tests/interventions/
test_plan_corpus.py`` checks that the committed edits are the ones the critic makes now, and that each was reviewed.

    python docs/scripts/plan_edits.py
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ariadne_lc.interventions.actions import ToolSpec
from ariadne_lc.interventions.plans import PlanCritic

HERE = Path(__file__).resolve().parents[1] / "calibration" / "plan-edits"


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (HERE / "plans.jsonl").read_text().splitlines() if line.strip()]


def plans() -> list[dict[str, Any]]:
    """The committed plans, in order: the rows with a thought and a call (a model asked for a plan that called a tool
    without one, or answered without a call, is kept in the file as asked, not as a plan)."""
    return [row for row in _rows() if not row["source"].endswith("-no-plan")]


def edits_of(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan's edits as the auditor's default critic makes them, or why there is none."""
    tools = [ToolSpec(name=t["name"], description=t["description"], args=tuple(t["args"])) for t in plan["tools"]]
    calls = [(c["name"], c["args"]) for c in plan["calls"]]
    by_argument: dict[str, dict[str, list[str]]] = {}
    for name, args in calls:
        for arg, value in args.items():
            by_argument.setdefault(name, {}).setdefault(arg, []).append(str(value))
    critic = PlanCritic(tools, calls=calls, by_argument=by_argument)
    found = critic.candidates(plan["thought"], "plan_swap", query=plan["query"])
    first = critic.intervene(plan["thought"], "plan_swap", query=plan["query"])
    return {
        "id": plan["id"],
        "thought": plan["thought"],
        "edits": [{"text": e.intervened, "method": e.method} for e in found],
        "none": None if first.applicable else first.method,
        "not_read_back": list(first.rejections),
    }


def main() -> None:
    made = [edits_of(p) for p in plans()]
    (HERE / "edits.jsonl").write_text("".join(json.dumps(m) + "\n" for m in made))
    review_path = HERE / "review.jsonl"
    review = {}
    if review_path.exists():
        review = {(r["id"], r["text"]): r["verdict"] for r in map(json.loads, review_path.read_text().splitlines())}
    verdicts: Counter[str] = Counter()
    lines = ["| id | source | harness | plan | edits (review) |", "|---|---|---|---|---|"]

    def cell(text: str) -> str:
        return " ".join(text.split()).replace("|", "\\|")

    for plan, m in zip(plans(), made, strict=True):
        cells = []
        for e in m["edits"]:
            verdict = review.get((m["id"], e["text"]), "unreviewed")
            verdicts[verdict] += 1
            cells.append(f"{cell(e['text'])} ({e['method']}; {verdict})")
        shown = "<br>".join(cells) or f"none: {cell(m['none'])}"
        lines.append(f"| {m['id']} | {plan['source']} | {plan['harness']} | {cell(plan['thought'])} | {shown} |")
    with_edit = sum(bool(m["edits"]) for m in made)
    asked = Counter(r["source"].split("-")[0] for r in _rows() if "asked" in r)
    called = Counter(r["source"].split("-")[0] for r in plans() if r["source"].endswith("-recorded"))
    described = Counter(r["source"].split("-")[0] for r in plans() if r["source"].endswith("-described"))
    qwen = "; ".join(
        f"{model}: {called[model]} of {n} questions got a plan before a call, {described[model]} a plan that describes "
        "the call in words instead of making it"
        for model, n in sorted(asked.items())
    )
    head = [
        "# Plan edits a person would accept, or none",
        "",
        f"{len(made)} plans (`plans.jsonl`), {with_edit} with at least one edit, {sum(verdicts.values())} edits in "
        f"all; reviewed: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) + ".",
        "Written by `docs/scripts/plan_edits.py`; each edit read by a person (`review.jsonl`)."
        + (f" Local models asked for plans (`docs/scripts/plan_edits_qwen.py`): {qwen}." if qwen else ""),
        "",
    ]
    (HERE / "summary.md").write_text("\n".join(head + lines) + "\n")
    print("\n".join(head))


if __name__ == "__main__":
    main()
