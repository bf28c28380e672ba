"""Every name the kit derives from the longest names validate accepts fits the CloudFormation resource
schemas cfn-lint ships (pattern and maxLength), in every region cfn-lint says has HyperPod."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import SUPPORT

from cdk_app.config.names import hyperpod_cluster_name, lifecycle_bucket_name, local_queue
from cdk_app.domain.regions import HYPERPOD_RESOURCE, cfnlint_data, cloudformation_types, known_regions
from cdk_app.stacks.governance_stack import policy_parameters
from cdk_app.stacks.team_stack import quota_parameters
from cdk_app.validator.report import check_file

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
PROVIDERS = cfnlint_data() / "schemas"
ENV = "e" * 20
TEAM = "t" * 39 + "1"
HYPERPOD_REGIONS = [r for r in known_regions() if HYPERPOD_RESOURCE in cloudformation_types(r)]


def schema(region: str, resource: str) -> dict:
    digest = json.loads((PROVIDERS / "providers" / f"{region}.json").read_text())[resource]
    return json.loads((PROVIDERS / "resources" / f"{digest}.json").read_text())


def fits(value: str, rule: dict) -> bool:
    return len(value) <= rule.get("maxLength", 10**9) and re.search(rule["pattern"], value) is not None


@pytest.fixture(scope="module")
def longest(tmp_path_factory):
    text = BASE.replace("environment: dev", f"environment: {ENV}").replace("name: smith", f"name: {TEAM}")
    path = tmp_path_factory.mktemp("names") / "longest.yaml"
    path.write_text(text)
    report = check_file(path)
    assert report.errors == [], [f.render() for f in report.errors]
    return report.loaded.config


@pytest.mark.parametrize("region", HYPERPOD_REGIONS)
def test_bucket_name_fits_in_every_hyperpod_region(longest, region):
    config = longest.model_copy(update={"region": region})
    bucket = schema("us-east-1", "AWS::S3::Bucket")["properties"]["BucketName"]
    assert fits(lifecycle_bucket_name(config), bucket), lifecycle_bucket_name(config)


def test_governance_and_cluster_names_fit_their_schemas(longest):
    quota = schema("us-east-1", "AWS::SageMaker::ComputeQuota")
    team = next(t for t in longest.teams if t.name == TEAM)
    params = quota_parameters(longest, "arn:aws:sagemaker:us-east-1:111122223333:cluster/x", team, team.quota)
    assert fits(params["Name"], quota["properties"]["Name"])
    assert fits(params["ComputeQuotaTarget"]["TeamName"], quota["definitions"]["ComputeQuotaTarget"]["properties"]["TeamName"])
    policy = schema("us-east-1", "AWS::SageMaker::ClusterSchedulerConfig")
    assert fits(policy_parameters(longest, "arn")["Name"], policy["properties"]["Name"])
    cluster = schema("us-east-1", HYPERPOD_RESOURCE)
    assert fits(hyperpod_cluster_name(longest), cluster["properties"]["ClusterName"])
    # Kubernetes: the local queue name is a label value (at most 63); output ids are CloudFormation logical ids.
    assert len(local_queue(TEAM)) == 63


def test_one_character_more_is_refused(tmp_path):
    for old, new, code in (("environment: dev", f"environment: {ENV}x", "HPK015"),
                           ("name: smith", f"name: {TEAM}x", "HPK401")):
        path = tmp_path / "over.yaml"
        path.write_text(BASE.replace(old, new))
        assert [f.code for f in check_file(path).errors] == [code]


# Hostile review 4 F4(a): an environment validate accepted gave names AWS (or the bucket construct) refuses, and
# `cdk synth` died with a traceback. Oracles: cfn-lint's AWS::SageMaker::Cluster ClusterName and AWS::S3::Bucket
# BucketName schemas, and the LifecycleScriptsBucket construct itself (it refuses a name at synth).
@pytest.mark.synth
@pytest.mark.parametrize("environment", ["dev-", "a--b", "a-", "ab--", "a-b-c", "a1", "e" * 19 + "-", "dev"])
def test_an_environment_is_accepted_exactly_when_its_derived_names_are(tmp_path, environment):
    from aws_cdk import App, Stack

    from hyperpod_constructs.lifecycle_scripts_bucket import LifecycleScriptsBucket, LifecycleScriptsBucketProps

    path = tmp_path / "env.yaml"
    path.write_text(BASE.replace("environment: dev", f"environment: {environment}"))
    report = check_file(path)
    config = report.loaded.config
    cluster = schema("us-east-1", HYPERPOD_RESOURCE)["properties"]["ClusterName"]
    bucket_schema = schema("us-east-1", "AWS::S3::Bucket")["properties"]["BucketName"]
    try:
        LifecycleScriptsBucket(Stack(App(), "S"), "B", props=LifecycleScriptsBucketProps(
            bucket_name=lifecycle_bucket_name(config), scripts_dir=str(Path(__file__).parent)))
        construct_takes_it = True
    except ValueError:
        construct_takes_it = False
    names_ok = (fits(hyperpod_cluster_name(config), cluster) and fits(lifecycle_bucket_name(config), bucket_schema)
                and construct_takes_it)
    derived = [f for f in report.errors if f.code == "HPK160"]
    assert [f.code for f in report.errors if f.code != "HPK160"] == []
    assert (not derived) == names_ok, [f.render() for f in report.errors]
    for finding in derived:  # the message names the field, what was typed and the name it gives
        assert finding.path == "environment" and f"'{environment}'" in finding.message
        assert hyperpod_cluster_name(config) in finding.message or lifecycle_bucket_name(config) in finding.message


def test_an_explicit_cluster_name_keeps_its_own_finding(tmp_path):
    # With hyperpod.cluster_name set, the default name is not built: 'dev-' then only breaks the bucket.
    text = BASE.replace("environment: dev", "environment: dev-").replace("hyperpod:\n", "hyperpod:\n  cluster_name: hp\n", 1)
    path = tmp_path / "env.yaml"
    path.write_text(text)
    messages = [f.message for f in check_file(path).errors]
    assert len(messages) == 1 and "bucket name 'sagemaker-hpk-dev--" in messages[0]


@settings(max_examples=60, deadline=None)
@given(st.from_regex(r"[a-z][a-z0-9-]{0,19}", fullmatch=True))
def test_any_environment_the_model_takes_is_refused_exactly_when_a_derived_name_breaks_its_schema(environment):
    """The same verdict over every environment name the model's pattern lets through, against cfn-lint's schemas
    (the bucket construct is stricter than S3 only about '--', which the parametrized test above covers)."""
    import tempfile

    cluster = schema("us-east-1", HYPERPOD_RESOURCE)["properties"]["ClusterName"]
    bucket = schema("us-east-1", "AWS::S3::Bucket")["properties"]["BucketName"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "env.yaml"
        # Quoted: unquoted, YAML reads names such as "on", "no" or "y" as booleans (the model refuses those).
        path.write_text(BASE.replace("environment: dev", f'environment: "{environment}"'))
        report = check_file(path)
    config = report.loaded.config
    schemas_ok = fits(hyperpod_cluster_name(config), cluster) and fits(lifecycle_bucket_name(config), bucket)
    refused = any(f.code == "HPK160" for f in report.errors)
    assert refused == (not schemas_ok or "--" in lifecycle_bucket_name(config)), [f.render() for f in report.errors]
