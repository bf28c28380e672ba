"""Names the kit derives from config names, and the Kubernetes and AWS rules those names must meet.

One implementation, used by the validator (which refuses a config whose derived names break a limit or
collide) and by the stacks (which create them), so the two cannot drift apart.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cdk_app.config.model import KitConfig

def team_namespace(team: str) -> str:
    """The namespace task governance makes for a team."""
    return f"hyperpod-ns-{team}"


def team_cluster_queue(team: str) -> str:
    """The ClusterQueue task governance makes for the team's compute allocation."""
    return f"{team_namespace(team)}-clusterqueue"


# Kubernetes (apimachinery validation): a DNS-1123 label is at most 63 characters, a subdomain at most 253.
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
MAX_LABEL = 63
MAX_SUBDOMAIN = 253
# The name part of a qualified name (label and taint keys) and a label value.
_QUALIFIED_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
# SageMaker cluster and instance-group names (AWS::SageMaker::Cluster schema in cfn-lint), 1-63 characters.
SAGEMAKER_NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9])*")
MAX_SAGEMAKER_NAME = 63
# A training plan's name (CreateTrainingPlan TrainingPlanName in botocore's SageMaker model, 1-64 characters): the
# last part of a training plan ARN, training-plan/<name>. The ARN's own pattern ends in `.*`.
TRAINING_PLAN_NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,63}")
# Taints of one instance group (AWS::SageMaker::Cluster ClusterKubernetesTaints maxItems in cfn-lint's schema).
MAX_TAINTS = 50


def hyperpod_cluster_name(config: KitConfig) -> str:
    """The HyperPod cluster's name: hyperpod.cluster_name, else hyperpod-<environment>."""
    return config.hyperpod.cluster_name or f"hyperpod-{config.environment}"


def lifecycle_bucket_name(config: KitConfig) -> str:
    """Unique per account, region and environment; sagemaker- so the managed instance policy reaches it."""
    return f"sagemaker-hpk-{config.environment}-{config.account}-{config.region}"


def local_queue(team: str) -> str:
    """The team's Kueue local queue; jobs name it in the kueue.x-k8s.io/queue-name label (a label value)."""
    return f"{team_namespace(team)}-localqueue"


def qualified_name_problem(key: str) -> str | None:
    """Why `key` is not a Kubernetes qualified name ([prefix/]name), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            return "the prefix before '/' is empty"
        if len(prefix) > MAX_SUBDOMAIN or not DNS1123_SUBDOMAIN.fullmatch(prefix):
            return (f"the prefix {prefix[:60]!r} must be a DNS subdomain: lower-case letters, digits, '-' and '.', "
                    f"at most {MAX_SUBDOMAIN} characters")
    if not name:
        return "the name is empty"
    if len(name) > MAX_LABEL or not _QUALIFIED_NAME.fullmatch(name):
        return (f"the name {name[:70]!r} must be at most {MAX_LABEL} letters, digits, '-', '_' and '.', "
                "starting and ending with a letter or digit")
    return None


def label_value_problem(value: str) -> str | None:
    """Why `value` is not a Kubernetes label value (empty is allowed), or None."""
    if value and (len(value) > MAX_LABEL or not _QUALIFIED_NAME.fullmatch(value)):
        return (f"at most {MAX_LABEL} letters, digits, '-', '_' and '.', starting and ending with a letter or digit "
                "(or empty)")
    return None
