"""Deletion protection of the resources a running cluster cannot lose.

RetainExceptOnCreate: CloudFormation keeps the resource when its stack is deleted, and UpdateReplacePolicy
Retain keeps the old one when an update would replace it; only when the stack operation that created it
rolls back is it removed - nothing runs on it yet then, and a fixed name (HyperPod cluster, lifecycle
bucket) must not block the next deploy. tests/stacks/test_app.py checks every stateful resource of every stack.
"""

from __future__ import annotations

from aws_cdk import CfnDeletionPolicy, CfnResource


def retain(*resources: CfnResource) -> None:
    for resource in resources:
        resource.cfn_options.deletion_policy = CfnDeletionPolicy.RETAIN_EXCEPT_ON_CREATE
        resource.cfn_options.update_replace_policy = CfnDeletionPolicy.RETAIN
