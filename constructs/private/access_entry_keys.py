"""Construct ids of the EKS cluster's administrator access entries, derived from the principal's ARN. Shared
by HyperPodEksCluster (which names the entries) and the validator (which refuses two admins whose ids would be
the same, HPK161). Imports no aws_cdk, so `validate` stays fast.

The id keeps its encoding ('/' becomes '-'): it is part of each deployed entry's logical id, so a new encoding
would replace every administrator's access entry. Two ARNs that map to one id are refused instead.
"""

from __future__ import annotations


def admin_entry_key(principal: str) -> str:
    """A construct id part from an IAM ARN: account and resource ('444455556666-role-PlatformAdmin')."""
    account, resource = principal.split(":")[4], principal.split(":", 5)[5]
    return f"{account}-{resource}".replace("/", "-")
