"""Option types shared by `job` and `batch-job`: one reading of a number for every numeric option.

A whole number is written as Kubernetes writes one in a quantity: ASCII digits with an optional sign, nothing
around them. Python's int() would also take " 1", "1_000" and other scripts' digits ("١"), which the
quantities (--cpu, --memory, --shm) refuse; so every numeric option refuses them too, as a usage error.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

WHOLE = re.compile(r"[+-]?[0-9]{1,18}")  # 18 digits: far past any count, and int() stays cheap
LONG_WHOLE = re.compile(r"[+-]?[0-9]+")  # a whole number, but longer: refused as too large, not as malformed


def _too_long(value: str) -> str | None:
    """The message for a whole number of more digits than WHOLE takes (too large, not malformed)."""
    if not LONG_WHOLE.fullmatch(value):
        return None
    size = "is negative and" if value.startswith("-") else "is a whole number, but"
    return f"{value!r} {size} has more than 18 digits: no cluster has anything near that many"


class WholeNumber(click.ParamType):
    name = "integer"

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, int):  # a default
            return value
        if not WHOLE.fullmatch(value):
            self.fail(_too_long(value) or f"{value!r} is not a whole number (digits only, no spaces)", param, ctx)
        return int(value)


WHOLE_NUMBER = WholeNumber()


def efa_option(_ctx, param, value: str) -> int | str:
    """--efa: a whole number, as every numeric option reads one, or 'all'."""
    if value == "all":
        return value
    if not WHOLE.fullmatch(value):
        raise click.BadParameter(_too_long(value) or f"{value!r} is neither a whole number nor 'all' (digits only, "
                                 "no spaces)", param=param)
    return int(value)


def check_output_path(option: str, path: Path, what: str) -> None:
    """Refuse, as a usage error before any work, an output path that could not be written or would block: a
    directory, a FIFO, a device, a missing folder. `what`: the file the option wants (for the message)."""
    if path.exists() and not path.is_file():
        click.echo(f"{option} {path}: not a regular file (a directory, FIFO or device); give {what}", err=True)
        sys.exit(2)
    if not path.parent.is_dir():
        click.echo(f"{option} {path}: the folder {path.parent} does not exist", err=True)
        sys.exit(2)
