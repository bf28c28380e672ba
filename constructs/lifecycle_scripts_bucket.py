"""The S3 bucket HyperPod reads lifecycle scripts from, with every file of a local folder copied into
it by a custom resource.

The name must start with sagemaker-: AmazonSageMakerClusterInstanceRolePolicy only reaches buckets
named so. The bucket and its policy are kept when the stack goes or the bucket would be replaced
(RetainExceptOnCreate), so a cluster that outlives its stack can still replace nodes; a failed first
create removes them (the handler empties its prefix first), so the fixed name does not block the next
deploy. Only the copy handler may write or delete objects: the bucket policy denies it to everyone else. The copy is the kit's own small handler (scripts_sync_handler) rather than CDK's
BucketDeployment: it needs no AWS CLI layer and its role names each S3 action it uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from aws_cdk import CustomResource, Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_assets as s3_assets
from constructs import Construct

from hyperpod_constructs.nag_acknowledgements import acknowledge, nag_text, wildcard_resource
from hyperpod_constructs.private.sagemaker_bucket_name import RULE, bucket_name_problem
from hyperpod_constructs.protection import retain
from hyperpod_constructs.python_handler_provider import PythonHandlerProvider, PythonHandlerProviderProps

HANDLER_DIR = Path(__file__).resolve().parent / "scripts_sync_handler"
WRITE_ACTIONS = ("s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion")


@dataclass(frozen=True)
class LifecycleScriptsBucketProps:
    """Props of LifecycleScriptsBucket.

    bucket_name: starts with sagemaker-, 3-63 lower-case letters, digits and hyphens - required.
    scripts_dir: local folder whose files are copied, all of them - required.
    key_prefix: folder inside the bucket, no slashes at either end. Default "lifecycle-scripts".
    noncurrent_version_days: days an overwritten script version is kept. Default 90.
    generated_files: file name -> text written next to the scripts (e.g. settings made from config); a
        name the folder also has is refused at deploy time. Default none.
    """

    bucket_name: str
    scripts_dir: str
    key_prefix: str = "lifecycle-scripts"
    noncurrent_version_days: int = 90
    generated_files: dict[str, str] = field(default_factory=dict)


class LifecycleScriptsBucket(Construct):
    """Encrypted, TLS-only, versioned, private bucket plus the copy of the scripts into it."""

    def __init__(self, scope: Construct, construct_id: str, *, props: LifecycleScriptsBucketProps) -> None:
        super().__init__(scope, construct_id)
        if bucket_name_problem(props.bucket_name):
            raise ValueError(f"bucket_name must {RULE} (the HyperPod instance policy only reaches sagemaker-* "
                             f"buckets), got {props.bucket_name!r}")
        if not props.key_prefix or props.key_prefix.startswith("/") or props.key_prefix.endswith("/"):
            raise ValueError(f"key_prefix must be a folder name without leading or trailing '/', got {props.key_prefix!r}")
        for name in props.generated_files:
            if not re.fullmatch(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*", name) or ".." in name.split("/"):
                raise ValueError(f"generated file name {name!r} must be a relative path of letters, digits, '.', '_', '-'")

        self.bucket = s3.Bucket(
            self, "Bucket",
            bucket_name=props.bucket_name,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=Duration.days(props.noncurrent_version_days),
                                              abort_incomplete_multipart_upload_after=Duration.days(7))],
        )
        acknowledge(self.bucket, {"AwsSolutions-S1": (
            "holds only the lifecycle scripts this stack writes; every change is a new object version, "
            "and reads are by the cluster's execution role only")})

        asset = s3_assets.Asset(self, "ScriptsAsset", path=props.scripts_dir)
        sync = PythonHandlerProvider(self, "Sync", props=PythonHandlerProviderProps(
            handler_dir=str(HANDLER_DIR), description="Copies the lifecycle scripts into the lifecycle bucket",
            # What it writes, every new node runs as root: only CloudFormation's own requests are acted on (and
            # on Delete it asks whether its stack is rolling back a failed first create).
            anchored_to_stack=True))
        prefix_objects = self.bucket.arn_for_objects(f"{props.key_prefix}/*")
        sync.role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=[
            f"arn:{self.bucket.stack.partition}:s3:::{asset.s3_bucket_name}/{asset.s3_object_key}"]))
        sync.role.add_to_policy(iam.PolicyStatement(actions=list(WRITE_ACTIONS), resources=[prefix_objects]))
        sync.role.add_to_policy(iam.PolicyStatement(actions=["s3:ListBucket", "s3:ListBucketVersions"],
                                                    resources=[self.bucket.bucket_arn],
                                                    conditions={"StringLike": {"s3:prefix": f"{props.key_prefix}/*"}}))
        # Nobody but the copy handler writes or deletes scripts, whatever their identity policies allow.
        # CloudFormation's deploy role needs no exception: it never writes objects here (the scripts' zip
        # goes to the CDK assets bucket; the handler copies it), and on a failed first create it deletes
        # the bucket, which the handler has emptied, with s3:DeleteBucket. An admin can still change the
        # bucket policy itself, e.g. to hot-fix a script in an emergency.
        self.bucket.add_to_resource_policy(iam.PolicyStatement(
            sid="OnlyTheScriptsHandlerWrites", effect=iam.Effect.DENY, principals=[iam.AnyPrincipal()],
            actions=list(WRITE_ACTIONS), resources=[self.bucket.arn_for_objects("*")],
            conditions={"ArnNotEquals": {"aws:PrincipalArn": sync.role.role_arn}}))
        retain(self.bucket.node.default_child, self.bucket.policy.node.default_child)
        acknowledge(sync.role, {wildcard_resource(nag_text(self, prefix_objects)): (
            "the handler writes and prunes the scripts under the prefix; their names come from the folder")})
        self.deployment = CustomResource(
            self, "Scripts", service_token=sync.service_token, resource_type="Custom::LifecycleScripts",
            properties={"SourceBucket": asset.s3_bucket_name, "SourceKey": asset.s3_object_key,
                        "DestinationBucket": self.bucket.bucket_name, "DestinationPrefix": props.key_prefix,
                        "GeneratedFiles": dict(sorted(props.generated_files.items()))},
        )
        self.source_s3_uri = f"s3://{props.bucket_name}/{props.key_prefix}/"
        self.bucket_arn = self.bucket.bucket_arn
        self.bucket_name = props.bucket_name
