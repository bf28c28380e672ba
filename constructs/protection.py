"""Deletion protection of the resources a running cluster cannot lose.

RetainExceptOnCreate: CloudFormation keeps the resource when its stack is deleted, and UpdateReplacePolicy
Retain keeps the old one when an update would replace it; only when the stack operation that created it
rolls back is it removed - nothing runs on it yet then, and a fixed name (HyperPod cluster, lifecycle
bucket) must not block the next deploy. tests/stacks/test_app.py checks every stateful resource of every stack.
"""

from __future__ import annotations

from aws_cdk import CfnDeletionPolicy, CfnResource


def retain(*resources: CfnResource) -> None:
    keep_on_delete(*resources)
    for resource in resources:
        resource.cfn_options.update_replace_policy = CfnDeletionPolicy.RETAIN


def keep_on_delete(*resources: CfnResource) -> None:
    """Kept when the stack is deleted, but replaced as usual on update: for what connects running nodes (routes,
    NAT, security group rules), where a retained old copy would only linger beside the one that took over.
    UpdateReplacePolicy is written out (Delete is the default) so the choice reads in the template (cfn-lint W3011)."""
    for resource in resources:
        resource.cfn_options.deletion_policy = CfnDeletionPolicy.RETAIN_EXCEPT_ON_CREATE
        resource.cfn_options.update_replace_policy = CfnDeletionPolicy.DELETE
