"""Headless Chromium screenshots for the documentation's pictures (report_screenshot.py, phoenix_screenshot.py).

One place finds the browser and says how to install it when it is missing, so every picture script fails the same
clear way. Chromium's ``--screenshot`` captures the window, not the whole page: the window's height is the picture's.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["INSTALL_HINT", "find_chromium", "screenshot", "screenshot_after"]

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


def screenshot_after(
    url: str, out: Path, *, width: int, height: int, ready: str, action: str, done: str, timeout: float = 90
) -> None:
    """Like :func:`screenshot`, for a page that must be clicked first: open ``url``, wait until the JavaScript
    expression ``ready`` is true, run ``action`` (a click), wait until ``done`` is true, then take the picture.

    Drives Chromium through the DevTools protocol on a loopback port (``websockets``, which langsmith and
    langgraph-sdk already bring); ``--screenshot`` cannot click.
    """
    import httpx
    from websockets.sync.client import connect

    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        browser = subprocess.Popen(
            [
                find_chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + 30
            while not (port_file.is_file() and port_file.read_text().strip()):
                if time.monotonic() > deadline or browser.poll() is not None:
                    raise SystemExit("Chromium did not open its DevTools port")
                time.sleep(0.2)
            port = int(port_file.read_text().split()[0])
            pages = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
            socket_url = next(p["webSocketDebuggerUrl"] for p in pages if p.get("type") == "page")
            with connect(socket_url, max_size=None) as ws:
                session = _DevTools(ws)
                session.call(
                    "Emulation.setDeviceMetricsOverride",
                    width=width,
                    height=height,
                    deviceScaleFactor=1,
                    mobile=False,
                )
                session.call("Page.navigate", url=url)
                session.wait_for(ready, timeout)
                session.evaluate(action)
                session.wait_for(done, timeout)
                time.sleep(1.0)  # let the expanded panel finish its transition
                shot = session.call("Page.captureScreenshot", format="png")
            out.write_bytes(base64.b64decode(shot["data"]))
        finally:
            browser.terminate()
            try:
                browser.wait(timeout=15)
            except subprocess.TimeoutExpired:
                browser.kill()
    print(f"wrote {out} ({width}x{height}, {url})")


class _DevTools:
    """The few DevTools protocol calls a picture needs, one at a time over one page's socket."""

    def __init__(self, ws: Any) -> None:
        self._ws = ws
        self._next = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        self._ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv(timeout=60))
            if message.get("id") == self._next:
                if "error" in message:
                    raise SystemExit(f"DevTools {method}: {message['error']}")
                return dict(message.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"Boolean({expression})"):
            if time.monotonic() > deadline:
                raise SystemExit(f"the page never satisfied: {expression}")
            time.sleep(0.5)
