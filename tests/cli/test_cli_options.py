"""Every command's parameters as typer hands them to click: names, flags, help, types, choices, defaults.

``tests/cli/cli_options.json`` is the command line's contract, taken before the commands moved out of ``register()``
into module-level functions: a change of a flag, its help, its choices or its default shows here as a
diff.  Regenerate it only for a deliberate change of the command line:
``python -m tests.cli.test_cli_options > tests/cli/cli_options.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("cli_options.json")


def _param(p: Any, ctx: Any) -> dict[str, Any]:
    record = p.get_help_record(ctx)          # the line --help prints: flags with metavar, help with choices/default
    return {"name": p.name, "kind": type(p).__name__, "opts": list(p.opts), "secondary_opts": list(p.secondary_opts),
            "required": p.required, "multiple": p.multiple, "nargs": p.nargs,
            # an enum default by its value: which enum class holds the choices is no part of the command line
            "default": None if callable(p.default) else repr(getattr(p.default, "value", p.default)),
            "hidden": getattr(p, "hidden", False),
            "is_flag": getattr(p, "is_flag", False), "metavar": p.metavar, "min": getattr(p, "min", None),
            "max": getattr(p, "max", None), "help": getattr(p, "help", None),
            "help_record": list(record) if record else None}


def command_tree() -> dict[str, Any]:
    """``{command path: {help, params}}`` for every command and group of ``graphlink``."""
    import typer.main

    from graphlink.cli import app

    out: dict[str, Any] = {}

    def walk(cmd: Any, path: str) -> None:          # typer's own click: duck-typed
        ctx = cmd.context_class(cmd, info_name=path.rpartition(" ")[2])
        out[path] = {"help": cmd.help, "short_help": cmd.short_help, "hidden": cmd.hidden,
                     "no_args_is_help": getattr(cmd, "no_args_is_help", False),
                     "params": [_param(p, ctx) for p in cmd.params]}
        if hasattr(cmd, "commands"):
            out[path]["commands"] = list(cmd.commands)            # registration order: the help lists them so
            for name, sub in cmd.commands.items():
                walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "graphlink")
    return out


def test_every_command_keeps_its_parameters() -> None:
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    got = json.loads(json.dumps(command_tree()))
    assert len(got) > 25 and "graphlink qi links" in got and "graphlink reidentify" in got   # the walk saw them
    assert sorted(got) == sorted(expected), "commands added or removed"
    for path in expected:
        assert got[path] == expected[path], f"{path}: its parameters or help changed"


if __name__ == "__main__":
    json.dump(command_tree(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
