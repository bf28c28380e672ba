"""A role's trust policy for IAM principals as the L2 iam.Role writes it, and how IAM measures it. Built in one
place for the constructs that write such roles (TeamAccess, BatchTeamAccess) and for the validator, which
measures it (HPK170 for HyperPod teams, HPK728 for Batch teams). Imports no aws_cdk, so `validate` stays fast.

IAM and AWS STS quotas (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html): a role
trust policy is at most 2,048 characters by default (a quota increase goes to 4,096); IAM does not count white
space (GetAccountSummary: AssumeRolePolicySizeQuota is "in non-whitespace characters"). The kit holds configs to
the default: it cannot see whether the account has the increase, and a deploy would fail at the role.
"""

from __future__ import annotations

import json
from typing import Any

TRUST_POLICY_LIMIT = 2048


def trust_policy(principals: tuple[str, ...]) -> dict[str, Any]:
    """What the L2 iam.Role writes for ArnPrincipals under the app's @aws-cdk/aws-iam:minimizePolicies: one
    statement, principals sorted and unique, a single one as a string."""
    unique = sorted(set(principals))
    return {"Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow",
                           "Principal": {"AWS": unique[0] if len(unique) == 1 else unique}}],
            "Version": "2012-10-17"}


def policy_size(document: dict[str, Any]) -> int:
    """Characters IAM counts against its size quotas: the JSON without white space (ARNs, actions and condition
    values hold none, so minified JSON is exactly that)."""
    return len(json.dumps(document, separators=(",", ":")))
