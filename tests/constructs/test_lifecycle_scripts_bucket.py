"""Fine-grained tests of the LifecycleScriptsBucket construct."""

from __future__ import annotations

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Match, Template

from hyperpod_constructs.lifecycle_scripts_bucket import LifecycleScriptsBucket, LifecycleScriptsBucketProps


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    scripts = tmp_path_factory.mktemp("scripts")
    (scripts / "on_create.sh").write_text("#!/bin/bash\n")
    stack = Stack(App(), "Test")
    bucket = LifecycleScriptsBucket(stack, "Scripts", props=LifecycleScriptsBucketProps(
        bucket_name="sagemaker-hpk-dev-111122223333-us-east-1", scripts_dir=str(scripts),
        generated_files={"provisioning.env": "MOVE_DATA_ROOTS=true\n"}))
    return bucket, Template.from_stack(stack)


def test_bucket_is_encrypted_versioned_private_and_retained(built):
    _, template = built
    template.has_resource("AWS::S3::Bucket", {
        "Properties": {
            "BucketName": "sagemaker-hpk-dev-111122223333-us-east-1",
            "BucketEncryption": {"ServerSideEncryptionConfiguration": [
                {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]},
            "VersioningConfiguration": {"Status": "Enabled"},
            "PublicAccessBlockConfiguration": {"BlockPublicAcls": True, "BlockPublicPolicy": True,
                                               "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
        },
        # Kept on stack deletion and replacement, removed when a first create fails: the fixed name must
        # not block the next deploy.
        "DeletionPolicy": "RetainExceptOnCreate", "UpdateReplacePolicy": "Retain",
    })
    template.has_resource("AWS::S3::BucketPolicy", {"DeletionPolicy": "RetainExceptOnCreate",
                                                    "UpdateReplacePolicy": "Retain"})


def test_only_the_copy_handler_may_write_or_delete_scripts(built):
    """A Deny for every principal but the handler's role: identity policies elsewhere cannot override it."""
    _, template = built
    [policy] = template.find_resources("AWS::S3::BucketPolicy").values()
    [deny] = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s.get("Sid") == "OnlyTheScriptsHandlerWrites"]
    assert deny["Effect"] == "Deny" and deny["Principal"] == {"AWS": "*"}
    assert set(deny["Action"]) == {"s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion"}
    [(role_id, _)] = [(k, v) for k, v in template.find_resources("AWS::IAM::Role").items()
                      if k.startswith("ScriptsSyncRole")]
    assert deny["Condition"] == {"ArnNotEquals": {"aws:PrincipalArn": {"Fn::GetAtt": [role_id, "Arn"]}}}
    # The exempted role is the one the copy custom resource runs as.
    [function] = [v for k, v in template.find_resources("AWS::Lambda::Function").items() if k.startswith("ScriptsSyncFunction")]
    assert function["Properties"]["Role"] == {"Fn::GetAtt": [role_id, "Arn"]}


def test_bucket_policy_denies_plain_http(built):
    _, template = built
    template.has_resource_properties("AWS::S3::BucketPolicy", {"PolicyDocument": {"Statement": Match.array_with([
        Match.object_like({"Effect": "Deny", "Action": "s3:*",
                           "Condition": {"Bool": {"aws:SecureTransport": "false"}}})])}})


def test_scripts_are_copied_under_the_prefix(built):
    bucket, template = built
    template.resource_count_is("Custom::LifecycleScripts", 1)
    template.has_resource_properties("Custom::LifecycleScripts", {
        "DestinationPrefix": "lifecycle-scripts", "SourceKey": Match.string_like_regexp(r"\.zip$"),
        "GeneratedFiles": {"provisioning.env": "MOVE_DATA_ROOTS=true\n"}})
    assert bucket.source_s3_uri == "s3://sagemaker-hpk-dev-111122223333-us-east-1/lifecycle-scripts/"


def test_copy_role_names_each_s3_action_and_no_wildcard_action(built):
    _, template = built
    actions = []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            found = statement["Action"]
            actions += found if isinstance(found, list) else [found]
    assert {"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:ListBucket",
            "s3:ListBucketVersions", "cloudformation:DescribeStackResource", "cloudformation:DescribeStacks"} <= set(actions)
    assert not [a for a in actions if "*" in a]
    template.has_resource_properties("AWS::IAM::Policy", {"PolicyDocument": {"Statement": Match.array_with([
        Match.object_like({"Action": ["s3:ListBucket", "s3:ListBucketVersions"],
                           "Condition": {"StringLike": {"s3:prefix": "lifecycle-scripts/*"}}})])}})


def test_the_copy_handler_acts_only_on_its_own_stack_s_requests(built):
    """What it writes every new node runs as root: the handler confirms each event with CloudFormation
    (PythonHandlerProvider's anchored_to_stack; tests/handlers/test_scripts_sync_handler.py runs it)."""
    _, template = built
    [function] = [v for k, v in template.find_resources("AWS::Lambda::Function").items() if k.startswith("ScriptsSyncFunction")]
    assert function["Properties"]["Environment"]["Variables"] == {"CFN_ANCHOR_STACK_ID": {"Ref": "AWS::StackId"}}


@pytest.mark.parametrize(("name", "prefix", "message"), [
    ("hpk-dev-scripts", "lifecycle-scripts", "must start with sagemaker-"),
    ("sagemaker-Upper", "lifecycle-scripts", "must start with sagemaker-"),
    ("sagemaker--double", "lifecycle-scripts", "single hyphens"),
    ("sagemaker-" + "a" * 60, "lifecycle-scripts", "3-63"),
    ("sagemaker-ok", "/lifecycle/", "key_prefix must be a folder name"),
])
def test_bad_props_raise(tmp_path, name, prefix, message):
    with pytest.raises(ValueError, match=message):
        LifecycleScriptsBucket(Stack(App(), "Test"), "Scripts", props=LifecycleScriptsBucketProps(
            bucket_name=name, scripts_dir=str(tmp_path), key_prefix=prefix))


def test_generated_file_outside_the_prefix_raises(tmp_path):
    with pytest.raises(ValueError, match="generated file name '../x.env' must be a relative path"):
        LifecycleScriptsBucket(Stack(App(), "Test"), "Scripts", props=LifecycleScriptsBucketProps(
            bucket_name="sagemaker-ok", scripts_dir=str(tmp_path), generated_files={"../x.env": "X=1"}))
