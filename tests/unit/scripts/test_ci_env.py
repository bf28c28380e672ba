"""`make ci-env` (scripts/ci_env.py) runs the CI workflow's own steps for one environment, as Actions does."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "ci_env.py"
WORKFLOW = ROOT / ".github" / "workflows" / "hyperpod-kit.yml"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def checkout(tmp_path: Path, steps: list[dict], env: dict | None = None) -> Path:
    """A checkout with the real listing job and config/ and an environment job of `steps`."""
    shutil.copytree(ROOT / "config", tmp_path / "config")
    shutil.copytree(ROOT / ".github", tmp_path / ".github")
    workflow = yaml.safe_load(WORKFLOW.read_text())
    workflow["jobs"]["environment"]["steps"] = steps
    if env is not None:
        workflow["jobs"]["environment"]["env"] = env
    path = tmp_path / ".github" / "workflows" / "hyperpod-kit.yml"
    path.write_text(yaml.safe_dump(workflow))
    return path


def test_an_example_runs_the_real_validate_step_and_skips_what_ci_skips():
    result = run("batch-example")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "ci-env: Validate\n" in out and "valid: 0 error(s), 1 warning(s)" in out
    for step in ("Synthesize", "cfn-lint for the environment's region", "Plan against the base commit"):
        assert f"ci-env: skipped {step} (examples are validated only)" in out
    assert "ci-env: skipped actions/checkout@v4" in out


def test_steps_see_what_earlier_steps_add_to_the_path_and_env_and_the_job_variables(tmp_path):
    steps = [
        {"name": "tool", "run": 'mkdir -p bin && printf \'#!/bin/sh\\necho tool-ran "$@"\\n\' > bin/tool && '
                                'chmod +x bin/tool && echo "$PWD/bin" >> "$GITHUB_PATH" && echo "GREETING=hi there" >> "$GITHUB_ENV"'},
        {"name": "use", "run": 'tool "$ENV_NAME" "$VALIDATE_FLAGS" "$PLAN_BASE" "$GREETING"'},
        {"name": "not for examples", "if": "${{ !matrix.example }}", "run": "echo ran-later"},
    ]
    workflow = checkout(tmp_path, steps)
    result = run("prod", "origin/release", "--workflow", str(workflow))
    assert result.returncode == 0, result.stderr
    assert "tool-ran prod --strict origin/release hi there" in result.stdout  # prod is strict in CI's list
    assert "ran-later" in result.stdout
    example = run("batch-example", "--workflow", str(workflow))
    assert "ran-later" not in example.stdout and "skipped not for examples" in example.stdout


def test_the_first_failing_step_stops_the_run_with_its_own_exit_code(tmp_path):
    steps = [{"name": "findings", "run": "echo checking; exit 1"}, {"name": "after", "run": "echo never"}]
    result = run("dev", "--workflow", str(checkout(tmp_path, steps)))
    assert result.returncode == 1
    assert "never" not in result.stdout and "ci-env: findings failed with exit 1" in result.stderr


def test_what_the_runner_cannot_evaluate_is_refused_not_guessed(tmp_path):
    odd_condition = [{"name": "only on push", "if": "${{ github.event_name == 'push' }}", "run": "echo x"}]
    result = run("dev", "--workflow", str(checkout(tmp_path, odd_condition)))
    assert result.returncode == 2 and "condition" in result.stderr and "Traceback" not in result.stderr
    extra_variable = run("dev", "--workflow", str(checkout(tmp_path / "b", [], env={"REGION": "${{ vars.R }}"})))
    assert extra_variable.returncode == 2 and "REGION" in extra_variable.stderr
    heredoc_env = [{"name": "multi", "run": 'echo "NOTES<<EOF" >> "$GITHUB_ENV"'}]
    result = run("dev", "--workflow", str(checkout(tmp_path / "c", heredoc_env)))
    assert result.returncode == 2 and "only NAME=value lines" in result.stderr


def test_an_environment_ci_does_not_check_is_a_usage_error_naming_those_it_does():
    result = run("nope")
    assert result.returncode == 2
    assert "no environment 'nope'" in result.stderr and "dev, prod" in result.stderr
