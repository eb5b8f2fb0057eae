"""The ``ariadne_lc.server`` surface: complete, importable, and the SDK loaded only when used."""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

import pytest

import ariadne_lc.server
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.server import RemoteAuditor
from tests.server import deployed


def test_all_is_complete_and_importable() -> None:
    names = ariadne_lc.server.__all__  # ruff (RUF022) keeps it in isort order
    public = {n for n, v in vars(ariadne_lc.server).items() if not n.startswith("_") and not isinstance(v, ModuleType)}
    assert len(set(names)) == len(names) and public == set(names)
    for name in names:
        assert getattr(ariadne_lc.server, name) is not None


def test_importing_the_package_does_not_load_the_sdk() -> None:
    code = "import sys, ariadne_lc, ariadne_lc.server; print('langgraph_sdk' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_remote_auditor_audits_the_links_it_is_given() -> None:
    """``RemoteAuditor(links=...)`` reaches its auditor; ``with_links`` gives one on other links (no server needed:
    nothing is read before an audit)."""
    with RemoteAuditor(deployed.polled, "http://127.0.0.1:1", links=["observation->answer"]) as remote:
        assert remote.links == remote.auditor.links == ("observation->answer",)
        other = remote.with_links(["thought->answer"])
        assert other.auditor.links == ("thought->answer",) and other.server is remote.server
        every = ("observation->answer", "thought->answer", "todo->action")
        assert remote.with_links(None).links == every  # every link it can
        with pytest.raises(ConfigurationError, match="AriadneMiddleware"):
            remote.with_links(["thought->action"])
