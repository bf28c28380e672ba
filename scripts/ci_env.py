"""Run the CI workflow's checks of one environment here, as GitHub Actions would (`make ci-env ENV=prod`).

The steps are read from .github/workflows/hyperpod-kit.yml itself, not restated: the listing job's step gives the
matrix (so the environment is strict exactly when CI makes it strict), then each `run:` step of the environment
job runs in order under bash -eo pipefail with the job's variables, `if: ${{ !matrix.example }}` honoured, and
what a step appends to $GITHUB_PATH / $GITHUB_ENV seen by the later steps. `uses:` steps (checkout, setup-python,
the artifact upload) have no local meaning and are named as skipped. Any other `${{ }}` expression stops the run
with exit 2 rather than being guessed, so the workflow cannot drift from what this runs.

usage: scripts/ci_env.py ENV [BASE] [--workflow FILE]   BASE: the ref a pull request would merge into (main)
Exit status: the first failing step's own exit code (1 for findings, as in CI); 0 when every step passed; 2 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "hyperpod-kit.yml"
NOT_EXAMPLE = "${{ !matrix.example }}"


class Refused(Exception):
    """The workflow or the arguments ask for something this runner does not do (exit 2)."""


def _bash(script: str, env: dict[str, str], checkout: Path) -> int:
    return subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=checkout, env=env).returncode


def _appended(path: Path) -> list[str]:
    """Lines a step appended to a $GITHUB_* file, which is emptied for the next step."""
    lines = [line for line in path.read_text().splitlines() if line]
    path.write_text("")
    return lines


def matrix(workflow: dict, env: dict[str, str], scratch: Path, checkout: Path) -> list[dict]:
    """The environments CI checks, from the listing job's own step."""
    step, = [s for s in workflow["jobs"]["environments"]["steps"] if s.get("id") == "list"]
    output = scratch / "github_output"
    output.write_text("")
    if _bash(step["run"], {**env, "GITHUB_OUTPUT": str(output)}, checkout):
        raise Refused("the workflow's listing step failed")
    line, = [line for line in output.read_text().splitlines() if line.startswith("matrix=")]
    return json.loads(line.removeprefix("matrix="))["include"]


def _applies(step: dict, example: bool) -> bool:
    condition = step.get("if")
    if condition is None:
        return True
    if condition.strip() == NOT_EXAMPLE:
        return not example
    raise Refused(f"step {step.get('name')!r}: condition {condition!r} is not one this runner knows")


def run(name: str, base: str, workflow_path: Path = WORKFLOW) -> int:
    workflow = yaml.safe_load(workflow_path.read_text())
    checkout = workflow_path.resolve().parents[2]  # .github/workflows/<file> sits at the checkout's top
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        env = dict(os.environ)
        entries = {entry["env"]: entry for entry in matrix(workflow, env, scratch, checkout)}
        if name not in entries:
            raise Refused(f"no environment {name!r} in CI's matrix (config/*.yaml): {', '.join(sorted(entries))}")
        entry = entries[name]
        job = workflow["jobs"]["environment"]
        # The job's env: block, with the values CI's expressions would give for this matrix entry and base.
        values = {"ENV_NAME": entry["env"], "VALIDATE_FLAGS": entry["validate_flags"], "PLAN_BASE": base}
        unknown = sorted(set(job.get("env", {})) - set(values))
        if unknown:
            raise Refused(f"the environment job sets {', '.join(unknown)}, which this runner cannot evaluate")
        files = {key: scratch / key.lower() for key in ("GITHUB_PATH", "GITHUB_ENV")}
        for path in files.values():
            path.write_text("")
        env.update(values, **{key: str(path) for key, path in files.items()})
        print(f"ci-env: {name} ({'example: validate only' if entry['example'] else 'against ' + base})"
              f"{' --strict' if entry['validate_flags'] else ''}", flush=True)
        for step in job["steps"]:
            label = step.get("name") or step.get("uses")
            if "run" not in step:
                print(f"ci-env: skipped {label} (an Actions step: nothing to run here)", flush=True)
                continue
            if not _applies(step, entry["example"]):
                print(f"ci-env: skipped {label} (examples are validated only)", flush=True)
                continue
            print(f"ci-env: {label}", flush=True)
            code = _bash(step["run"], env, checkout)
            if code:
                print(f"ci-env: {label} failed with exit {code}", file=sys.stderr)
                return code
            env["PATH"] = os.pathsep.join([*_appended(files["GITHUB_PATH"]), env["PATH"]])
            for line in _appended(files["GITHUB_ENV"]):
                key, sep, value = line.partition("=")
                if not sep:
                    raise Refused(f"step {label!r} wrote {line!r} to $GITHUB_ENV: only NAME=value lines are read here")
                env[key] = value
        print(f"ci-env: {name} passed every step CI runs for it")
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("env")
    parser.add_argument("base", nargs="?", default="main")
    parser.add_argument("--workflow", type=Path, default=WORKFLOW)
    args = parser.parse_args(argv)
    try:
        return run(args.env, args.base, args.workflow)
    except Refused as refused:
        print(f"ci-env: {refused}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
