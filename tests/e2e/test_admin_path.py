"""The admin's everyday path: selecting an environment (app.py), `validate --strict`, what each make target
pulls in (real GNU make), and the example CI workflow (its shell steps checked by shellcheck)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner
from support.paths import ROOT

from cdk_app.cli.main import main

SHELLCHECK = ROOT / ".tools" / "shellcheck" / "usr" / "bin" / "shellcheck"
DEV = (ROOT / "config" / "dev.yaml").read_text()
# Every config file is an environment the message must list (the files themselves are the source).
ENVIRONMENTS = ", ".join(sorted(p.stem for p in (ROOT / "config").glob("*.yaml")))


def run_app(context: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    """app.py as the CDK CLI runs it: context in CDK_CONTEXT_JSON, output folder in CDK_OUTDIR."""
    env = {**os.environ, "CDK_CONTEXT_JSON": json.dumps(context), "CDK_OUTDIR": str(tmp_path / "out")}
    node = ROOT / "node_modules" / ".bin" / "node"
    if node.exists():
        env["JSII_NODE"] = str(node)
    return subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_no_environment_is_refused_listing_the_config_files(tmp_path):
    result = run_app({}, tmp_path)
    assert result.returncode == 2
    assert f"no environment given: add -c env=<name> for config/<name>.yaml (environments: {ENVIRONMENTS})" in result.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.template.json"))


def test_unrecorded_governance_types_are_refused_by_the_app(tmp_path):
    """Issue 27: a type derived from cfn-lint's region data at synth flips with a cfn-lint upgrade, so app.py
    builds nothing for a config that leaves task_governance.cloudformation_types out."""
    recorded = "  cloudformation_types:\n    cluster_policy: native\n    compute_quota: native\n"
    assert recorded in DEV
    unrecorded = tmp_path / "dev.yaml"
    unrecorded.write_text(DEV.replace(recorded, ""))
    result = run_app({"env": "dev", "config": str(unrecorded)}, tmp_path)
    assert result.returncode == 1
    assert "`cloudformation_types: {cluster_policy: native, compute_quota: native}`" in result.stderr
    assert "[HPK312 error]" in result.stderr and "nothing synthesized" in result.stderr
    assert not list((tmp_path / "out").glob("*.template.json"))


def test_unknown_environment_is_refused(tmp_path):
    result = run_app({"env": "qa"}, tmp_path)
    assert result.returncode == 2
    assert f"config/qa.yaml does not exist: -c env=qa names no environment (environments: {ENVIRONMENTS})" in result.stderr


def test_copied_config_selected_under_another_name_is_refused(tmp_path):
    """cp config/dev.yaml config/qa.yaml && cdk deploy -c env=qa would deploy the dev stacks."""
    copy = tmp_path / "qa.yaml"
    copy.write_text(DEV)
    result = run_app({"env": "qa", "config": str(copy)}, tmp_path)
    assert result.returncode == 1
    line = DEV.splitlines().index("environment: dev") + 1
    assert f"qa.yaml:{line}:1 environment: selected with -c env=qa but the file says environment: dev" in result.stderr
    assert "[HPK020 error]" in result.stderr and "nothing synthesized" in result.stderr
    assert not list((tmp_path / "out").glob("*.template.json"))


def test_after_validate_the_app_prints_errors_but_not_the_warnings_again(tmp_path):
    """make synth and CI run validate first (-c validated=true): its warnings are printed once, there."""
    broken = tmp_path / "dev.yaml"
    broken.write_text(DEV.replace("count: 3", "count: 4"))  # HPK501; dev also has an HPK113 warning
    plain = run_app({"env": "dev", "config": str(broken)}, tmp_path)
    after = run_app({"env": "dev", "config": str(broken), "validated": "true"}, tmp_path)
    assert plain.returncode == after.returncode == 1
    assert "[HPK113 warning]" in plain.stderr and "[HPK501 error]" in plain.stderr
    assert "[HPK113 warning]" not in after.stderr and "[HPK501 error]" in after.stderr
    assert "1 warning(s), printed by validate above" in after.stderr


def test_a_config_file_without_an_environment_name_is_refused(tmp_path):
    """-c config=<copy of dev.yaml> alone used to synthesize (and deploy over) the HyperPod-dev-* stacks."""
    copy = tmp_path / "qa.yaml"
    copy.write_text(DEV.replace("vpc_cidr: 10.192.0.0/16", "vpc_cidr: 10.200.0.0/16"))
    result = run_app({"config": str(copy)}, tmp_path)
    assert result.returncode == 2
    assert f"-c config={copy} needs it too" in result.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.template.json"))


def test_strict_makes_warnings_fail(tmp_path):
    """Two priority classes of one weight are a warning (HPK304): exit 0, and 1 with --strict."""
    config = tmp_path / "dev.yaml"
    config.write_text(DEV.replace("  fair_share: Enabled", "  priority_classes:\n    - {name: a, weight: 5}\n"
                                  "    - {name: b, weight: 5}\n  fair_share: Enabled"))
    assert CliRunner().invoke(main, ["validate", str(config)]).exit_code == 0
    strict = CliRunner().invoke(main, ["validate", "--strict", "--format", "json", str(config)])
    assert strict.exit_code == 1
    assert json.loads(strict.stdout)["ok"] is False
    assert "HPK304" in strict.stdout and "warning(s) fail the check" in strict.stderr
    table = CliRunner().invoke(main, ["validate", "--strict", str(config)])
    assert table.exit_code == 1
    assert "invalid under --strict: 0 error(s), 2 warning(s) (--strict makes the warnings fail)" in table.stdout
    assert "\nvalid: " not in table.stdout


def make_dry_run(target: str) -> str:
    # --no-print-directory: under an outer make (CI runs the tests from `make test`) make says where it runs.
    result = subprocess.run(["make", "-n", "--no-print-directory", target, "SHELLCHECK=/nonexistent/shellcheck"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_synth_does_not_fetch_shellcheck_but_test_does():
    assert "apt-get" not in make_dry_run("synth")
    assert "apt-get download" in make_dry_run("test")


def test_make_ci_runs_the_ci_entry_point_and_make_help_lists_it():
    assert make_dry_run("ci").strip() == "./.ci/run"
    listed = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and "ci: exactly what CI runs (.ci/run" in listed.stdout
    default = subprocess.run(["make", "-n", "--debug=b"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "'setup'" in default.stdout  # a plain `make` still sets up; help is a target of its own


def test_make_synth_names_validates_own_exit_code():
    """GNU make exits 2 whenever a step fails; the step's own code is printed for the log."""
    result = subprocess.run(["make", "synth", "ENV=no-such-env"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert "make synth: hyperpod-kit validate exited 2: a file could not be read, or bad usage" in result.stderr


WORKFLOW = ROOT / ".github" / "workflows" / "hyperpod-kit.yml"


def workflow_steps() -> list[dict]:
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    return jobs["environments"]["steps"] + jobs["environment"]["steps"]


def workflow_matrix(checkout: Path) -> dict:
    """Run the first job's listing step (bash, as Actions runs it) in `checkout`."""
    step, = [s for s in yaml.safe_load(WORKFLOW.read_text())["jobs"]["environments"]["steps"] if s.get("id") == "list"]
    output = checkout / "github_output"
    subprocess.run(["bash", "-e", "-c", step["run"]], cwd=checkout, env={**os.environ, "GITHUB_OUTPUT": str(output)},
                   check=True, timeout=60)
    line, = output.read_text().splitlines()
    return json.loads(line.removeprefix("matrix="))


def checkout_with_qa(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(ROOT / "config", tmp_path / "config")
    shutil.copytree(ROOT / ".github", tmp_path / ".github")
    (tmp_path / "config" / "qa.yaml").write_text(DEV.replace("environment: dev", "environment: qa"))
    return tmp_path


def test_workflow_matrix_is_every_config_file_so_a_new_environment_is_checked_and_examples_validated(tmp_path):
    matrix = workflow_matrix(checkout_with_qa(tmp_path))["include"]
    files = sorted(p.stem for p in (tmp_path / "config").glob("*.yaml"))
    examples = [name for name in files if name.endswith("-example")]
    assert examples == ["batch-example", "batch-only-example"]  # the shipped examples follow the naming rule
    assert sorted(e["env"] for e in matrix) == files
    assert sorted(e["env"] for e in matrix if e["example"]) == examples
    # the CI how-to states the same rule and the same switch
    guide = (ROOT / "docs" / "how-to" / "ci.md").read_text()
    assert "whose names end in `-example`" in guide and "## Failing on warnings: `.github/strict-environments.txt`" in guide
    assert {e["env"]: e["validate_flags"] for e in matrix}["prod"] == "--strict"
    assert {e["env"]: e["validate_flags"] for e in matrix}["qa"] == ""
    # An example is validated, then every later step is skipped: it is a sample, not an environment.
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["environment"]["steps"]
    names = [s.get("name") for s in steps]
    validate = names.index("Validate")
    assert "if" not in steps[validate] and all(s.get("if") == "${{ !matrix.example }}" for s in steps[validate + 1:])
    assert len(steps) > validate + 3


def test_a_star_in_strict_environments_makes_every_environment_strict_and_a_bang_leaves_one_out(tmp_path):
    """The documented switch: new environments are strict without anyone remembering to list them."""
    checkout = checkout_with_qa(tmp_path)
    (checkout / ".github" / "strict-environments.txt").write_text("# every environment\n*\n!dev  # sandbox\n")
    flags = {e["env"]: e["validate_flags"] for e in workflow_matrix(checkout)["include"]}
    assert flags["qa"] == flags["prod"] == "--strict" and flags["dev"] == ""
    assert flags["batch-example"] == flags["batch-only-example"] == ""  # `*` is about environments
    guide = (ROOT / "docs" / "how-to" / "ci.md").read_text()
    assert "`*`" in guide and "`!<name>`" in guide
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["environment"]
    assert job["needs"] == "environments"
    assert job["strategy"]["matrix"] == "${{ fromJSON(needs.environments.outputs.matrix) }}"


def test_workflow_runs_validate_synth_cfn_lint_and_plan_for_every_environment():
    runs = "\n".join(step.get("run", "") for step in workflow_steps())
    for command in ("hyperpod-kit validate", "cdk synth -c env=\"$ENV_NAME\"", "cfn-lint --regions",
                    "hyperpod-kit plan \"config/$ENV_NAME.yaml\" --against-ref"):
        assert command in runs
    assert "make synth" not in runs  # make would turn every failure into exit 2


@pytest.mark.skipif(not SHELLCHECK.exists(), reason="shellcheck comes with make setup-test")
@pytest.mark.parametrize("index", [i for i, step in enumerate(workflow_steps()) if "run" in step])
def test_workflow_shell_steps_pass_shellcheck(index, tmp_path):
    step = workflow_steps()[index]
    assert "${{" not in step["run"], "expressions go through env:, not into the script"
    script = tmp_path / "step.sh"
    script.write_text("#!/usr/bin/env bash\nset -euo pipefail\n" + step["run"])
    result = subprocess.run([str(SHELLCHECK), "--shell=bash", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_exit_code_table_covers_every_command():
    page = (ROOT / "docs" / "reference" / "exit-codes.md").read_text()
    table = page[page.index("| command | 0 | 1 | 2 |"):].split("\n\n", 1)[0]
    commands = set(re.findall(r"^\| `([^`]+)`", table, flags=re.M))
    cli = {f"hyperpod-kit {name}" for name in main.list_commands(click.Context(main))}  # lazy ones too
    assert cli | {"app.py (cdk synth / deploy)", "make <target>"} == commands


def test_ci_plan_step_accepts_only_allow_replace_lines_the_change_adds(tmp_path):
    """The step's own script in a scratch repository, with a stand-in for hyperpod-kit that prints its args:
    a name approved in an earlier change must not pre-approve this one."""
    step, = [s for s in workflow_steps() if s.get("name") == "Plan against the base commit"]
    repo = tmp_path / "repo"
    (repo / "config").mkdir(parents=True)
    (repo / ".github").mkdir()
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / "config" / "dev.yaml").write_text(DEV)
    (repo / ".github" / "allow-replace-dev.txt").write_text("OldApproval\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "config", ".github"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    (repo / ".github" / "allow-replace-dev.txt").write_text("OldApproval\nHyperPodED6AB1C4/h100-a\n")
    kit = repo / ".venv" / "bin" / "hyperpod-kit"
    kit.write_text("#!/usr/bin/env bash\necho \"$@\"\n")
    kit.chmod(0o755)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", step["run"]], cwd=repo, capture_output=True, text=True,
                            env={**os.environ, "ENV_NAME": "dev", "PLAN_BASE": "HEAD"}, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("plan config/dev.yaml --against-ref HEAD --current cdk.out "
                                     "--allow-replace HyperPodED6AB1C4/h100-a")
