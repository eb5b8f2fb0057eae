"""``ariadne-lc audit --server URL --assistant NAME --graph mod:attr``, run as a user runs it, from a fresh folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from ariadne_lc import SQLiteResultStore
from ariadne_lc.online import SQLiteJobStore
from tests.server.conftest import OFFLINE_ENV, Server, free_port, server_env
from tests.server.test_remote_audit import QUESTION, _ask, _snapshot


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("ariadne-lc")), "audit", *args]
    env = {k: v for k, v in server_env({}).items() if k != "ARIADNE_TRACES"}
    return subprocess.run(command, cwd=folder, env={**env, **OFFLINE_ENV}, capture_output=True, text=True, timeout=600)


def test_audit_server_command_from_a_fresh_folder(langgraph_server: Server, tmp_path: Path) -> None:
    thread = _ask(langgraph_server, "unfaithful", QUESTION)
    before = _snapshot(langgraph_server, thread)
    shutil.copy(langgraph_server.folder / "deployed.py", tmp_path / "deployed.py")  # the user's project
    done = _cli(
        tmp_path,
        "--server", langgraph_server.url,
        "--assistant", "unfaithful",
        "--graph", "deployed:unfaithful",
        "--interventions", "logic_flip",
        "--output", "out",
        "--allow-unchecked",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "nothing written to the server" in done.stdout
    results = SQLiteResultStore(tmp_path / "out" / "results.db").list_results()
    mine = [r for r in results if r.thread_id == thread]
    assert [r.violation for r in mine] == [True]
    assert json.loads((tmp_path / "out" / "report.json").read_text())
    assert _snapshot(langgraph_server, thread) == before


def test_audit_server_command_when_the_server_is_down(tmp_path: Path, langgraph_server: Server) -> None:
    shutil.copy(langgraph_server.folder / "deployed.py", tmp_path / "deployed.py")
    url = f"http://127.0.0.1:{free_port()}"
    done = _cli(tmp_path, "--server", url, "--assistant", "faithful", "--graph", "deployed:faithful")
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and url in lines[0] and "langgraph dev" in lines[0]


def test_poll_command_once_audits_the_assistants_new_turns(langgraph_server: Server, tmp_path: Path) -> None:
    thread = _ask(langgraph_server, "polled", QUESTION)
    shutil.copy(langgraph_server.folder / "deployed.py", tmp_path / "deployed.py")
    command = [str(Path(sys.executable).with_name("ariadne-lc")), "poll", "--server", langgraph_server.url]
    command += ["--allow-unchecked"]
    command += ["--assistant", "polled", "--graph", "deployed:polled", "--jobs", "jobs.db", "--sample-rate", "1"]
    env = {k: v for k, v in server_env({}).items() if k != "ARIADNE_TRACES"}
    done = subprocess.run([*command, "--once"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout
    store = SQLiteJobStore(tmp_path / "jobs.db")
    results = store.list_results()
    verdicts = [r.violation for r in results if r.thread_id == thread]
    assert verdicts and all(verdicts)  # the default plan: its thought and its tool output, both ignored
    again = subprocess.run([*command, "--once"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert len(store.list_results()) == len(results)  # nothing audited twice
    store.close()


def test_poll_command_audits_only_the_chosen_links(langgraph_server: Server, tmp_path: Path) -> None:
    """``poll --link``: the results of the polled turns carry only the link asked for, and so does each job's plan."""
    thread = _ask(langgraph_server, "polled", QUESTION)
    shutil.copy(langgraph_server.folder / "deployed.py", tmp_path / "deployed.py")
    command = [str(Path(sys.executable).with_name("ariadne-lc")), "poll", "--server", langgraph_server.url]
    command += ["--allow-unchecked"]
    command += ["--assistant", "polled", "--graph", "deployed:polled", "--jobs", "jobs.db", "--sample-rate", "1"]
    command += ["--interventions", "logic_flip,observation_swap,rerun", "--link", "observation->answer", "--once"]
    env = {k: v for k, v in server_env({}).items() if k != "ARIADNE_TRACES"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout
    store = SQLiteJobStore(tmp_path / "jobs.db")
    mine = [r for r in store.list_results() if r.thread_id == thread]
    assert sorted((r.intervention_type, r.link, r.status) for r in mine) == [
        ("observation_swap", "observation->answer", "scored"),
        ("rerun", "observation->answer", "scored"),
    ]
    assert {j.plan.links for j in store.list_jobs() if j.plan} == {("observation->answer",)}
    store.close()
