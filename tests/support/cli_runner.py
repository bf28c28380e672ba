"""The hyperpod-kit command run as a user runs it: a subprocess, with its exit code and output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT


def run(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT, stdin: str | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    """stdin: the text the command reads (None: the test's own); timeout: seconds before the run counts as hung."""
    return subprocess.run([sys.executable, "-m", "cdk_app", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, input=stdin, timeout=timeout)


def invoke(*args: str):
    """The command in process (click's runner, output and errors together): fast enough for tables of cases."""
    from click.testing import CliRunner

    from cdk_app.cli.main import main

    return CliRunner().invoke(main, list(args))
