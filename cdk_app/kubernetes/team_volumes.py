"""The teams' FSx for Lustre volumes as Kubernetes objects: per file system of the storage section, a
PersistentVolume (in the storage stack's "storage" set, beside the file system whose DNS and mount names it holds)
pre-bound to a claim of the same name in the team's namespace (in the team's own set). The objects' one
definition is the installer's (kit_lustre_volume, kit_volume_claim in
constructs/helm_release_handler/manifest_policy.py, which accepts them only in exactly that form).

A team gets no right on claims or volumes (team_rbac.py): it mounts its claims in its jobs and can neither create a
claim (to bind another volume) nor change one, and the volume binds that one claim only."""

from __future__ import annotations

from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.config.names import team_namespace
from cdk_app.config.storage_model import LustreFileSystem, team_file_systems
from hyperpod_constructs.helm_release_handler.manifest_policy import (
    kit_lustre_volume,
    kit_volume_claim,
    kit_volume_name,
)


def team_claims(config: KitConfig, team: str) -> tuple[str, ...]:
    """The claims the kit creates in the team's namespace: one per file system of the team, named after it."""
    return tuple(fs.name for fs in team_file_systems(config.storage, team))


def volume_claim(team: str, claim: str) -> dict[str, Any]:
    return kit_volume_claim(team_namespace(team), claim)


def volume_name(team: str, claim: str) -> str:
    return kit_volume_name(team_namespace(team), claim)


def lustre_volume(file_system: LustreFileSystem, file_system_id: str, dns_name: str, mount_name: str) -> dict[str, Any]:
    """The file system's PersistentVolume; the three names are the file system's (deploy-time values in a stack)."""
    return kit_lustre_volume(team_namespace(file_system.team), file_system.name, file_system_id, dns_name, mount_name,
                             file_system.storage_capacity_gib)
