"""The lifecycle-scripts bucket's name rule, shared by LifecycleScriptsBucket (which refuses a bad name) and the
validator (which refuses a config whose derived bucket name breaks it, HPK160). Imports no aws_cdk.

S3 general purpose bucket names (S3 User Guide, "Bucket naming rules"; cfn-lint's AWS::S3::Bucket BucketName:
`^([a-z0-9][a-z0-9.-]*[a-z0-9])?$`, at most 63): 3-63 lower-case letters, digits, '.' and '-', a letter or digit at
both ends. The kit is stricter: no '.', which breaks virtual-hosted TLS, and no '--', which S3 reserves in
prefixes and suffixes such as xn--, --ol-s3 and --x-s3; and sagemaker- first, as the HyperPod instance policy
(AmazonSageMakerClusterInstanceRolePolicy) reaches only buckets named sagemaker-*.
"""

from __future__ import annotations

import re

BUCKET_NAME = re.compile(r"^sagemaker-[a-z0-9][a-z0-9-]{0,51}[a-z0-9]$")
RULE = ("start with sagemaker- and be 3-63 lower-case letters, digits and single hyphens, ending with a letter "
        "or digit")


def bucket_name_problem(name: str) -> str | None:
    """Why `name` cannot be the lifecycle-scripts bucket's name, or None."""
    if not BUCKET_NAME.match(name) or "--" in name:
        return f"a bucket name must {RULE}"
    return None
