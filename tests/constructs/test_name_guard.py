"""constructs/ must never shadow the PyPI package `constructs` (aws/aws-cdk#19301)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT


def test_constructs_resolves_to_site_packages():
    spec = importlib.util.find_spec("constructs")
    assert spec is not None and spec.origin is not None
    assert "site-packages" in Path(spec.origin).parts


def test_no_init_directly_in_constructs_folder():
    assert not (ROOT / "constructs" / "__init__.py").exists()


def test_our_constructs_import_under_their_own_name():
    spec = importlib.util.find_spec("hyperpod_constructs.hyperpod_network")
    assert spec is not None and Path(spec.origin).parent == ROOT / "constructs"


def test_python_run_from_repo_root_still_finds_the_real_package():
    # `python app.py` puts the repo root first on sys.path: the case that breaks with a root __init__.py.
    code = "import constructs, pathlib; print(pathlib.Path(constructs.__file__).parts)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "site-packages" in out.stdout
