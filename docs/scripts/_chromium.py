"""Headless Chromium screenshots for the documentation's pictures (report_screenshot.py, phoenix_screenshot.py).

One place finds the browser and says how to install it when it is missing, so every picture script fails the same
clear way. Chromium's ``--screenshot`` captures the window, not the whole page: the window's height is the picture's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["INSTALL_HINT", "find_chromium", "screenshot"]

INSTALL_HINT = (
    "headless Chromium is needed and was not found. Install it with `apt-get update && apt-get install -y chromium` "
    "(Debian, Ubuntu: the package may be `chromium-browser`), or point CHROMIUM at a Chromium or Chrome binary"
)
_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str:
    """The browser: ``$CHROMIUM`` when set, else the first of the usual names on PATH.

    Raises:
        SystemExit: There is none, with the way to install it.
    """
    named = os.environ.get("CHROMIUM")
    if named:
        if shutil.which(named) is None:
            raise SystemExit(f"CHROMIUM={named} is not an executable; {INSTALL_HINT}")
        return named
    for name in _NAMES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise SystemExit(INSTALL_HINT)


def screenshot(url: str, out: Path, *, width: int, height: int, wait_ms: int = 20000) -> None:
    """Load ``url`` in a fresh headless profile and write a ``width`` x ``height`` PNG to ``out``.

    ``wait_ms`` is virtual time: Chromium fast-forwards timers and waits for the network to go idle, so a page that
    renders with script (Phoenix) is drawn before the picture is taken, and a static page is not slowed down.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)  # a stale picture must not pass for a new one
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run(
            [
                find_chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--virtual-time-budget={wait_ms}",
                f"--screenshot={out}",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    if run.returncode != 0 or not out.is_file():
        raise SystemExit(f"Chromium did not write {out} (exit {run.returncode}):\n{run.stderr[-2000:]}")
    print(f"wrote {out} ({width}x{height}, {url})")
