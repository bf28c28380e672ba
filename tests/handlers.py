"""Load a Lambda handler of constructs/ as a module: the handlers ship as plain files, not as part of
the installed package."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

CONSTRUCTS = Path(__file__).resolve().parent.parent / "constructs"


def load_handler(folder: str) -> ModuleType:
    """constructs/<folder>/index.py as a fresh module."""
    spec = importlib.util.spec_from_file_location(folder, CONSTRUCTS / folder / "index.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
