"""The scripts that build the real components pass shellcheck (the Debian package make setup-test unpacks)."""

from __future__ import annotations

import subprocess

import pytest
from support.paths import ROOT

SHELLCHECK = ROOT / ".tools" / "shellcheck" / "usr" / "bin" / "shellcheck"
SCRIPTS = sorted((ROOT / "tests" / "k8s").rglob("*.sh"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_build_script_passes_shellcheck(script):
    assert SHELLCHECK.exists(), "make setup-test installs shellcheck"
    done = subprocess.run([str(SHELLCHECK), "-x", "-s", "bash", str(script)], cwd=script.parent,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_there_are_build_scripts_to_check():
    assert {p.name for p in SCRIPTS} >= {"build.sh", "cached_build.sh"} and len(SCRIPTS) == 3
