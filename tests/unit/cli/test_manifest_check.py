"""`hyperpod-kit check CONFIG --team TEAM FILE`: the guardrails' verdict on a hand-written manifest, offline. Its
verdicts on the collection of manifests written outside the kit are the collection's, which the real API server
gives (tests/realk8s/test_standard_manifests.py runs `check` beside it); bad input ends with exit 2, no traceback."""

from __future__ import annotations

import json

import pytest
import yaml
from support.cli_runner import invoke, run
from support.paths import ROOT
from support.standard_manifests import STANDARD, TEAMS, for_team

RULE = "hyperpod-kit guardrail "


def refused_rules(output: str) -> dict[str, str]:
    """rule -> the field its message names, from check's refusal lines."""
    found = {}
    for line in output.splitlines():
        if ": refused: " + RULE in line:
            rule, field = line.split(": refused: " + RULE, 1)[1].split(": ")[:2]
            found[rule] = field
    return found


@pytest.mark.parametrize("env", sorted(TEAMS))
@pytest.mark.parametrize("standard", STANDARD, ids=[s.id for s in STANDARD])
def test_a_standard_manifest_gets_the_verdict_the_api_server_gives(tmp_path, standard, env):
    team, _ = TEAMS[env]
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump(for_team(standard, env)))
    result = invoke("check", f"config/{env}.yaml", "--team", team, str(path))
    expected = standard.refused.get(env, {})
    assert result.exit_code == (1 if expected else 0), result.output
    refused = refused_rules(result.output)
    assert set(refused) == set(expected), result.output
    for rule, field in expected.items():
        assert refused[rule].endswith(field), (rule, refused[rule])


def job_manifest(team: str = "john", *extra: str) -> str:
    result = invoke("job", "--config", "config/dev.yaml", "--team", team, "--name", "t", "--image", "repo/t:1",
                    *extra, "--", "python", "t.py")
    assert result.exit_code == 0, result.output
    return result.stdout


def test_what_job_writes_is_admitted_and_a_hand_edit_is_refused_with_its_field(tmp_path):
    written = job_manifest()
    (tmp_path / "job.yaml").write_text(written)
    admitted = invoke("check", "config/dev.yaml", "--team", "john", str(tmp_path / "job.yaml"))
    assert admitted.exit_code == 0, admitted.output
    assert admitted.output.endswith("admitted: 1 object(s) (team john, environment dev)\n")
    edited = written.replace("kueue.x-k8s.io/queue-name: hyperpod-ns-john-localqueue",
                             "kueue.x-k8s.io/queue-name: hyperpod-ns-smith-localqueue")
    assert edited != written
    (tmp_path / "edited.yaml").write_text(edited)
    refused = invoke("check", "config/dev.yaml", "--team", "john", str(tmp_path / "edited.yaml"))
    assert refused.exit_code == 1, refused.output
    assert "PyTorchJob/t: refused: hyperpod-kit guardrail" in refused.output
    assert "refused: 1 of 1 object(s)" in refused.output


def test_another_teams_namespace_is_refused_and_a_kind_no_guardrail_checks_is_said(tmp_path):
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}
    path = tmp_path / "two.yaml"
    path.write_text(job_manifest() + "---\n" + yaml.safe_dump(config_map))
    result = invoke("check", "config/dev.yaml", "--team", "smith", str(path))
    assert result.exit_code == 1, result.output
    assert "team smith's role works in hyperpod-ns-smith only" in result.output
    assert "ConfigMap/c: admitted - no guardrail checks v1 ConfigMap" in result.output
    # The ConfigMap's line is where its document starts.
    line = path.read_text().splitlines().index("apiVersion: v1") + 1
    assert f"two.yaml:{line}: ConfigMap/c" in result.output


def test_a_list_is_checked_item_by_item_as_kubectl_applies_it(tmp_path):
    job = yaml.safe_load(job_manifest())
    path = tmp_path / "list.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [job, {**job, "metadata": {
        **job["metadata"], "name": "u", "namespace": "default"}}]}))
    result = invoke("check", "config/dev.yaml", "--team", "john", str(path))
    assert result.exit_code == 1, result.output
    assert "PyTorchJob/t: admitted" in result.output and "PyTorchJob/u: refused: namespace default" in result.output
    nodes = invoke("check", "config/prod.yaml", "--team", "research-nlp", "config/nodes/prod.json")
    assert nodes.exit_code == 0 and "Node/hyperpod-i-00000000000000001: admitted - no guardrail checks v1 Node" in nodes.output


# File text -> what check says of it: each is no manifest at all.
NOT_MANIFESTS = {"kind: [": "not valid YAML", "- a\n- b\n": "not a Kubernetes object",
                 "apiVersion: v1\nkind: Pod\n": "has no metadata mapping", "": "no Kubernetes object in it",
                 "a: !!python/object:os.system x\n": "not valid YAML"}


@pytest.mark.parametrize("text", NOT_MANIFESTS)
def test_a_file_that_is_no_manifest_is_exit_2(tmp_path, text):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = invoke("check", "config/dev.yaml", "--team", "john", str(path))
    assert (result.exit_code, f"{path}:" in result.output) == (2, True), result.output
    assert NOT_MANIFESTS[text] in result.output and "Traceback" not in result.output


def test_an_unknown_team_or_file_is_a_usage_error(tmp_path):
    (tmp_path / "job.yaml").write_text(job_manifest())
    unknown = invoke("check", "config/dev.yaml", "--team", "nobody", str(tmp_path / "job.yaml"))
    assert unknown.exit_code == 2 and "'nobody' is no HyperPod team" in unknown.output
    missing = invoke("check", "config/dev.yaml", "--team", "john", str(tmp_path / "missing.yaml"))
    assert missing.exit_code == 2 and "Traceback" not in missing.output


def test_the_model_is_the_one_the_tests_hold_to_the_api_server():
    """One implementation: the tests' admission helper is the kit's module, not a copy."""
    from support import cel_admission

    from cdk_app.kubernetes.guardrails import admission

    assert cel_admission.Verdict is admission.Verdict
    support = (ROOT / "tests/support/cel_admission.py").read_text()
    assert "admission.admit(" in support and "celpy" not in support
    assert json.dumps(sorted(admission.ADMITTED_KINDS)) == json.dumps(sorted(
        ["Pod", "Job", "PyTorchJob", "MPIJob", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Service",
         "NetworkPolicy"]))


def test_aliases_that_expand_past_any_manifest_end_at_once(tmp_path):
    """A few lines of YAML aliases stand for 10^12 nodes: refused before anything walks them (no hang)."""
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] + [
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    path = tmp_path / "bomb.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n"
                    + "".join(f"  {line}\n" for line in levels))
    result = run("check", "config/dev.yaml", "--team", "john", str(path), timeout=60)
    assert result.returncode == 2, result.stderr
    assert "its aliases expand to more than 1000000 YAML nodes" in result.stderr


def test_a_null_namespace_is_the_teams_own(tmp_path):
    job = yaml.safe_load(job_manifest())
    job["metadata"]["namespace"] = None
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    result = invoke("check", "config/dev.yaml", "--team", "john", str(path))
    assert result.exit_code == 0, result.output
