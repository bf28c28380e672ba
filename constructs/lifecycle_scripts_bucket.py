"""The S3 bucket HyperPod reads lifecycle scripts from, with every file of a local folder deployed
into it.

The name must start with sagemaker-: AmazonSageMakerClusterInstanceRolePolicy only reaches buckets
named so. The bucket is retained when the stack goes, so a cluster that outlives its stack can still
replace nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import DefaultStackSynthesizer, Duration, RemovalPolicy, Stack, aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

from hyperpod_constructs.nag_acknowledgements import (
    acknowledge,
    managed_policy,
    nag_text,
    partition,
    ref,
    wildcard_action,
    wildcard_resource,
)

BUCKET_NAME = re.compile(r"^sagemaker-[a-z0-9][a-z0-9-]{0,51}[a-z0-9]$")


@dataclass(frozen=True)
class LifecycleScriptsBucketProps:
    """Props of LifecycleScriptsBucket.

    bucket_name: starts with sagemaker-, 3-63 lower-case letters, digits and hyphens - required.
    scripts_dir: local folder whose files are deployed, all of them - required.
    key_prefix: folder inside the bucket, no slashes at either end. Default "lifecycle-scripts".
    noncurrent_version_days: days an overwritten script version is kept. Default 90.
    """

    bucket_name: str
    scripts_dir: str
    key_prefix: str = "lifecycle-scripts"
    noncurrent_version_days: int = 90


class LifecycleScriptsBucket(Construct):
    """Encrypted, TLS-only, versioned, private bucket plus the deployment of the scripts."""

    def __init__(self, scope: Construct, construct_id: str, *, props: LifecycleScriptsBucketProps) -> None:
        super().__init__(scope, construct_id)
        if not BUCKET_NAME.match(props.bucket_name) or "--" in props.bucket_name:
            raise ValueError(f"bucket_name must start with sagemaker- and be 3-63 lower-case letters, digits and "
                             f"single hyphens (the HyperPod instance policy only reaches sagemaker-* buckets), "
                             f"got {props.bucket_name!r}")
        if not props.key_prefix or props.key_prefix.startswith("/") or props.key_prefix.endswith("/"):
            raise ValueError(f"key_prefix must be a folder name without leading or trailing '/', got {props.key_prefix!r}")

        self.bucket = s3.Bucket(
            self, "Bucket",
            bucket_name=props.bucket_name,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            removal_policy=RemovalPolicy.RETAIN,
            lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=Duration.days(props.noncurrent_version_days),
                                              abort_incomplete_multipart_upload_after=Duration.days(7))],
        )
        self.deployment = s3deploy.BucketDeployment(
            self, "Scripts",
            sources=[s3deploy.Source.asset(props.scripts_dir)],
            destination_bucket=self.bucket,
            destination_key_prefix=props.key_prefix,
            # Scripts removed from the folder are removed from the bucket: nodes run exactly the repo's set.
            prune=True,
            retain_on_delete=True,
        )
        self._acknowledge()
        self.source_s3_uri = f"s3://{props.bucket_name}/{props.key_prefix}/"
        self.bucket_arn = self.bucket.bucket_arn
        self.bucket_name = props.bucket_name

    def _acknowledge(self) -> None:
        acknowledge(self.bucket, {"AwsSolutions-S1": (
            "holds only the lifecycle scripts CloudFormation writes; every change is a new object version, "
            "and reads are by the cluster's execution role only")})
        # The deployment's handler is CDK's own (one per stack); its grants are CDK's, not ours.
        stack = Stack.of(self)
        cdk_grant = ("CDK's BucketDeployment handler copies the scripts asset into this bucket and prunes old "
                     "files; CDK writes this grant, scoped to the assets bucket and this bucket")
        assets_bucket = DefaultStackSynthesizer.DEFAULT_FILE_ASSETS_BUCKET_NAME.replace(
            "${Qualifier}", DefaultStackSynthesizer.DEFAULT_QUALIFIER).replace(
            "${AWS::AccountId}", stack.account).replace("${AWS::Region}", stack.region)
        acknowledge(self.deployment.handler_role, {
            managed_policy("service-role/AWSLambdaBasicExecutionRole"):
                "CDK's BucketDeployment handler role; the managed policy only lets it write its own logs",
            **{wildcard_action(a): cdk_grant for a in ("s3:GetBucket*", "s3:GetObject*", "s3:List*", "s3:Abort*",
                                                      "s3:DeleteObject*")},
            wildcard_resource(nag_text(self, f"arn:{partition(self)}:s3:::{assets_bucket}/*")): cdk_grant,
            wildcard_resource(f"{ref(self.bucket.node.default_child, 'Arn')}/*"): cdk_grant,
        })
        handler = next(c for c in stack.node.children if c.node.id.startswith("Custom::CDKBucketDeployment"))
        acknowledge(handler, {"AwsSolutions-L1": ("CDK's BucketDeployment handler; its runtime is chosen and "
                                                  "updated by aws-cdk-lib, not by this kit")})
