"""Shared test set-up: the pinned Node 22 for jsii, configs written to temporary files, and the tiers.

Tiers: tests/unit and tests/contracts are the fast tier (`make test-fast`) except modules marked slow;
tests/constructs, handlers, stacks and e2e synthesize apps, run handlers or drive the CDK CLI, git and
helm, and are slow as a whole. `make test` runs every tier.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.paths import ROOT

NODE_BIN = ROOT / "node_modules" / ".bin"
FAST_FOLDERS = ("unit", "contracts")

# The CDK's jsii runtime starts `node` from PATH; put the repo's Node 22 first, as the Makefile does.
if (NODE_BIN / "node").exists():
    os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["JSII_NODE"] = str(NODE_BIN / "node")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = ROOT / "tests"
    for item in items:
        folder = Path(item.path).relative_to(tests).parts[0]
        if folder not in FAST_FOLDERS:
            item.add_marker(pytest.mark.slow)


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
