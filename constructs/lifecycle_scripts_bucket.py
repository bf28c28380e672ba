"""The S3 bucket HyperPod reads lifecycle scripts from, with every file of a local folder deployed
into it.

The name must start with sagemaker-: AmazonSageMakerClusterInstanceRolePolicy only reaches buckets
named so. The bucket is retained when the stack goes, so a cluster that outlives its stack can still
replace nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import Duration, RemovalPolicy, aws_s3 as s3, aws_s3_deployment as s3deploy
from constructs import Construct

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
        self.source_s3_uri = f"s3://{props.bucket_name}/{props.key_prefix}/"
        self.bucket_arn = self.bucket.bucket_arn
        self.bucket_name = props.bucket_name
