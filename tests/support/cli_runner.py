"""The hyperpod-kit command run as a user runs it: a subprocess, with its exit code and output."""

from __future__ import annotations

import os
import subprocess
import sys

from support.paths import ROOT


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cdk_app", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def invoke(*args: str):
    """The command in process (click's runner, output and errors together): fast enough for tables of cases."""
    from click.testing import CliRunner

    from cdk_app.cli.main import main

    return CliRunner().invoke(main, list(args))
