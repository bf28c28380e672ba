"""HPK728: a Batch team role's trust policy and inline policy against IAM's size quotas, measured on the documents
the synthesized Batch stack really holds.

Sources of truth: the template CDK synthesizes (its tokens resolved below as CloudFormation resolves them, with
the ARN formats of the Service Authorization Reference's AWS Batch resource-type table,
https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsbatch.html: job-queue
arn:${Partition}:batch:${Region}:${Account}:job-queue/${JobQueueName}, quota-share
...:job-queue/${JobQueueName}/quota-share/${QuotaShareName}); IAM's quotas
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html: role trust policy 2,048 characters by
default, a role's inline policies 10,240 characters; white space is not counted)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from support.app_synth import build, templates
from support.paths import ROOT, SUPPORT

from cdk_app.config.loader import load_config
from cdk_app.validator.report import check_file
from cdk_app.validator.rules.batch import team_role_documents
from hyperpod_constructs.private.role_trust import policy_size

ACCOUNT, REGION, PARTITION = "111122223333", "us-east-1", "aws"
IAM_TRUST_LIMIT, IAM_INLINE_LIMIT = 2048, 10240  # the IAM quotas page, not the kit's constants


def trust_config(principals: int) -> str:
    arns = "".join(f"        - arn:aws:iam::{ACCOUNT}:role/research-group-scientist-role-number-{n:03}\n"
                   for n in range(principals))
    return (f'environment: iam\naccount: "{ACCOUNT}"\nregion: {REGION}\nbatch:\n  service_environments:\n'
            "    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n"
            "  queues:\n    - {name: f, service_environment: g6}\n  teams:\n    - name: A\n      queues: [f]\n"
            f"      execution_role_arn: arn:aws:iam::{ACCOUNT}:role/ATrain\n      principals:\n{arns}")


def inline_config(queues: int, name_length: int = 114) -> str:
    """A team on `queues` queues of each kind the policy names: fair share (with a share identifier and a
    priority cap), one quota share, FIFO - with long names, so that few queues reach the limit."""
    names = [f"q{n:02}".ljust(name_length, "x") for n in range(queues)]
    environments = "".join(f"    - {{name: e{n:02}, capacity_limits: [{{unit: NUM_INSTANCES, max_capacity: 1}}]}}\n"
                           for n in range(queues))
    queue_lines = "".join(f"    - {{name: {name}, service_environment: e{n:02}"
                          + (", scheduling: fair_share}\n" if n % 2 else "}\n") for n, name in enumerate(names))
    return (f'environment: iam\naccount: "{ACCOUNT}"\nregion: {REGION}\nbatch:\n  service_environments:\n'
            + environments + "    - {name: p4d, capacity_limits: [{unit: ml.p4d.24xlarge, max_capacity: 4}]}\n"
            + "  queues:\n" + queue_lines + f"    - {{name: {'z' * 116}, service_environment: p4d, "
            "scheduling: quota_share}\n  teams:\n"
            f"    - name: {'A' * 128}\n      queues: [{', '.join(names)}, {'z' * 116}]\n      share_identifier: AAA\n"
            f"      max_priority: 9999\n      quota: [{{instance_type: ml.p4d.24xlarge, count: 1}}]\n"
            f"      principals: [arn:aws:iam::{ACCOUNT}:role/A]\n"
            f"      execution_role_arn: arn:aws:iam::{ACCOUNT}:role/ATrain\n")


def resolve(value: Any, resources: dict[str, Any]) -> Any:
    """CloudFormation's resolution of the intrinsics the Batch stack's IAM documents use."""
    if isinstance(value, list):
        return [resolve(v, resources) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Ref"}:
        return {"AWS::Partition": PARTITION, "AWS::Region": REGION, "AWS::AccountId": ACCOUNT}[value["Ref"]]
    if set(value) == {"Fn::Join"}:
        separator, parts = value["Fn::Join"]
        return separator.join(resolve(p, resources) for p in parts)
    if set(value) == {"Fn::GetAtt"}:
        logical_id, attribute = value["Fn::GetAtt"]
        props = resources[logical_id]["Properties"]
        prefix = f"arn:{PARTITION}:batch:{REGION}:{ACCOUNT}:job-queue/"
        if attribute == "JobQueueArn":
            return prefix + props["JobQueueName"]
        if attribute == "QuotaShareArn":
            queue = resolve(props["JobQueue"], resources).removeprefix(prefix)
            return f"{prefix}{queue}/quota-share/{props['QuotaShareName']}"
        raise AssertionError(f"unexpected attribute {attribute}")
    return {k: resolve(v, resources) for k, v in value.items()}


def iam_characters(document: Any) -> int:
    """What IAM counts: the JSON without any white space."""
    return len(re.sub(r"\s", "", json.dumps(document)))


def synthesized(write_config, tmp_path, text: str) -> tuple[dict[str, Any], dict[str, Any], Any]:
    path = write_config(text)
    stack = templates(build(path, tmp_path / "out"))["HyperPod-iam-batch"].to_json()
    resources = stack["Resources"]
    [role] = [r for r in resources.values() if r["Type"] == "AWS::IAM::Role"]
    [policy] = [r for r in resources.values() if r["Type"] == "AWS::IAM::Policy"]
    config = load_config(path).config
    [team] = config.batch.teams
    return (resolve(role["Properties"]["AssumeRolePolicyDocument"], resources),
            resolve(policy["Properties"]["PolicyDocument"], resources), team_role_documents(config, team))


def largest(make, limit: int, which: int) -> int:
    """The largest size parameter whose estimated document is within `limit` (the estimate grows with it)."""
    n = 1
    while True:
        config = load_config_text(make(n + 1))
        if policy_size(team_role_documents(config, config.batch.teams[0])[which]) > limit:
            return n
        n += 1


def load_config_text(text: str):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "env.yaml"
        path.write_text(text)
        return load_config(path).config


@pytest.mark.synth
@pytest.mark.parametrize(("make", "which", "limit", "field"), [
    (trust_config, 0, IAM_TRUST_LIMIT, "principals"), (inline_config, 1, IAM_INLINE_LIMIT, "queues")],
    ids=["trust-policy", "inline-policy"])
def test_finding_fires_exactly_when_the_synthesized_document_is_over_the_limit(write_config, tmp_path, make, which,
                                                                               limit, field):
    edge = largest(make, limit, which)
    for n, over in ((edge, False), (edge + 1, True)):
        text = make(n)
        trust, policy, (est_trust, est_policy) = synthesized(write_config, tmp_path / str(n), text)
        template_doc, estimate = ((trust, est_trust), (policy, est_policy))[which]
        # The template's document, minified, never exceeds the estimate (CDK may only drop duplicates).
        assert iam_characters(template_doc) <= policy_size(estimate)
        assert (iam_characters(template_doc) > limit) is over, (n, iam_characters(template_doc))
        findings = [f for f in check_file(write_config(text, f"e{n}.yaml")).findings if f.code == "HPK728"]
        assert [f.path for f in findings] == ([f"batch.teams[0].{field}"] if over else []), [f.render() for f in findings]
        if over:
            assert f"{limit:,} characters" in findings[0].message


@pytest.mark.synth
def test_documents_in_the_template_are_the_estimated_ones(write_config, tmp_path):
    """Every statement and principal the validator counts is the one written (order aside)."""
    trust, policy, (est_trust, est_policy) = synthesized(write_config, tmp_path, inline_config(3))

    def canonical(doc: dict[str, Any]) -> str:
        def norm(v: Any) -> Any:
            if isinstance(v, dict):
                return {k: norm(x) for k, x in v.items()}
            if isinstance(v, list):
                return sorted((norm(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
            return v
        return json.dumps(norm(doc), sort_keys=True)

    assert canonical(trust) == canonical(est_trust)
    assert canonical(policy) == canonical(est_policy)


def test_attack_cases_are_refused_with_the_attackers_sizes(write_config):
    """attack batch2 H3: 60 principals of 64 characters (c21) and 40 queues of 114 characters (c22) - the
    attacker measured 4,545 and 13,714 characters with their own resolver."""
    [trust] = [f for f in check_file(write_config(trust_config(60))).findings if f.code == "HPK728"]
    assert "4,545-character trust policy" in trust.message
    names = [f"q{n:02}".ljust(114, "x") for n in range(40)]
    text = (f'environment: iam\naccount: "{ACCOUNT}"\nregion: {REGION}\nbatch:\n  service_environments:\n'
            + "".join(f"    - {{name: e{n:02}, capacity_limits: [{{unit: NUM_INSTANCES, max_capacity: 1}}]}}\n"
                      for n in range(40))
            + "  queues:\n" + "".join(f"    - {{name: {name}, service_environment: e{n:02}}}\n"
                                      for n, name in enumerate(names))
            + f"  teams:\n    - name: A\n      queues: [{', '.join(names)}]\n"
            f"      principals: [arn:aws:iam::{ACCOUNT}:role/A]\n      execution_role_arn: arn:aws:iam::{ACCOUNT}:role/ATrain\n")
    [inline] = [f for f in check_file(write_config(text)).findings if f.code == "HPK728"]
    assert "13,714-character inline policy" in inline.message


@pytest.mark.synth
@pytest.mark.parametrize("principals", [(f"arn:aws:iam::{ACCOUNT}:role/A",),
                                        (f"arn:aws:iam::{ACCOUNT}:role/C", f"arn:aws:iam::{ACCOUNT}:role/A",
                                         f"arn:aws:iam::{ACCOUNT}:user/b", f"arn:aws:iam::{ACCOUNT}:role/A")])
def test_team_role_is_what_the_l2_role_writes_under_the_same_logical_id(principals):
    """BatchTeamAccess writes its role as an L1 with the measured trust policy; CDK's own iam.Role at the same
    path, under cdk.json's feature flags, is the truth: a deployed team role keeps its logical id and properties."""

    from aws_cdk import App, Environment, Stack
    from aws_cdk import aws_iam as iam
    from aws_cdk.assertions import Template
    from constructs import Construct

    from hyperpod_constructs.batch_team_access import BatchTeamAccess, BatchTeamAccessProps

    flags = json.loads((ROOT / "cdk.json").read_text())["context"]
    ours, theirs = (Stack(App(context=flags), "T", env=Environment(account=ACCOUNT, region=REGION)) for _ in range(2))
    BatchTeamAccess(ours, "Team-x", props=BatchTeamAccessProps(
        team="x", principals=principals, execution_role_arn=f"arn:aws:iam::{ACCOUNT}:role/T",
        fifo_queues=(f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/q",)))
    iam.Role(Construct(theirs, "Team-x"), "Role", assumed_by=iam.CompositePrincipal(*map(iam.ArnPrincipal, principals)),
             description="Submits SageMaker Training jobs to AWS Batch as team x")
    roles = [Template.from_stack(s).find_resources("AWS::IAM::Role") for s in (ours, theirs)]
    assert roles[0] == roles[1] and len(roles[0]) == 1


def hyperpod_team_config(principals: int) -> str:
    """tests/support/adversarial/base.yaml with john trusting `principals` roles."""

    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    arns = "".join(f"      - arn:aws:iam::{ACCOUNT}:role/research-group-scientist-role-number-{n:03}\n"
                   for n in range(principals))
    head, sep, tail = base.partition("  - name: john\n")
    at = tail.index("    principals:\n")
    end = tail.index("\n", tail.index("      - ", at)) + 1
    while tail.startswith("      - ", end):
        end = tail.index("\n", end) + 1
    return head + sep + tail[:at] + "    principals:\n" + arns + tail[end:]


@pytest.mark.synth
def test_a_hyperpod_team_trust_policy_is_refused_exactly_past_iams_quota(tmp_path):
    """Hostile review 4 F8 (HPK170): the trust policy TeamAccess writes, measured in the template, against IAM's
    default quota; the verdict must flip where the template's policy passes 2,048 characters."""
    from aws_cdk import App, Stack
    from aws_cdk.assertions import Template

    from hyperpod_constructs.team_access import TeamAccess, TeamAccessProps

    verdicts = {}
    for count in (1, 26, 27, 28, 29, 3000):
        path = tmp_path / f"t{count}.yaml"
        path.write_text(hyperpod_team_config(count))
        report = check_file(path)
        team = next(t for t in report.loaded.config.teams if t.name == "john")
        assert len(team.principals) == count
        stack = Stack(App(), "T")
        TeamAccess(stack, "Team", props=TeamAccessProps(cluster_name="c", team=team.name, principals=team.principals))
        role = next(iter(Template.from_stack(stack).find_resources("AWS::IAM::Role").values()))
        size = len(json.dumps(role["Properties"]["AssumeRolePolicyDocument"], separators=(",", ":")))
        refused = [f for f in report.errors if f.code == "HPK170"]
        assert [f.code for f in report.errors if f.code != "HPK170"] == []
        assert bool(refused) == (size > IAM_TRUST_LIMIT), (count, size)
        if refused:
            assert refused[0].path == "teams[0].principals" and f"{size:,}-character" in refused[0].message
        verdicts[count] = bool(refused)
    assert not verdicts[1] and verdicts[3000] and len(set(verdicts.values())) == 2
