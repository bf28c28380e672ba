"""`make setup-light`, a data scientist's install: Python only, no npm, Node or CDK. Its packages are pinned by
requirements.lock, and every command it is for runs with nothing else importable - a fresh interpreter whose
imports outside the standard library, the kit and those packages fail, as they would in that install."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys

import pytest
from support.cli_runner import invoke
from support.paths import ROOT

MAKEFILE = (ROOT / "Makefile").read_text()
LIGHT = re.search(r"^LIGHT_PACKAGES := ((?:.*\\\n)*.*)$", MAKEFILE, flags=re.M).group(1).replace("\\\n", " ").split()
LOCK = (ROOT / "requirements.lock").read_text()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def allowed_modules() -> set[str]:
    """Top-level modules of site-packages the light install holds: the kit's and its packages'."""
    light = {_normal(p) for p in LIGHT}
    provided = {module for module, dists in importlib.metadata.packages_distributions().items()
                if any(_normal(d) in light for d in dists)}
    return provided | {"cdk_app", "hyperpod_constructs"}


# Blocks every import of a module installed in site-packages by a package outside the light install, then runs
# one command as `hyperpod-kit` would. (The standard library's own private modules are not in site-packages.)
PROBE = """
import importlib.abc, importlib.machinery, json, sys, sysconfig
ALLOWED = set(json.loads(sys.argv[1]))
SITE = tuple({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if "." in name or name in ALLOWED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        places = [spec.origin or "", *(spec.submodule_search_locations or ())] if spec else []
        if any(str(place).startswith(SITE) for place in places):
            raise ImportError(f"not in the light install: {name}")
        return None
sys.meta_path.insert(0, Blocker())
from cdk_app.cli.main import main
main(json.loads(sys.argv[2]))
"""

SAMPLE_JOB = ["job", "--config", "config/dev.yaml", "--team", "john", "--name", "t", "--image", "repo/t:1", "--",
              "python", "t.py"]
COMMANDS = [
    (["validate", "config/dev.yaml"], 0),
    (["show", "config/prod.yaml", "--format", "json"], 0),
    (["team", "config/dev.yaml", "john"], 0),
    (SAMPLE_JOB, 0),
    (["check", "config/dev.yaml", "--team", "john", "{job}"], 0),
    (["topology", "config/nodes/prod.json", "--format", "table"], 0),
    (["simulate", "config/dev.yaml", "--workload", "config/workloads/dev-seed-002.yaml"], 0),
    (["explain", "config/dev.yaml", "--workload", "config/workloads/dev-seed-002.yaml", "--job", "smith-train"], 0),
    (["instances"], 0),
]


def test_every_light_package_is_pinned_by_the_lock():
    assert len(LIGHT) >= 10
    for package in LIGHT:
        assert re.search(rf"^{re.escape(package)}==", LOCK, flags=re.M), package


def test_setup_light_installs_no_node_and_no_cdk():
    shown = subprocess.run(["make", "-n", "setup-light"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "npm" not in shown.stdout and "node_modules" not in shown.stdout
    assert not {_normal(p) for p in LIGHT} & {"aws-cdk-lib", "constructs", "cdk-nag", "jsii", "boto3"}


@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=[c[0][0] for c in COMMANDS])
def test_a_data_scientists_command_runs_with_only_the_light_packages(args, code, tmp_path):
    written = invoke(*SAMPLE_JOB)
    assert written.exit_code == 0, written.output
    (tmp_path / "job.yaml").write_text(written.stdout)
    args = [str(tmp_path / "job.yaml") if arg == "{job}" else arg for arg in args]
    result = subprocess.run([sys.executable, "-c", PROBE, json.dumps(sorted(allowed_modules())), json.dumps(args)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "not in the light install" not in result.stdout + result.stderr, result.stderr[-2000:]
    assert result.returncode == code, result.stdout[-1000:] + result.stderr[-2000:]
