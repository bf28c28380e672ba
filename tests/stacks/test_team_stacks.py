"""Team stacks (task_governance.team_stacks), checked on real synths of dev with extra teams: every team's
resources live in the stack the layout names, adding and removing teams moves no other team (same stack, same
logical ids, untouched team stacks byte-identical), the team stacks deploy after the governance stack (the
cloud assembly's dependencies), and `plan` flags a switch of a deployed environment as moved quotas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import ROOT

from cdk_app.cli import plan as planning
from cdk_app.config.loader import load_config
from cdk_app.stacks.layout import team_layout
from cdk_app.validator.report import check_file

DEV = (ROOT / "config" / "dev.yaml").read_text()
EXTRA = ["alpha", "bravo-team", "c", "delta-research", "echo", "foxtrot-7", "golf", "hotel-vision-nlp"]
NO_PRINCIPALS = {"c", "foxtrot-7"}  # teams without principals have no role, no access entry
TEAM_TYPES = ("AWS::SageMaker::ComputeQuota", "Custom::KubernetesManifests", "AWS::IAM::Role", "AWS::EKS::AccessEntry")

pytestmark = pytest.mark.synth


def team_text(name: str) -> str:
    text = (f"  - name: {name}\n    quota:\n      - instance_type: ml.m5.2xlarge\n        vcpu: 0.5\n")
    return text + ("" if name in NO_PRINCIPALS else f"    principals: [arn:aws:iam::111122223333:role/{name}]\n")


def config_text(team_stacks: int, extra: list[str]) -> str:
    text = DEV.replace("    compute_quota: native\n", f"    compute_quota: native\n  team_stacks: {team_stacks}\n")
    text = text.replace("      instance_type: ml.m5.2xlarge\n      count: 2\n", "      instance_type: ml.m5.2xlarge\n      count: 3\n")
    # The extra teams go after the last one, before dev's storage section.
    return text.replace("\nstorage:\n", "\n" + "".join(map(team_text, extra)) + "storage:\n", 1)


def synthesized(folder: Path, text: str) -> tuple[dict[str, dict], Path]:
    folder.mkdir()
    path = folder / "dev.yaml"
    path.write_text(text)
    report = check_file(path)
    assert report.ok, [f.render() for f in report.findings]
    out = planning.synthesize(report.loaded.config, folder / "cdk.out")
    return planning.read_templates(out), out


@pytest.fixture(scope="module")
def synths(tmp_path_factory) -> dict[str, tuple[dict[str, dict], Path]]:
    base = tmp_path_factory.mktemp("team-stacks")
    # edited: the first extra team removed, two new ones added (one at the front of the list).
    edits = {"dev": config_text(0, []), "base": config_text(3, EXTRA),
             "edited": config_text(3, EXTRA[1:] + ["india"]).replace("teams:\n", "teams:\n" + team_text("juliet"), 1)}
    return {name: synthesized(base / name, text) for name, text in edits.items()}


def team_resources(templates: dict[str, dict]) -> dict[str, dict[str, tuple[str, str]]]:
    """Team -> {resource type -> (stack, logical id)}, found by what each resource names (not by our layout)."""
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for stack, template in templates.items():
        for logical_id, resource in template["Resources"].items():
            props, kind = resource.get("Properties", {}), resource["Type"]
            if kind == "AWS::SageMaker::ComputeQuota":
                team = props["ComputeQuotaTarget"]["TeamName"]
            elif kind == "Custom::KubernetesManifests" and props["Name"].startswith("team-"):
                team = props["Name"].removeprefix("team-")
            elif kind == "AWS::EKS::AccessEntry" and props.get("KubernetesGroups", [""])[0].startswith("hyperpod-team-"):
                team = props["KubernetesGroups"][0].removeprefix("hyperpod-team-")
            elif kind == "AWS::IAM::Role" and "Submits jobs as team" in props.get("Description", ""):
                team = props["Description"].split()[4]
            else:
                continue
            assert kind not in found.setdefault(team, {}), (team, kind)
            found[team][kind] = (stack, logical_id)
    return found


def test_every_team_lives_in_the_stack_the_layout_names(synths):
    templates, out = synths["base"]
    layout = team_layout(load_config(out.parent / "dev.yaml").config)
    assert {f"HyperPod-dev-teams-{k}" for k in range(3)} <= set(templates)
    for team, pieces in team_resources(templates).items():
        expected = f"HyperPod-dev-{layout.stack_of(team)}"
        assert set(pieces) == set(TEAM_TYPES[:2] if team in NO_PRINCIPALS else TEAM_TYPES), team
        assert {stack for stack, _ in pieces.values()} == {expected}, team
    # The governance stack keeps the cluster-wide pieces and no team's.
    governance = templates["HyperPod-dev-governance"]["Resources"]
    assert not [r for r in governance.values() if r["Type"] in TEAM_TYPES[1:] and "team-" in json.dumps(r)]


def test_adding_and_removing_teams_moves_no_other_team(synths):
    before, after = team_resources(synths["base"][0]), team_resources(synths["edited"][0])
    kept = set(before) & set(after)
    assert kept == set(before) - {EXTRA[0]} and set(after) - kept == {"india", "juliet"}
    for team in kept:
        assert before[team] == after[team], team  # same stack, same logical ids
    # Stacks that neither lost nor gained a team are byte-for-byte the same template.
    touched = {before[EXTRA[0]]["AWS::SageMaker::ComputeQuota"][0]} | {
        after[t]["AWS::SageMaker::ComputeQuota"][0] for t in ("india", "juliet")}
    for stack in synths["base"][0]:
        if stack.startswith("HyperPod-dev-teams-") and stack not in touched:
            assert synths["base"][0][stack] == synths["edited"][0][stack], stack


def test_team_stacks_deploy_after_the_governance_stack_and_name_their_roles(synths):
    templates, out = synths["base"]
    manifest = json.loads((out / "manifest.json").read_text())["artifacts"]
    for k in range(3):
        stack = f"HyperPod-dev-teams-{k}"
        assert "HyperPod-dev-governance" in manifest[stack]["dependencies"]
        roles = {logical_id for logical_id, r in templates[stack]["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
        outputs = templates[stack].get("Outputs", {})
        assert set(outputs) <= {"TeamRoleArns"}
        if roles:  # one output: a JSON object whose values are the stack's team roles' ARNs
            parts = outputs["TeamRoleArns"]["Value"]["Fn::Join"][1]
            assert {p["Fn::GetAtt"][0] for p in parts if isinstance(p, dict)} == roles
        else:
            assert not outputs
    report = json.loads((out / "validation-report.json").read_text())
    assert all(r["conclusion"] == "success" for r in report["pluginReports"])


def test_an_empty_team_stack_keeps_a_placeholder(tmp_path):
    text = config_text(4, [])
    templates, _ = synthesized(tmp_path / "empty", text)
    owners = {team_layout(load_config(tmp_path / "empty" / "dev.yaml").config).stack_of(t) for t in ("john", "smith")}
    for k in range(4):
        resources = templates[f"HyperPod-dev-teams-{k}"]["Resources"]
        if f"teams-{k}" not in owners:
            assert {r["Type"] for r in resources.values()} == {"AWS::CloudFormation::WaitConditionHandle"}


def test_plan_flags_switching_a_deployed_environment_to_team_stacks(synths):
    before = planning.environment_stacks(synths["dev"][0], "dev", "dev")
    after = planning.environment_stacks(synths["base"][0], "dev", "base")
    plan = planning.compare(before, after, "dev")
    moved = {t.team: t for t in plan.teams if t.change == "moved"}
    assert set(moved) == {"john", "smith"} and all(t.may_preempt for t in moved.values())
    assert moved["john"].moved[0] == "HyperPod-dev-governance"
    text = planning.render(plan)
    assert "team john moves from stack HyperPod-dev-governance to HyperPod-dev-teams-" in text
    assert "deleted and created again" in text
