"""Shared test set-up: the pinned Node 22 for jsii, and configs written to temporary files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / "node_modules" / ".bin"

# The CDK's jsii runtime starts `node` from PATH; put the repo's Node 22 first, as the Makefile does.
if (NODE_BIN / "node").exists():
    os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["JSII_NODE"] = str(NODE_BIN / "node")


@pytest.fixture
def write_config(tmp_path: Path):
    """Write YAML text to a file and return its path."""

    def write(text: str | bytes, name: str = "env.yaml") -> Path:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return write


# The generated environments of `make bench` (scripts/generated_config.py) and the shared synths
# (tests/synthesis.py) are imported by name from the tests.
sys.path.insert(0, str(ROOT / "scripts"))
