"""docs/deploy.md's LangGraph Server section works as written, in a fresh folder."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from langgraph_sdk import get_sync_client

from ariadne_lc import SQLiteResultStore, SQLiteTraceStore
from tests.server.conftest import (
    OFFLINE_ENV,
    REPO,
    free_port,
    recorded_turns,
    server_env,
    start_langgraph_dev,
    stop,
    wait_until_up,
)

SECTION = "## LangGraph Server"


def _blocks() -> dict[str, list[str]]:
    text = (REPO / "docs" / "deploy.md").read_text()
    section = text[text.index(SECTION) :]
    following = section.find("\n## ", len(SECTION))
    section = section if following < 0 else section[:following]
    out: dict[str, list[str]] = {}
    for lang, body in re.findall(r"```(\w+)\n(.*?)```", section, re.S):
        out.setdefault(lang, []).append(body)
    return out


def test_the_documented_deployment_records_and_audits(tmp_path: Path) -> None:
    blocks = _blocks()
    (tmp_path / "langgraph.json").write_text(blocks["json"][0])
    (tmp_path / "agent.py").write_text(blocks["python"][0])
    port = free_port()
    start, audit = [line for line in blocks["bash"][0].splitlines() if line.strip()]
    assert start.startswith("langgraph dev") and "--port 2024" in start
    process = start_langgraph_dev(tmp_path, port, server_env({}))
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(process, url, tmp_path)
        client = get_sync_client(url=url, api_key=None)
        try:
            thread = client.threads.create()["thread_id"]
            client.runs.wait(
                thread, "agent", input={"messages": [{"role": "user", "content": "How many apples in 6 boxes of 7?"}]}
            )
        finally:
            client.close()
        store = SQLiteTraceStore(tmp_path / "traces.db")
        (trace,) = recorded_turns(store, thread)
        assert trace.steps and trace.steps[0].checkpoint.thread_id == thread
        args = shlex.split(audit.replace("2024", str(port)))
        assert args[0] == "ariadne-lc"
        command = [str(Path(sys.executable).with_name("ariadne-lc")), *args[1:]]
        env = {**server_env({}), **OFFLINE_ENV}
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr + done.stdout
        results = SQLiteResultStore(tmp_path / "reports" / "server" / "results.db").list_results()
        assert results and {r.thread_id for r in results} == {thread}
        # the agent follows its thought (no violation on thought->answer) but computes its total from the plan, not
        # from the calculator's output: the default plan audits that output too, and flags it
        thought = [r for r in results if r.link == "thought->answer"]
        assert any(r.status == "scored" for r in thought) and not any(r.violation for r in thought)
        output = [r for r in results if r.link == "observation->answer" and r.status == "scored"]
        assert output and all(r.violation for r in output)
        assert all(r.status in ("scored", "not_applicable") for r in results)
    finally:
        stop(process)
