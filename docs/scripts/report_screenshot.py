"""Regenerate the README's picture of the demo report: a headless Chromium screenshot of ``report.html``.

The picture is made from the report on disk, never drawn by hand, so after ``make demo`` one command brings it up to
date::

    make demo                                   # writes reports/demo/report.{json,md,html}
    .venv/bin/python docs/scripts/report_screenshot.py
    # or: python docs/scripts/report_screenshot.py REPORT.html --out PICTURE.png --width 1300 --height 1800

It needs Chromium (``apt-get update && apt-get install -y chromium``; ``$CHROMIUM`` names another binary) and
nothing from the project: any Python 3 runs it. The window is 1300 pixels wide, the width a reader's browser gives
the report, and as tall as ``--height`` (the top of the report: one row per link and the example audits).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _chromium import screenshot  # a sibling module, found beside this file

REPO = Path(__file__).resolve().parents[2]
DEFAULT_REPORT = REPO / "reports" / "demo" / "report.html"
DEFAULT_OUT = REPO / "docs" / "img" / "demo_report.png"
WIDTH = 1300
HEIGHT = 1800


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("report", nargs="?", type=Path, default=DEFAULT_REPORT, help="the report.html to picture")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the PNG to write")
    parser.add_argument("--width", type=int, default=WIDTH)
    parser.add_argument("--height", type=int, default=HEIGHT)
    args = parser.parse_args(argv)
    report = args.report.resolve()
    if not report.is_file():
        raise SystemExit(f"no report at {report}: run `make demo` first (it writes reports/demo/report.html)")
    screenshot(report.as_uri(), args.out.resolve(), width=args.width, height=args.height, wait_ms=2000)


if __name__ == "__main__":
    main()
