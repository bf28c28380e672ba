"""`hyperpod-kit plan` on pairs of prod configs (the base and one admin edit each), synthesized in-process
once per session: the exact verdict for each edit. Replacement comes from CloudFormation's resource schemas
(cfn-lint's createOnlyProperties), so these verdicts are what CloudFormation would do; the team lines
come from the compute quotas in the templates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber
from click.testing import CliRunner
from support.paths import ROOT
from support.synthesis import env_assembly

from cdk_app.cli import plan as planning
from cdk_app.cli.main import main
from cdk_app.config.loader import load_config

BASE = (ROOT / "config" / "prod.yaml").read_text()
ZONES = "availability_zone_ids: [usw2-az1, usw2-az2, usw2-az3]"
CLUSTER_ZONES = "cluster_zone_ids: [usw2-az1, usw2-az2, usw2-az3]"
TRAINING_QUOTA = "        count: 3\n    principals:\n      - arn:aws:iam::444455556666:role/TeamProductionTraining"
EDITS = {
    "base": BASE,
    "rename": BASE.replace("cluster_name: ml-prod", "cluster_name: ml-prod-2"),
    "zone_append": BASE.replace(ZONES, "availability_zone_ids: [usw2-az1, usw2-az2, usw2-az3, usw2-az4]"),
    "zone_reorder": BASE.replace(ZONES, "availability_zone_ids: [usw2-az2, usw2-az1, usw2-az3]"),
    "cluster_zones": BASE.replace(CLUSTER_ZONES, "cluster_zone_ids: [usw2-az1, usw2-az2]"),
    "team_removal": BASE[:BASE.index("  - name: research-vision")] + BASE[BASE.index("  - name: applied-science"):],
    "quota_cut": BASE.replace(TRAINING_QUOTA, TRAINING_QUOTA.replace("count: 3", "count: 2")),
    # h100-a renamed; h100-b's volume shrunk and its training plan dropped; system scaled 2 -> 1.
    "groups": BASE.replace("- name: h100-a", "- name: h100-x").replace(
        "      ebs_volume_gib: 2000\n      training_plan_arn: arn:aws:sagemaker:us-west-2:444455556666:training-plan/h100-q4\n",
        "      ebs_volume_gib: 1000\n").replace("      instance_type: ml.m7i.2xlarge\n      count: 2\n",
                                             "      instance_type: ml.m7i.2xlarge\n      count: 1\n"),
    "first_admin_removed": BASE.replace("    - arn:aws:iam::444455556666:role/PlatformAdmin\n", ""),
    "quota_type_flip": BASE.replace("compute_quota: native", "compute_quota: api"),
    "team_rename": BASE.replace("- name: research-nlp", "- name: research-language"),
    # prod turns GPU isolation on (config/prod.yaml); this is the environment deployed before it did.
    "isolation_off": BASE.replace("lifecycle: {gpu_device_isolation: true}", "lifecycle: {gpu_device_isolation: false}"),
}


@pytest.fixture(scope="session")
def synths(tmp_path_factory) -> dict[str, Path]:
    """One cloud assembly per edit: the base is the CLI's synth of prod that test_synth and test_app share,
    each edit an in-process synth (as `plan` itself synthesizes)."""
    out = {"base": env_assembly(tmp_path_factory, "prod")}
    for name, text in EDITS.items():
        if name == "base":
            continue
        assert text != BASE, f"edit {name} did not apply"
        assert name != "groups" or text.count("ebs_volume_gib: 1000") == 1 and "ml.m7i.2xlarge\n      count: 1\n" in text
        folder = tmp_path_factory.mktemp(f"plan-{name}")
        (folder / "prod.yaml").write_text(text)
        out[name] = planning.synthesize(load_config(folder / "prod.yaml").config, folder / "cdk.out")
    return out


def plan_for(synths, edit) -> planning.Plan:
    return planning.compare(planning.read_templates(synths["base"]), planning.read_templates(synths[edit]), "base")


def logical_ids(synths, stack, resource_type) -> list[str]:
    template = planning.read_templates(synths["base"])[f"HyperPod-prod-{stack}"]
    return sorted(k for k, r in template["Resources"].items() if r["Type"] == resource_type)


def config_of(synths, edit) -> str:
    """The config file a synth was made from (`plan --current` checks the synth is of it): the base is the
    shared synth of config/prod.yaml, each edit a file beside its synth."""
    return str(ROOT / "config" / "prod.yaml") if edit == "base" else str(synths[edit].parent / "prod.yaml")


def refused(plan, allowed=()) -> dict[str, tuple[str, ...]]:
    return {c.logical_id: c.reasons for c in plan.refused(allowed)}


@pytest.mark.synth
@pytest.mark.slow
def test_rename_replaces_the_hyperpod_cluster_and_everything_bound_to_it(synths):
    plan = plan_for(synths, "rename")
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    # The policy (API-backed in us-west-2) and every quota name the cluster's ARN, which is create-only; a
    # replaced allocation drops its running jobs' guarantee, so they count as stateful.
    quotas = logical_ids(synths, "governance", "AWS::SageMaker::ComputeQuota")
    policy, = logical_ids(synths, "governance", "Custom::SageMakerClusterSchedulerConfig")
    assert refused(plan) == {cluster: ("create-only ClusterName changes",),
                             **{q: (f"create-only ClusterArn refers to {cluster}, which is replaced",) for q in quotas},
                             policy: (f"create-only Parameters/ClusterArn refers to {cluster}, which is replaced",)}
    assert set(refused(plan, (cluster,))) == {*quotas, policy}


@pytest.mark.synth
def test_zone_append_adds_subnets_and_leaves_both_clusters_alone(synths):
    """Zones are append-only: the cluster-level subnets are the recorded
    cluster_zone_ids, so a new zone only adds its subnet, NAT and routes."""
    plan = plan_for(synths, "zone_append")
    assert refused(plan) == {}
    assert {c.type for c in plan.changes if c.action == "add"} >= {"AWS::EC2::Subnet"}
    assert not [c for c in plan.changes if c.type in ("AWS::EKS::Cluster", "AWS::SageMaker::Cluster")
                and c.action in ("replace", "remove")]


@pytest.mark.synth
def test_zone_reorder_changes_no_subnet_and_no_cluster(synths):
    plan = plan_for(synths, "zone_reorder")
    assert refused(plan) == {}
    assert not [c for c in plan.changes if c.type in ("AWS::EC2::Subnet", "AWS::EKS::Cluster",
                                                       "AWS::SageMaker::Cluster")]


@pytest.mark.synth
def test_changing_the_cluster_zones_replaces_the_hyperpod_cluster_through_its_vpc_config(synths):
    plan = plan_for(synths, "cluster_zones")
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    assert refused(plan)[cluster] == ("create-only VpcConfig changes",)


@pytest.mark.synth
def test_team_removal_is_called_out_and_not_refused(synths):
    plan = plan_for(synths, "team_removal")
    assert refused(plan) == {}
    teams = {t.team: t for t in plan.teams}
    assert sorted(teams) == ["research-vision", "shared"]
    assert teams["research-vision"].change == "removed" and teams["research-vision"].may_preempt
    # The shared pool grows from 1 instance to 20 GPUs (2.5 instances): not lowered.
    assert teams["shared"].before["ml.p5.48xlarge"] == {"Count": 1.0}
    assert teams["shared"].after["ml.p5.48xlarge"] == {"Accelerators": 20.0}
    assert not teams["shared"].may_preempt
    deleted = {c.type for c in plan.changes if c.action == "remove"}
    assert deleted == {"AWS::SageMaker::ComputeQuota", "Custom::KubernetesManifests", "AWS::EKS::AccessEntry",
                       "AWS::IAM::Role"}
    text = planning.render(plan)
    assert ("    ! its running jobs lose their queue: treat them as stopped; the kit deletes its volume claims and RBAC "
            "in hyperpod-ns-research-vision" in text)
    assert planning.REMOVAL_DOC in text
    assert "running jobs of team shared" not in text


@pytest.mark.synth
def test_quota_cut_names_the_team_and_the_instance_type(synths):
    plan = plan_for(synths, "quota_cut")
    assert refused(plan) == {}
    teams = {t.team: t for t in plan.teams}
    assert teams["production-training"].lowered == ("ml.p5.48xlarge",)
    assert teams["shared"].lowered == ()
    assert "      ml.p5.48xlarge: 3 instances -> 2 instances" in planning.render(plan).splitlines()


def test_the_removal_procedure_plan_points_to_is_a_page():
    # plan names the page itself, not a README section to look up.
    assert "The safe order:" in (ROOT / planning.REMOVAL_DOC).read_text()


@pytest.mark.synth
@pytest.mark.parametrize(("edit", "allowed", "code"), [
    ("rename", (), 1), ("quota_cut", (), 0), ("team_removal", (), 0),
])
def test_cli_exit_codes_against_a_saved_synth(synths, edit, allowed, code):
    result = CliRunner().invoke(main, ["plan", config_of(synths, edit), "--baseline", str(synths["base"]),
                                       "--current", str(synths[edit]), "--format", "json"])
    assert result.exit_code == code, result.output
    document = json.loads(result.stdout)
    assert document["ok"] is (code == 0)


@pytest.mark.synth
def test_cli_allow_replace_accepts_the_named_resource_only(synths):
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    args = ["plan", config_of(synths, "rename"), "--baseline", str(synths["base"]), "--current", str(synths["rename"])]
    allowed = CliRunner().invoke(main, [*args, "--allow-replace", cluster])
    # The cluster is accepted; the quotas that follow it keep their fixed names, so the deploy would fail.
    assert allowed.exit_code == 1, allowed.output
    assert f"logical id {cluster}): create-only ClusterName changes; the old one stays in the account " \
           "(UpdateReplacePolicy Retain): its nodes keep running and billing until you delete it - allowed by " \
           "--allow-replace" in allowed.stdout
    assert "will FAIL: the name prod-policy is taken" in allowed.stdout
    wrong = CliRunner().invoke(main, [*args, "--allow-replace", "NoSuchResource"])
    assert wrong.exit_code == 1
    assert "--allow-replace NoSuchResource: no such stateful replacement" in wrong.stderr
    as_json = CliRunner().invoke(main, [*args, "--allow-replace", "NoSuchResource", "--format", "json"])
    assert json.loads(as_json.stdout)["allow_replace_unmatched"] == ["NoSuchResource"]


@pytest.mark.parametrize(("args", "message"), [
    ([], "give exactly one baseline"),
    (["--baseline", "/nonexistent", "--against-account"], "give exactly one baseline"),
])
def test_cli_usage_errors_exit_2(args, message):
    result = CliRunner().invoke(main, ["plan", str(ROOT / "config/prod.yaml"), *args])
    assert result.exit_code == 2 and message in result.output


@pytest.mark.synth
def test_cli_unreadable_baseline_exits_2_without_traceback(synths, tmp_path):
    (tmp_path / "broken.template.json").write_text("{not json")
    result = CliRunner().invoke(main, ["plan", config_of(synths, "base"), "--baseline", str(tmp_path),
                                       "--current", str(synths["base"])])
    assert result.exit_code == 2
    assert "broken.template.json: cannot be read as JSON" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.synth
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_baseline_template_that_is_a_fifo_or_dev_zero_exits_2_at_once(synths, tmp_path, kind):
    """Hostile round 3, class 4: a FIFO hung plan, a symlink to /dev/zero ended in MemoryError (exit 3)."""
    template = tmp_path / "HyperPod-dev-network.template.json"
    if kind == "fifo":
        os.mkfifo(template)
    else:
        template.symlink_to("/dev/zero")
    result = subprocess.run([sys.executable, "-m", "cdk_app", "plan", config_of(synths, "base"), "--baseline",
                             str(tmp_path), "--current", str(synths["base"])], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert f"{template}: is a " in result.stderr and "not a regular file" in result.stderr
    assert "standard input" not in result.stderr  # a template cannot come from there (fresh hostile round, P2)
    assert "Traceback" not in result.stderr


@pytest.mark.synth
@pytest.mark.slow
def test_baseline_from_a_git_ref_is_that_ref_synthesized(tmp_path):
    """HEAD's own app.py and constructs, run from an archive of the ref with this virtualenv."""
    out = planning.synthesize_ref(ROOT, "HEAD", "config/dev.yaml", "dev", tmp_path / "ref")
    assert set(planning.read_templates(out)) == {"HyperPod-dev-network", "HyperPod-dev-cluster",
                                                 "HyperPod-dev-governance", "HyperPod-dev-storage"}
    with pytest.raises(planning.PlanInputError, match="no-such-ref"):
        planning.synthesize_ref(ROOT, "no-such-ref", "config/dev.yaml", "dev", tmp_path / "bad")
    # An environment added since the ref has no baseline: everything in it is new.
    assert planning.synthesize_ref(ROOT, "HEAD", "config/qa.yaml", "qa", tmp_path / "missing") is None


@pytest.mark.synth
def test_plan_of_an_environment_added_since_the_ref_creates_everything_and_refuses_nothing(synths, tmp_path):
    """A pull request that adds config/<new>.yaml: CI runs plan against the base ref, which lacks the file."""
    repo = tmp_path / "repo"
    (repo / "config").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("base\n")
    subprocess.run(["git", "-C", str(repo), "add", "README.md"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
                   check=True)
    (repo / "config" / "prod.yaml").write_text(BASE)
    result = CliRunner().invoke(main, ["plan", str(repo / "config" / "prod.yaml"), "--against-ref", "HEAD",
                                       "--current", str(synths["base"])])
    assert result.exit_code == 0, result.output
    assert "new environment" in result.output


def stub_network_then_missing_cluster(stub, network):
    stub.add_response("get_template", {"TemplateBody": json.dumps(network)},
                      {"StackName": "HyperPod-prod-network", "TemplateStage": "Original"})
    stub.add_client_error("get_template", service_error_code="ValidationError",
                          service_message="Stack with id HyperPod-prod-cluster does not exist",
                          expected_params={"StackName": "HyperPod-prod-cluster", "TemplateStage": "Original"})


@pytest.mark.synth
def test_deployed_templates_are_read_with_get_template_and_missing_stacks_count_as_new(synths):
    """Against botocore's real CloudFormation model."""
    client = boto3.client("cloudformation", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="x")
    network = planning.read_templates(synths["base"])["HyperPod-prod-network"]
    with Stubber(client) as stub:
        stub_network_then_missing_cluster(stub, network)
        deployed = planning.deployed_templates(client, ["HyperPod-prod-network", "HyperPod-prod-cluster"])
    assert deployed == {"HyperPod-prod-network": network}
    with Stubber(client) as stub:
        stub_network_then_missing_cluster(stub, network)
        stub.add_client_error("get_template", service_error_code="AccessDenied", service_message="not allowed",
                              expected_params={"StackName": "HyperPod-prod-governance", "TemplateStage": "Original"})
        with pytest.raises(planning.PlanInputError, match="GetTemplate HyperPod-prod-governance failed"):
            planning.deployed_templates(client, ["HyperPod-prod-network", "HyperPod-prod-cluster",
                                                 "HyperPod-prod-governance"])


@pytest.mark.synth
def test_cli_refuses_a_synth_of_another_environment(synths):
    result = CliRunner().invoke(main, ["plan", str(ROOT / "config/dev.yaml"), "--baseline", str(synths["base"]),
                                       "--current", str(synths["base"])])
    assert result.exit_code == 2
    assert "holds no stack of environment dev (HyperPod-dev-*), only: HyperPod-prod-cluster" in result.stderr


def test_an_environment_is_not_the_start_of_another_ones_stack_names():
    # prod-eu's stacks start with prod's prefix; CloudFormation stack names allow '-' (and so do environments).
    templates = {name: {"Resources": {}} for name in (
        "HyperPod-prod-eu-network", "HyperPod-prod-eu-teams-3", "HyperPod-prod-eu-batch", "HyperPod-prod-cluster",
        "HyperPod-prod-teams-12", "CDKToolkit", "HyperPod-prod-extra")}
    assert set(planning.environment_stacks(templates, "prod", "x")) == {"HyperPod-prod-cluster", "HyperPod-prod-teams-12"}
    assert set(planning.environment_stacks(templates, "prod-eu", "x")) == {
        "HyperPod-prod-eu-network", "HyperPod-prod-eu-teams-3", "HyperPod-prod-eu-batch"}
    with pytest.raises(planning.PlanInputError, match=r"no stack of environment prod-e \(HyperPod-prod-e-\*\).*"
                                                      r"renamed from prod or prod-eu"):
        planning.environment_stacks(templates, "prod-e", "x")


def quota_template(kind, team="a", count=2, state="Enabled", retain=False):
    props = {"Name": f"dev-{team}", "ClusterArn": "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdefghijkl",
             "ActivationState": state,
             "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": count}]},
             "ComputeQuotaTarget": {"TeamName": team}}
    resource = {"Type": kind, "Properties": {"Parameters": props} if kind.startswith("Custom::") else props}
    if retain:
        resource["DeletionPolicy"] = "Retain"
    return {"HyperPod-dev-governance": {"Resources": {"Quota": resource}}}


@pytest.mark.parametrize("kind", ["AWS::SageMaker::ComputeQuota", "Custom::SageMakerComputeQuota"])
def test_team_name_is_create_only_on_both_quota_paths(kind):
    """The API-backed quota keeps the native schema's createOnlyProperties under Parameters."""
    plan = planning.compare(quota_template(kind), quota_template(kind, team="b"), "t")
    change, = plan.changes
    prefix = "Parameters/" if kind.startswith("Custom::") else ""
    assert change.action == "replace"
    assert change.reasons == (f"create-only {prefix}Name changes", f"create-only {prefix}ComputeQuotaTarget/TeamName changes")
    assert [(t.team, t.change) for t in plan.teams] == [("a", "removed"), ("b", "added")]


def test_disabling_a_team_warns_and_a_raise_does_not():
    disabled = planning.compare(quota_template("Custom::SageMakerComputeQuota"),
                                quota_template("Custom::SageMakerComputeQuota", state="Disabled"), "t")
    team, = disabled.teams
    assert team.disabled and team.may_preempt
    assert "~ team a: allocation disabled" in planning.render(disabled)
    raised = planning.compare(quota_template("AWS::SageMaker::ComputeQuota"),
                              quota_template("AWS::SageMaker::ComputeQuota", count=3), "t")
    assert not raised.teams[0].may_preempt and raised.changes[0].action == "modify"


def test_a_retained_stateful_deletion_is_still_refused_and_says_it_is_kept():
    before = {"HyperPod-dev-network": {"Resources": {"Vpc": {"Type": "AWS::EC2::VPC", "DeletionPolicy": "Retain",
                                                             "Properties": {"CidrBlock": "10.0.0.0/16"}}}}}
    plan = planning.compare(before, {"HyperPod-dev-network": {"Resources": {}}}, "t")
    assert [c.logical_id for c in plan.refused()] == ["Vpc"]
    assert "the old one stays in the account (DeletionPolicy Retain)" in planning.render(plan)


@pytest.mark.synth
def test_cli_config_with_errors_exits_1_and_unreadable_exits_2(synths, tmp_path):
    bad = tmp_path / "prod.yaml"
    bad.write_text(BASE.replace(TRAINING_QUOTA, TRAINING_QUOTA.replace("count: 3", "count: 30")))
    result = CliRunner().invoke(main, ["plan", str(bad), "--baseline", str(synths["base"])])
    assert result.exit_code == 1 and "HPK501" in result.stderr
    missing = CliRunner().invoke(main, ["plan", str(tmp_path / "nope.yaml"), "--baseline", str(synths["base"])])
    assert missing.exit_code == 2 and "HPK001" in missing.stderr


# ------------------------------------------------------------------ destructive updates that are not replacements


def hazards(plan) -> dict[str, str]:
    return {h.name: h.text for h in plan.hazards}


@pytest.mark.synth
def test_instance_group_rename_shrink_and_dropped_training_plan_are_refused_by_group(synths):
    """UpdateCluster deletes a group missing from the desired state (InstanceGroupsToDelete, botocore's
    sagemaker model) with its nodes: an in-place update, so createOnlyProperties never saw it."""
    plan = plan_for(synths, "groups")
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    found = hazards(plan)
    assert found[f"{cluster}/h100-a"].startswith("instance group h100-a removed: its 6 x ml.p5.48xlarge nodes are "
                                                 "terminated")
    assert "h100-x" in found[f"{cluster}/h100-a"]
    assert "EBS volume 2000 -> 1000 GiB" in found[f"{cluster}/h100-b"]
    assert "training plan h100-q4 dropped" in found[f"{cluster}/h100-b"]
    assert "4 x ml.p5.48xlarge nodes are terminated and re-created" in found[f"{cluster}/h100-b"]
    # A scale-down is called out as a group change, not refused.
    assert f"{cluster}/system" not in found
    assert [g.to_json() for g in plan.groups if g.group == "system"] == [
        {"group": "system", "instance_type": "ml.m7i.2xlarge", "change": "shrunk", "before": 2, "after": 1}]
    assert plan.blocked() == sorted([f"{cluster}/h100-a", f"{cluster}/h100-b"])
    assert plan.blocked((f"{cluster}/h100-a", f"{cluster}/h100-b")) == []
    text = planning.render(plan)
    assert "REFUSED (name it with --allow-replace " + f"{cluster}/h100-a" in text
    assert "  ~ instance group system shrunk: 2 -> 1 x ml.m7i.2xlarge (1 node(s) removed" in text
    assert "  - instance group h100-a removed: 6 x ml.p5.48xlarge" in text


@pytest.mark.synth
def test_cli_refuses_a_group_removal_and_accepts_it_named(synths):
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    args = ["plan", config_of(synths, "groups"), "--baseline", str(synths["base"]), "--current", str(synths["groups"])]
    refused_run = CliRunner().invoke(main, [*args, "--format", "json"])
    assert refused_run.exit_code == 1, refused_run.output
    assert json.loads(refused_run.stdout)["refused"] == [f"{cluster}/h100-a", f"{cluster}/h100-b"]
    named = CliRunner().invoke(main, [*args, "--allow-replace", f"{cluster}/h100-a", "--allow-replace", f"{cluster}/h100-b"])
    assert named.exit_code == 0, named.output
    assert "no such stateful" not in named.stderr


@pytest.mark.synth
def test_removing_the_first_admin_deletes_only_its_access_entry(synths):
    """Access entries are keyed by principal: removing PlatformAdmin leaves BreakGlass's entry alone
    (it was replaced by a positional id before)."""
    plan = plan_for(synths, "first_admin_removed")
    entries = [(c.action, c.logical_id) for c in plan.changes if c.type == "AWS::EKS::AccessEntry"]
    assert len(entries) == 1 and entries[0][0] == "remove" and "PlatformAdmin" in entries[0][1]
    assert plan.blocked() == []


def test_an_access_entry_moved_to_a_new_id_for_the_same_principal_fails():
    entry = {"Type": "AWS::EKS::AccessEntry", "Properties": {"ClusterName": "c", "PrincipalArn": "arn:aws:iam::1:role/A"}}
    plan = planning.compare({"S": {"Resources": {"Old": entry}}}, {"S": {"Resources": {"New": entry}}}, "t")
    hazard, = plan.hazards
    assert hazard.fails and "the service allows one, and CloudFormation creates the new one first" in hazard.text
    assert plan.blocked(("New",)) == ["New"]


def test_a_quota_moved_to_another_stack_under_its_fixed_name_is_refused_unless_named():
    """Team stacks move team resources out of the governance stack: the quota keeps Name dev-a under a new stack."""
    quota = quota_template("AWS::SageMaker::ComputeQuota")["HyperPod-dev-governance"]["Resources"]["Quota"]
    before = {"HyperPod-dev-governance": {"Resources": {"Quota": quota}}, "HyperPod-dev-team-a": {"Resources": {}}}
    after = {"HyperPod-dev-governance": {"Resources": {}}, "HyperPod-dev-team-a": {"Resources": {"TeamQuota": quota}}}
    plan = planning.compare(before, after, "t")
    hazard, = plan.hazards
    assert not hazard.fails and "HyperPod-dev-team-a must not be deployed before HyperPod-dev-governance" in hazard.text
    assert plan.blocked() == ["TeamQuota"] and plan.blocked(("TeamQuota",)) == []


@pytest.mark.synth
def test_quota_type_flip_fails_and_is_refused_even_when_named(synths):
    plan = plan_for(synths, "quota_type_flip")
    flipped = [c for c in plan.changes if c.reasons and c.reasons[0].startswith("resource type")]
    assert len(flipped) == 6 and all(c.fails and c.dangerous for c in flipped)
    assert "CloudFormation refuses a resource type change" in planning.render(plan)
    assert set(plan.blocked(tuple(c.logical_id for c in flipped))) == {c.logical_id for c in flipped}


@pytest.mark.synth
def test_team_rename_is_refused_unless_named(synths):
    plan = plan_for(synths, "team_rename")
    assert plan.blocked() == ["team:research-nlp"]
    said = hazards(plan)["team:research-nlp"]
    assert "research-nlp's running jobs lose their queue and hyperpod-ns-research-nlp goes, as for a removal" in said
    assert "the new name starts empty: a new namespace, queue and team role (its members assume the new role's ARN" in said
    assert "docs/how-to/remove-a-team.md" in said
    assert plan.blocked(("team:research-nlp",)) == []
    # The verdict is read with the teams it is about, not under the nodes' heading.
    text = planning.render(plan).splitlines()
    rename = next(i for i, line in enumerate(text) if "(a rename?)" in line)
    assert text.index("teams:") < rename
    assert "nodes, allocations and protection:" not in text[:rename]
    assert all(not line.endswith(":") or line.startswith(" ") for line in text[text.index("teams:") + 1:rename])


@pytest.mark.synth
def test_rename_knock_on_quota_replacements_fail_on_their_fixed_names(synths):
    """Cluster renamed: each quota is replaced (its ClusterArn is create-only) but keeps Name prod-<team>,
    which CloudFormation cannot create a second time - refused even with --allow-replace."""
    plan = plan_for(synths, "rename")
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    quotas = logical_ids(synths, "governance", "AWS::SageMaker::ComputeQuota")
    assert all(c.fails and "is taken" in c.fails for c in plan.changes if c.logical_id in quotas)
    assert set(quotas) <= set(plan.blocked((cluster, *quotas)))


@pytest.mark.synth
def test_rename_with_everything_named_says_what_fails_and_what_to_do_instead(synths):
    """Issue 27: with every replacement named, the summary called the failing ones 'not named', each of their
    lines said 'will FAIL' twice, and nothing said to keep the name or move to a new environment, or that
    the retained old cluster keeps billing."""
    plan = plan_for(synths, "rename")
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    failing = sorted(c.logical_id for c in plan.changes if c.fails)
    assert len(failing) == 7 and cluster not in failing  # the policy and six quotas keep fixed names
    named = planning.render(plan, (cluster, *failing)).splitlines()
    assert all(line.count("will FAIL") <= 1 for line in named)
    assert [line for line in named if "will FAIL" in line] == [line for line in named if any(f"logical id {f})" in line
                                                                                             for f in failing)]
    assert named[-1] == ("will fail: 7 change(s) CloudFormation refuses, whatever --allow-replace names: "
                         + ", ".join(failing))
    assert not [line for line in named if "not named" in line]
    kept, = [line for line in named if f"logical id {cluster})" in line]
    assert kept.endswith("(UpdateReplacePolicy Retain): its nodes keep running and billing until you delete it "
                         "- allowed by --allow-replace")
    advice, = [line for line in named if line.startswith("  ! the HyperPod cluster cannot be replaced")]
    assert "(create-only ClusterName changes)" in advice and "Keep hyperpod.cluster_name" in advice
    assert "create a new environment" in advice and "(docs/how-to/edit-safely.md)" in advice
    # Nothing named: the cluster is the one change naming would accept, counted apart from the failing ones.
    unnamed = planning.render(plan).splitlines()
    assert unnamed[-2:] == [named[-1], f"refused: 1 change(s) that destroy, not named with --allow-replace: {cluster}"]


def test_the_section_the_cluster_advice_points_to_is_a_page():
    assert ("| Things to know before editing | [docs/how-to/edit-safely.md](docs/how-to/edit-safely.md) |"
            in (ROOT / "README.md").read_text())
    assert "# Things to know before editing" in (ROOT / "docs" / "how-to" / "edit-safely.md").read_text()


@pytest.mark.synth
def test_same_name_vpc_config_replacement_will_fail(synths):
    plan = plan_for(synths, "cluster_zones")
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    change, = [c for c in plan.changes if c.logical_id == cluster]
    assert change.fails.startswith("the name ml-prod is taken")
    assert cluster in plan.blocked((cluster,))


# ------------------------------------------------------------------------------------------------- protection


def weakened(synths, tmp_path) -> Path:
    """The base synth with the HyperPod cluster's policies dropped and termination protection off."""
    import shutil

    folder = tmp_path / "weak"
    shutil.copytree(synths["base"], folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    cluster_file = None
    for artifact_id, artifact in manifest["artifacts"].items():
        properties = artifact.get("properties", {})
        if properties.get("stackName", artifact_id) == "HyperPod-prod-cluster":
            properties["terminationProtection"] = False
            cluster_file = folder / properties["templateFile"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    template = json.loads(cluster_file.read_text())
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::SageMaker::Cluster":
            resource.pop("DeletionPolicy"), resource.pop("UpdateReplacePolicy")
    cluster_file.write_text(json.dumps(template))
    return folder


@pytest.mark.synth
def test_dropped_policies_and_termination_protection_are_refused(synths, tmp_path):
    weak = weakened(synths, tmp_path)
    cluster, = logical_ids(synths, "cluster", "AWS::SageMaker::Cluster")
    plan = planning.compare(planning.read_templates(synths["base"]), planning.read_templates(weak), "t",
                            (planning.termination_protection(synths["base"]), planning.termination_protection(weak)))
    assert plan.blocked() == ["HyperPod-prod-cluster", cluster]
    texts = [h.text for h in plan.hazards]
    assert any("DeletionPolicy RetainExceptOnCreate dropped" in t for t in texts)
    assert any("UpdateReplacePolicy Retain dropped" in t for t in texts)
    assert any(t.startswith("stack HyperPod-prod-cluster: termination protection turned off") for t in texts)


def test_replacement_text_reads_update_replace_policy():
    def cluster(name, replace_policy):
        return {"S": {"Resources": {"C": {"Type": "AWS::SageMaker::Cluster", "DeletionPolicy": "Retain",
                                          "UpdateReplacePolicy": replace_policy,
                                          "Properties": {"ClusterName": name}}}}}
    plan = planning.compare(cluster("a", "Delete"), cluster("b", "Delete"), "t")
    assert "the old one is DELETED" in planning.render(plan)
    kept = planning.compare(cluster("a", "Retain"), cluster("b", "Retain"), "t")
    assert "the old one stays in the account (UpdateReplacePolicy Retain)" in planning.render(kept)


def test_cdk_metadata_is_not_a_change():
    meta = {"CDKMetadata": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": "v2:deflate64:x"}}}
    assert planning.compare({"S": {"Resources": meta}}, {"S": {"Resources": {}}}, "t").changes == []


def test_a_stack_that_left_the_app_is_not_shown_deleted_and_points_to_its_removal():
    queue = {"Type": "AWS::Batch::JobQueue", "Properties": {"JobQueueName": "q", "Priority": 1}}
    before = {"HyperPod-dev-cluster": {"Resources": {}}, "HyperPod-dev-batch": {"Resources": {"Q": queue}}}
    plan = planning.compare(before, {"HyperPod-dev-cluster": {"Resources": {}}}, "t")
    assert plan.changes == [] and plan.left_stacks == ["HyperPod-dev-batch"]
    text = planning.render(plan)
    assert "stack HyperPod-dev-batch is no longer in the app: `cdk deploy` does not delete it" in text
    assert planning.STACK_REMOVAL_DOC in text


def test_batch_queue_rename_is_refused():
    """AWS::Batch::JobQueue's JobQueueName is create-only (cfn-lint schema): a renamed queue is a new queue."""
    def queue(name):
        return {"HyperPod-dev-batch": {"Resources": {"Q": {"Type": "AWS::Batch::JobQueue",
                                                          "Properties": {"JobQueueName": name, "Priority": 1}}}}}
    plan = planning.compare(queue("dev-p4d"), queue("dev-p4d-v2"), "t")
    assert plan.blocked() == ["Q"]


# ---------------------------------------------------------------------------------------- inputs are checked


@pytest.mark.synth
def test_current_synth_of_another_config_is_refused(synths):
    result = CliRunner().invoke(main, ["plan", str(ROOT / "config/prod.yaml"), "--baseline", str(synths["base"]),
                                       "--current", str(synths["rename"])])
    assert result.exit_code == 2
    assert "was synthesized from another version of the config" in result.stderr


def test_against_account_refuses_credentials_of_another_account():
    sts = boto3.client("sts", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(sts) as stub:
        stub.add_response("get_caller_identity", {"Account": "111122223333", "Arn": "arn:aws:iam::111122223333:user/a",
                                                  "UserId": "AIDAEXAMPLE"}, {})
        with pytest.raises(planning.PlanInputError, match="credentials are of account 111122223333, the config "
                                                          "deploys to 444455556666"):
            planning.check_account(sts, "444455556666")
    with Stubber(sts) as stub:
        stub.add_response("get_caller_identity", {"Account": "444455556666", "Arn": "arn:aws:iam::444455556666:user/a",
                                                  "UserId": "AIDAEXAMPLE"}, {})
        planning.check_account(sts, "444455556666")


@pytest.mark.synth
def test_environment_renamed_since_the_ref_is_refused_naming_both_sides(tmp_path):
    """Before: the ref's file was synthesized with the new name and its HPK020 told the admin to make the
    edit they had just made."""
    repo = tmp_path / "repo"
    (repo / "config").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "config" / "dev.yaml").write_text((ROOT / "config" / "dev.yaml").read_text())
    subprocess.run(["git", "-C", str(repo), "add", "config"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
                   check=True)
    with pytest.raises(planning.PlanInputError, match=r"environment renamed: config/dev.yaml says environment: "
                                                      r"development, at HEAD it said dev\. A rename deploys a second"):
        planning.synthesize_ref(repo, "HEAD", "config/dev.yaml", "development", tmp_path / "ref")


def test_hpk311_hint_keeps_the_deployed_value_not_the_edited_one(tmp_path):
    from support.bad_configs import BASE as VALID

    from cdk_app.validator.report import check_file

    path = tmp_path / "dev.yaml"
    path.write_text(VALID.replace("cluster_policy: native,", "cluster_policy: api,"))
    finding, = [f for f in check_file(path, str(path)).findings if f.code == "HPK311"]
    assert "keep api" not in finding.hint
    assert finding.hint.startswith("not deployed yet: record cluster_policy: native; already deployed: keep the type "
                                   "its stacks were deployed with, whatever this file now says")


@pytest.mark.synth
def test_deployed_termination_protection_is_read_and_turning_it_off_is_refused(synths):
    """DescribeStacks' EnableTerminationProtection (botocore's CloudFormation model) against the synth's manifest."""
    from datetime import datetime

    client = boto3.client("cloudformation", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        stub.add_response("describe_stacks", {"Stacks": [{
            "StackName": "HyperPod-prod-network", "CreationTime": datetime(2026, 11, 1, tzinfo=UTC),
            "StackStatus": "UPDATE_COMPLETE", "EnableTerminationProtection": True}]},
            {"StackName": "HyperPod-prod-network"})
        deployed = planning.deployed_protection(client, ["HyperPod-prod-network"])
    assert deployed == {"HyperPod-prod-network": True}
    templates = planning.read_templates(synths["base"])
    after = planning.termination_protection(synths["base"])
    assert after["HyperPod-prod-network"] is True  # the kit protects the network stack
    assert planning.compare(templates, templates, "t", (deployed, after)).hazards == []
    unprotected = planning.compare(templates, templates, "t", (deployed, {**after, "HyperPod-prod-network": False}))
    assert unprotected.blocked() == ["HyperPod-prod-network"]


@pytest.mark.synth
def test_against_account_without_credentials_exits_2_with_the_fix(synths, monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    result = CliRunner().invoke(main, ["plan", config_of(synths, "base"), "--against-account",
                                       "--current", str(synths["base"])])
    assert result.exit_code == 2
    assert "no AWS credentials for --against-account: set AWS_PROFILE or pass --profile" in result.stderr


@pytest.mark.synth
@pytest.mark.parametrize("before,after,switched", [("isolation_off", "base", "on"), ("base", "isolation_off", "off")])
def test_switching_gpu_isolation_in_a_deployed_environment_is_refused_until_named(synths, before, after, switched):
    """The chart's device plugin changes at the deploy, the nodes' toolkit only on nodes created afterwards:
    until the GPU nodes are replaced the two disagree (GPU pods fail, or a GPU-less container sees every GPU
    once gpu-visibility is gone). The release resource is the hazard's name for --allow-replace."""
    plan = planning.compare(planning.read_templates(synths[before]), planning.read_templates(synths[after]), before)
    [release] = [logical_id for template in planning.read_templates(synths[before]).values()
                 for logical_id, r in template["Resources"].items() if r["Type"] == "Custom::HyperPodHelmRelease"]
    found = {h.name: h for h in plan.hazards if h.name == release}
    assert found[release].refuse
    assert f"GPU isolation switched {switched}" in found[release].text
    assert "update-cluster-software" in found[release].text
    assert release in {h.name for h in plan.refused_hazards(())}
    assert release not in {h.name for h in plan.refused_hazards((release,))}
