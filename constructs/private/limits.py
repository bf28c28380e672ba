"""Limits and name patterns of the AWS and Helm APIs the kit targets, shared by the config model (which refuses
a value with a located finding) and the constructs (which refuse the same value when used on their own).

Patterns are written without anchors: callers use re.fullmatch, or anchor them with `anchored` where a
JSON-schema pattern is needed."""

from __future__ import annotations

# AWS::SageMaker::Cluster (cfn-lint schema): InstanceCount 0-6758, EbsVolumeConfig.VolumeSizeInGB 1-16384.
MAX_INSTANCE_COUNT = 6758
# HyperPod task governance needs Kubernetes 1.30 or later (EKS add-on amazon-sagemaker-hyperpod-taskgovernance).
MIN_KUBERNETES_MINOR = 30
# AWS Batch fair-share ShareIdentifier (AWS::Batch::SchedulingPolicy ShareDistribution): letters and digits.
SHARE_IDENTIFIER = r"[A-Za-z0-9]{1,255}"
MIN_EBS_VOLUME_GIB, MAX_EBS_VOLUME_GIB = 1, 16384
DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")
# How long the governance stack waits for a Ready, schedulable HyperPod node before it installs task governance:
# one custom resource, whose wait CloudFormation bounds at ServiceTimeout 3600 s and CDK's provider framework at
# one hour; the rest is the installer's margin. Deep health checks of new GPU nodes take about two hours.
SCHEDULABLE_NODE_WAIT_MINUTES = 55
# SageMaker's ClusterName and InstanceGroupName: letters, digits and hyphens, 1-63 characters.
SAGEMAKER_NAME = r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"
# A git commit of the chart repository and SHA-256 digests, lower-case hex.
COMMIT_ID = r"[0-9a-f]{40}"
SHA256_HEX = r"[0-9a-f]{64}"
# Helm release names are DNS labels of at most 53 characters (helm's own limit).
HELM_RELEASE_NAME = r"[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?"
# AWS::EKS::Cluster PublicAccessCidrs: "The default value is 0.0.0.0/0" (cfn-lint schema). aws_eks_v2 refuses to
# restrict a public-only endpoint (only PUBLIC_AND_PRIVATE.onlyFrom), so anywhere is the one list it takes.
ANYWHERE_IPV4 = "0.0.0.0/0"


def anchored(pattern: str) -> str:
    """The pattern for a JSON schema, which searches rather than matches whole strings."""
    return f"^{pattern}$"

# The AMI lifecycle of an instance group (AWS::SageMaker::Cluster in cfn-lint: ImageId, ImageReleaseVersion,
# ScheduledUpdateConfig, DeploymentConfig, AlarmDetails; tests check each against the schema and botocore).
# ImageId: "^ami-[0-9a-fA-F]{8,17}|default$", 7-21 characters (a custom AMI or the default system image).
IMAGE_ID = r"(ami-[0-9a-fA-F]{8,17}|default)"
# ImageReleaseVersion: "semantic version format MAJOR.MINOR.PATCH", 5-64 characters.
IMAGE_RELEASE_VERSION = r"[0-9]+\.[0-9]+\.[0-9]+"
MAX_IMAGE_RELEASE_VERSION_LENGTH = 64
# ScheduledUpdateConfig.ScheduleExpression: cron(Minutes Hours Day-of-month Month Day-of-week Year), the schema's
# pattern as it is (it is unanchored there; the kit matches it against the whole expression), at most 256 characters.
SCHEDULE_EXPRESSION = (r"cron\((?:[0-5][0-9]|[0-9]|) (?:[01][0-9]|2[0-3]|[0-9]) (?:[1-9]|0[1-9]|[12][0-9]|3[01]|\?) "
                       r"(?:[1-9]|0[1-9]|1[0-2]|\*|\*/(?:[1-9]|1[0-2])|) (?:MON|TUE|WED|THU|FRI|SAT|SUN|[1-7]|\?|L|"
                       r"(?:[1-7]#[1-5])|(?:[1-7]L)) (?:20[2-9][0-9]|\*|)\)")
MAX_SCHEDULE_EXPRESSION_LENGTH = 256
# DeploymentConfig.WaitIntervalInSeconds 0-3600; AutoRollbackConfiguration 1-10 alarms.
MAX_WAIT_INTERVAL_SECONDS = 3600
MAX_ROLLBACK_ALARMS = 10
# AlarmDetails.AlarmName: the schema's (?!\s*$).+ - one line, not only white space - without its look-ahead,
# which pydantic's regular expressions lack; 1-256 characters in the schema, 1-255 in botocore (the smaller).
ALARM_NAME = r".*\S.*"
MAX_ALARM_NAME_LENGTH = 255
# CapacitySizeConfig.Type; Value is at least 1 (a percent above 100 is the validator's).
BATCH_SIZE_TYPES = ("INSTANCE_COUNT", "CAPACITY_PERCENTAGE")
# AutoPatchConfig.PatchingStrategy in the schema (botocore also has DrainFirst, which CloudFormation does not take).
PATCHING_STRATEGIES = ("WhenIdle", "WhenAllIdle")
