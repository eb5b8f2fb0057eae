"""A serving-and-auditing process for the crash-resume test (run it as a module from the repo root).

``python -m tests.online.crash_worker record DIR N``: serve N runs of the faithful agent with the
online auditor attached (SQLite checkpointer and job store in DIR), wait until every sampled run is
persisted, then audit with a deliberately slow audit model until killed.

``python -m tests.online.crash_worker resume DIR``: a fresh process on the same files: resume the
pending jobs (including those the killed process left ``running``), wait for all of them, shut down,
and print a JSON summary.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from ariadne_lc.online import OnlineAuditor
from tests.helpers import ONE_AUDIT, build_agent
from tests.online.support import question, slow_model

REPLAY_DELAY = 0.4


def main(mode: str, folder: Path, n: int) -> int:
    conn = sqlite3.connect(folder / "checkpoints.db", check_same_thread=False)
    graph = build_agent(slow_model(replay_delay=REPLAY_DELAY), "create_agent", SqliteSaver(conn))
    online = OnlineAuditor(
        graph, jobs=folder / "jobs.db", sample_rate=1.0, max_concurrency=2, tick_interval=0.05, lease=30.0, **ONE_AUDIT
    )
    if mode == "record":
        for i in range(n):
            graph.invoke(
                {"messages": [("user", question(i))]},
                {"configurable": {"thread_id": f"user-{i}"}, "callbacks": [online.handler]},
            )
        assert online.force_flush(60), "the sampled runs were not persisted"
        print(f"persisted {online.stats.persisted}", flush=True)
        online.start()
        while True:  # until SIGKILL
            time.sleep(1)
    online.start()
    flushed = online.force_flush(120)
    report = online.shutdown()
    print(json.dumps({"flushed": flushed, "clean": report.clean, "audited": online.stats.audited}), flush=True)
    return 0 if flushed and report.clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0))
