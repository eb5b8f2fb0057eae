"""The public surface of ``ariadne_lc.bypass``, and the lazy import of the ``whitebox`` extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ariadne_lc.bypass as bypass
from ariadne_lc.bypass import BypassMonitor, WhiteboxNotInstalledError
from ariadne_lc.errors import AriadneError, MissingExtraError

EXPECTED = {
    "BypassError",
    "BypassExample",
    "BypassInputError",
    "BypassMonitor",
    "BypassReport",
    "BypassResult",
    "ExampleLayoutError",
    "LayerSpan",
    "ModelLoadError",
    "SpanMetrics",
    "WhiteboxModel",
    "WhiteboxNotInstalledError",
    "export_bypass_result",
    "load_model",
    "read_examples",
    "run_bypass_command",
}


def test_all_is_sorted_complete_and_importable() -> None:
    assert bypass.__all__ == sorted(bypass.__all__)
    assert set(bypass.__all__) >= EXPECTED
    for name in bypass.__all__:
        assert getattr(bypass, name) is not None


def test_every_error_is_an_ariadne_error() -> None:
    for name in bypass.__all__:
        obj = getattr(bypass, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, bypass.BypassError) and issubclass(obj, AriadneError)


def test_import_does_not_pull_in_torch() -> None:
    code = "import sys, ariadne_lc.bypass; print('torch' in sys.modules, 'transformers' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("missing", ["torch", "transformers"])
def test_missing_extra_is_named_when_the_monitor_is_used(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # makes `import <missing>` raise ImportError
    with pytest.raises(WhiteboxNotInstalledError, match=r"pip install 'ariadne-lc\[whitebox\]'") as info:
        BypassMonitor()
    assert isinstance(info.value, MissingExtraError) and isinstance(info.value, ImportError)
    assert info.value.missing == missing
