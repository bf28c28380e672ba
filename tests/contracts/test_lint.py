"""ruff, configured in pyproject.toml, finds nothing in the kit, its tests and scripts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff, "ruff is a test dependency (pyproject.toml [test])"
    result = subprocess.run([ruff, "check", "--output-format", "concise", "."], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
