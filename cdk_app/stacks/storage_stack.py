"""Stack holding the teams' shared storage (the storage section): each FSx for Lustre file system with its data
repository associations, the FSx CSI driver add-on that mounts them on the nodes, and the PersistentVolume of
each (the "storage" manifest set). Deployed after the cluster stack (its installer applies the volumes); the
teams' claims are in their own sets (team stacks or governance), named after the volumes, so nothing there
imports from here and a file system's removal changes this stack and its team's set only. Stateful and
termination-protected: the file systems are retained on delete and on replacement.

Its own stack rather than the network's: the volumes need the cluster's installer, and a file system in the
network stack would be exported to the stacks holding its volume - and CloudFormation refuses to remove an
export still imported, which would block deleting a file system. Configs without storage have no such stack,
so their templates are unchanged."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_eks as eks
from constructs import Construct

from cdk_app.config.model import KitConfig
from cdk_app.config.storage_model import LustreFileSystem as FileSystemSpec
from cdk_app.domain.lustre import CSI_DRIVER_ADDON, FILE_SYSTEM_IDS_OUTPUT, file_system_zone
from cdk_app.kubernetes.team_volumes import lustre_volume
from hyperpod_constructs.hyperpod_network import HyperPodNetwork
from hyperpod_constructs.kubernetes_manifests import KubernetesManifests, KubernetesManifestsProps
from hyperpod_constructs.lustre_file_system import DataRepositoryLink, LustreFileSystem, LustreFileSystemProps

STORAGE_SET = "storage"  # the installer's set of PersistentVolumes (helm_release_handler/index.py STORAGE_SET)


def file_system_props(config: KitConfig, spec: FileSystemSpec, network: HyperPodNetwork) -> LustreFileSystemProps:
    return LustreFileSystemProps(
        name=f"hyperpod-kit {config.environment} {spec.team}/{spec.name}",
        subnet_id=network.private_subnet_ids[file_system_zone(config, spec)],
        security_group_id=network.security_group_id, storage_capacity_gib=spec.storage_capacity_gib,
        deployment_type=spec.deployment_type, storage_type=spec.storage_type, drive_cache_type=spec.drive_cache_type,
        per_unit_storage_throughput=spec.per_unit_storage_throughput, kms_key_id=spec.kms_key_id,
        metadata_iops=spec.metadata_iops, compression=spec.compression,
        automatic_backup_retention_days=spec.automatic_backup_retention_days,
        daily_automatic_backup_start_time=spec.daily_automatic_backup_start_time,
        data_repository_associations=tuple(DataRepositoryLink(
            file_system_path=a.file_system_path, s3_path=a.s3_path, import_events=a.import_events,
            export_events=a.export_events, batch_import_metadata_on_create=a.batch_import_metadata_on_create,
            imported_file_chunk_size_mib=a.imported_file_chunk_size_mib) for a in spec.data_repository_associations))


class StorageStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: KitConfig, network: HyperPodNetwork,
                 eks_cluster_name: str, installer_service_token: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        storage = config.storage
        assert storage is not None
        volumes, ids = [], {}
        for spec in storage.file_systems:
            file_system = LustreFileSystem(self, f"Lustre-{spec.team}-{spec.name}",
                                           props=file_system_props(config, spec, network))
            volumes.append(lustre_volume(spec, file_system.file_system_id, file_system.dns_name, file_system.mount_name))
            ids[f"{spec.team}/{spec.name}"] = file_system.file_system_id
        # The driver mounts statically provisioned volumes only (the kit makes them; teams cannot make claims), which
        # calls no AWS API: no IAM role. AWS's setups give it AmazonFSxFullAccess for dynamic provisioning, which here
        # would let a claim create file systems. Preserved on delete like the kit's other add-ons: mounts in use stay.
        addon = eks.CfnAddon(self, "FsxCsiDriver", cluster_name=eks_cluster_name, addon_name=CSI_DRIVER_ADDON,
                             addon_version=storage.csi_driver_version, resolve_conflicts="OVERWRITE",
                             preserve_on_delete=True)
        manifests = KubernetesManifests(self, "Volumes", props=KubernetesManifestsProps(
            service_token=installer_service_token, cluster_name=eks_cluster_name, name=STORAGE_SET,
            manifests=tuple(volumes), region=config.region))
        manifests.node.add_dependency(addon)
        CfnOutput(self, FILE_SYSTEM_IDS_OUTPUT, value=self.to_json_string(ids),
                  description="JSON: <team>/<file system> -> FSx for Lustre file system id")
