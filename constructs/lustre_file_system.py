"""An FSx for Lustre file system beside the HyperPod nodes, optionally linked to S3 prefixes by data repository
associations.

Stateful: the file system is kept when its stack is deleted and when an update would replace it (a replacement
is a new, empty file system; `hyperpod-kit plan` refuses one). Encrypted at rest always (FSx encrypts every
Lustre file system; the persistent types with the account's aws/fsx KMS key or the customer-managed key given), and in transit between Nitro
instances and SCRATCH_2/PERSISTENT_* file systems automatically. It takes the nodes' own security group, whose
self-referencing rules already open the Lustre ports (hyperpod_network.LUSTRE_PORTS, TCP 988 and 1018-1023): the
file system's interfaces and the nodes' are members of one group, so nothing else reaches it.

Compared with AWS's reference (aws-samples/awsome-distributed-training, 1.architectures/7.sagemaker-hyperpod-eks/
terraform-modules/hyperpod-eks-tf/modules/fsx_lustre/main.tf), which creates one PERSISTENT_2 file system of
1200 GiB, 250 MB/s/TiB, LZ4, Lustre 2.15 in the nodes' subnet and security group:
- the same Lustre version, compression default, subnet and security group;
- deployment type, capacity, throughput, metadata IOPS and backups are the config's (the validator holds them to
  what FSx takes), and S3 links are data repository associations (the reference has none);
- retained on delete and replacement (Terraform's default destroys it with the module);
- no StorageClass and no IAM role for the CSI driver here: volumes are provisioned statically by the kit
  (see cdk_app/kubernetes/team_volumes.py), so the driver never calls FSx; the reference grants the driver
  AmazonFSxFullAccess for dynamic provisioning, which would let any claim create file systems.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

from aws_cdk import Tags
from aws_cdk import aws_fsx as fsx
from constructs import Construct

from hyperpod_constructs.protection import retain

PERSISTENT = ("PERSISTENT_1", "PERSISTENT_2")
DEPLOYMENT_TYPES = ("SCRATCH_1", "SCRATCH_2", *PERSISTENT)
LUSTRE_VERSION = "2.15"
MAX_ASSOCIATIONS = 8  # CreateDataRepositoryAssociation: at most 8 per file system


@dataclass(frozen=True)
class DataRepositoryLink:
    """A data repository association: file_system_path (with its leading slash) <-> s3_path (s3://bucket/prefix).
    import_events / export_events: NEW, CHANGED, DELETED, imported from / exported to S3 automatically (default
    none); batch_import_metadata_on_create: import the objects already there (default False);
    imported_file_chunk_size_mib: stripe size of imported files (default: FSx's 1024)."""

    file_system_path: str
    s3_path: str
    import_events: tuple[str, ...] = ()
    export_events: tuple[str, ...] = ()
    batch_import_metadata_on_create: bool = False
    imported_file_chunk_size_mib: int | None = None


@dataclass(frozen=True)
class LustreFileSystemProps:
    """Props of LustreFileSystem.

    name: tag Name of the file system - required.
    subnet_id: the one subnet (zone) of the file system - required.
    security_group_id: group of its interfaces, the nodes' own (Lustre ports open between members) - required.
    storage_capacity_gib: 1200, 2400 or a multiple of 2400 - required.
    deployment_type: SCRATCH_1, SCRATCH_2, PERSISTENT_1 or PERSISTENT_2. Default PERSISTENT_2.
    storage_type: SSD, or HDD (PERSISTENT_1 only). Default SSD.
    drive_cache_type: NONE or READ, required by (and only for) HDD. Default None.
    per_unit_storage_throughput: MB/s/TiB, required by (and only for) the persistent types. Default None.
    kms_key_id: customer-managed KMS key (ARN, id or alias) of a persistent type; None: FSx's aws/fsx key.
    Default None.
    metadata_iops: PERSISTENT_2: USER_PROVISIONED IOPS; None: AUTOMATIC mode. Default None.
    compression: LZ4 or NONE. Default LZ4.
    automatic_backup_retention_days: persistent types only; None: FSx's default (0, none). Default None.
    daily_automatic_backup_start_time: HH:MM UTC, with backups. Default None (FSx picks).
    data_repository_associations: S3 links, at most 8. Default none.
    """

    name: str
    subnet_id: str
    security_group_id: str
    storage_capacity_gib: int
    deployment_type: str = "PERSISTENT_2"
    storage_type: str = "SSD"
    drive_cache_type: str | None = None
    per_unit_storage_throughput: int | None = None
    kms_key_id: str | None = None
    metadata_iops: int | None = None
    compression: str = "LZ4"
    automatic_backup_retention_days: int | None = None
    daily_automatic_backup_start_time: str | None = None
    data_repository_associations: tuple[DataRepositoryLink, ...] = field(default_factory=tuple)


class LustreFileSystem(Construct):
    """The file system (retained) and its data repository associations."""

    def __init__(self, scope: Construct, construct_id: str, *, props: LustreFileSystemProps) -> None:
        super().__init__(scope, construct_id)
        _validate(props)
        persistent = props.deployment_type in PERSISTENT
        metadata = None
        if props.deployment_type == "PERSISTENT_2":
            metadata = fsx.CfnFileSystem.MetadataConfigurationProperty(
                mode="AUTOMATIC" if props.metadata_iops is None else "USER_PROVISIONED", iops=props.metadata_iops)
        self.file_system = fsx.CfnFileSystem(
            self, "FileSystem", file_system_type="LUSTRE", file_system_type_version=LUSTRE_VERSION,
            storage_type=props.storage_type, storage_capacity=props.storage_capacity_gib, subnet_ids=[props.subnet_id],
            security_group_ids=[props.security_group_id], kms_key_id=props.kms_key_id,
            lustre_configuration=fsx.CfnFileSystem.LustreConfigurationProperty(
                deployment_type=props.deployment_type, data_compression_type=props.compression,
                drive_cache_type=props.drive_cache_type,
                per_unit_storage_throughput=props.per_unit_storage_throughput if persistent else None,
                metadata_configuration=metadata,
                automatic_backup_retention_days=props.automatic_backup_retention_days if persistent else None,
                daily_automatic_backup_start_time=props.daily_automatic_backup_start_time if persistent else None))
        Tags.of(self.file_system).add("Name", props.name)
        retain(self.file_system)
        self.file_system_id = self.file_system.ref
        self.dns_name = self.file_system.attr_dns_name
        self.mount_name = self.file_system.attr_lustre_mount_name
        # Deleting an association unlinks the directory only (DeleteDataInFileSystem stays false): the files stay
        # on the file system and in S3, so the associations follow the stack as usual.
        self.associations = [
            fsx.CfnDataRepositoryAssociation(
                self, f"Association{_id_part(link.file_system_path)}", file_system_id=self.file_system.ref,
                file_system_path=link.file_system_path, data_repository_path=link.s3_path,
                batch_import_meta_data_on_create=link.batch_import_metadata_on_create,
                imported_file_chunk_size=link.imported_file_chunk_size_mib,
                s3=fsx.CfnDataRepositoryAssociation.S3Property(
                    auto_import_policy=fsx.CfnDataRepositoryAssociation.AutoImportPolicyProperty(
                        events=list(link.import_events)) if link.import_events else None,
                    auto_export_policy=fsx.CfnDataRepositoryAssociation.AutoExportPolicyProperty(
                        events=list(link.export_events)) if link.export_events else None))
            for link in props.data_repository_associations]


def _validate(props: LustreFileSystemProps) -> None:
    if props.deployment_type not in DEPLOYMENT_TYPES:
        raise ValueError(f"deployment_type must be one of {DEPLOYMENT_TYPES}, got {props.deployment_type!r}")
    if (props.deployment_type in PERSISTENT) != (props.per_unit_storage_throughput is not None):
        raise ValueError("per_unit_storage_throughput is required by the persistent types and refused by scratch ones")
    if props.metadata_iops is not None and props.deployment_type != "PERSISTENT_2":
        raise ValueError("metadata_iops is PERSISTENT_2's only")
    if props.storage_type not in ("SSD", "HDD") or (props.storage_type == "HDD" and props.deployment_type != "PERSISTENT_1"):
        raise ValueError(f"storage_type must be SSD, or HDD on PERSISTENT_1, got {props.storage_type!r}")
    if (props.storage_type == "HDD") != (props.drive_cache_type is not None):
        raise ValueError("drive_cache_type is required by HDD storage and refused by SSD")
    if props.kms_key_id is not None and props.deployment_type not in PERSISTENT:
        raise ValueError("kms_key_id is for the persistent types only (scratch ones use FSx's key)")
    if props.data_repository_associations and props.deployment_type == "SCRATCH_1":
        raise ValueError("SCRATCH_1 file systems take no data repository associations")
    if len(props.data_repository_associations) > MAX_ASSOCIATIONS:
        raise ValueError(f"at most {MAX_ASSOCIATIONS} data repository associations per file system")
    paths = [link.file_system_path for link in props.data_repository_associations]
    if len(set(paths)) != len(paths):
        raise ValueError(f"data repository associations need distinct file system paths, got {paths}")


def _id_part(path: str) -> str:
    """/datasets/raw -> DatasetsRaw<crc>, / -> Root<crc>: the association's construct id, hence its logical id, a
    function of its own path (paths differing only in case or punctuation keep distinct ids by the CRC)."""
    readable = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", path) if part)[:40] or "Root"
    return f"{readable}{zlib.crc32(path.encode('utf-8')):08x}"
