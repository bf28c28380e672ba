"""Everything the installer keeps in place for one team: its RBAC (team_rbac.py), the NetworkPolicy of its
namespace (network_policy.py) and the ResourceQuota of what Kueue does not queue - Deployments, Services,
ConfigMaps (its numbers and their reasons: UNQUEUED_HARD in constructs/helm_release_handler/manifest_policy.py, which
accepts the quota only in exactly this form). A team may read the quota but not change it (team_rbac.py). With
file systems of the team in the storage section, its volume claims too (team_volumes.py)."""

from __future__ import annotations

from typing import Any

from cdk_app.config.names import team_namespace
from cdk_app.kubernetes.network_policy import team_network_policy
from cdk_app.kubernetes.team_rbac import team_manifests
from cdk_app.kubernetes.team_volumes import volume_claim
from hyperpod_constructs.helm_release_handler.manifest_policy import kit_resource_quota


def team_resource_quota(team: str) -> dict[str, Any]:
    return kit_resource_quota(team_namespace(team))


def team_set(team: str, claims: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """claims: the team's volume claims (team_volumes.team_claims)."""
    return [*team_manifests(team), team_network_policy(team), team_resource_quota(team),
            *(volume_claim(team, claim) for claim in claims)]
