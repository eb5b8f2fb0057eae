"""The command needs the ``cli`` extra, and says so when it is missing."""

from __future__ import annotations

import subprocess
import sys


def test_missing_typer_names_the_cli_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['typer'] = None  # as if the cli extra were not installed\n"
        "import ariadne_lc  # the library itself does not need it\n"
        "try:\n"
        "    import ariadne_lc.cli\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc.extra, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("MissingExtraError cli "), out.stdout + out.stderr
    assert "pip install 'ariadne-lc[cli]'" in out.stdout
