"""Write the "Every option" section of docs/cli.md from the commands themselves, so that it matches ``--help``.

Run ``python docs/scripts/cli_reference.py`` after changing an option; ``tests/test_docs.py`` fails while the page
and the commands differ.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer.main

START = "<!-- cli-reference: start (docs/scripts/cli_reference.py writes this section) -->"
END = "<!-- cli-reference: end -->"
PAGE = Path(__file__).resolve().parents[1] / "cli.md"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(param: Any) -> str:
    flag = bool(getattr(param, "is_flag", False))
    if flag and not param.secondary_opts:
        return "off" if not param.default else "on"
    value = param.default
    if value is None or value == () or callable(value):
        return "-"
    if flag:
        return f"`{param.opts[0] if value else param.secondary_opts[0]}`"
    return f"`{value}`"


def reference() -> str:
    """The section: per command, its help line and a table of its options (names, default, help)."""
    from ariadne_lc.cli import app

    group: Any = typer.main.get_command(app)  # typer's own click: read by duck typing
    said = "Generated from the commands: `ariadne-lc COMMAND --help` says the same."
    lines = [START, "", "## Every option", "", said, ""]
    context = group.context_class(group)
    for name in sorted(group.list_commands(context)):
        command = group.get_command(context, name)
        assert command is not None
        lines += [f"### `ariadne-lc {name}`", "", _cell(command.help or ""), ""]
        rows = []
        for param in command.params:
            if param.param_type_name == "argument":
                what = _cell(getattr(param, "help", "") or "")
                rows.append(f"| `{str(param.name).upper()}` (argument) | - | {what} |")
            elif param.param_type_name == "option" and not param.hidden:
                names = " / ".join(f"`{o}`" for o in (*param.opts, *param.secondary_opts))
                rows.append(f"| {names} | {_default(param)} | {_cell(param.help or '')} |")
        if rows:
            lines += ["| option | default | what it does |", "|---|---|---|", *rows, ""]
    lines.append(END)
    return "\n".join(lines) + "\n"


def rewritten(page: str) -> str:
    """``page`` with its section replaced by :func:`reference` (appended when it has none)."""
    if START in page:
        head, _, rest = page.partition(START)
        _, _, tail = rest.partition(END)
        return head + reference().rstrip("\n") + tail
    return page.rstrip("\n") + "\n\n" + reference()


if __name__ == "__main__":
    PAGE.write_text(rewritten(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    sys.stdout.write(f"wrote {PAGE}\n")
