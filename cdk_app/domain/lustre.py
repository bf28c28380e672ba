"""FSx for Lustre: what a file system of each deployment type takes, beyond the config model's enums and
ranges (cdk_app/config/storage_model.py, which says which types the kit offers). One source for the validator
and the stacks; tests/unit/domain/test_lustre.py holds every number to the botocore FSx model (its enums, ranges
and the documentation strings of CreateFileSystem) and to cfn-lint's AWS::FSx::* schemas.
"""

from __future__ import annotations

import posixpath

from cdk_app.config.model import KitConfig
from cdk_app.config.storage_model import MAX_METADATA_IOPS, LustreFileSystem

# CreateFileSystem StorageCapacity (botocore FSx): "For SCRATCH_2, PERSISTENT_2, and PERSISTENT_1 deployment types
# using SSD storage type, the valid values are 1200 GiB, 2400 GiB, and increments of 2400 GiB. For PERSISTENT_1 HDD
# file systems, valid values are increments of 6000 GiB for 12 MB/s/TiB file systems and increments of 1800 GiB for
# 40 MB/s/TiB file systems. For SCRATCH_1 deployment type, valid values are 1200 GiB, 2400 GiB, and increments of
# 3600 GiB."
SMALL_CAPACITIES_GIB = (1200, 2400)
CAPACITY_INCREMENT_GIB = 2400
SCRATCH_1_INCREMENT_GIB = 3600
HDD_INCREMENT_GIB = {12: 6000, 40: 1800}  # per PerUnitStorageThroughput
# PerUnitStorageThroughput (MB/s/TiB), per deployment and storage type: only the persistent types provision it
# ("Required with PERSISTENT_1 and PERSISTENT_2 deployment types using an SSD or HDD storage class").
THROUGHPUTS: dict[tuple[str, str], tuple[int, ...]] = {
    ("PERSISTENT_1", "SSD"): (50, 100, 200), ("PERSISTENT_1", "HDD"): (12, 40),
    ("PERSISTENT_2", "SSD"): (125, 250, 500, 1000)}
# StorageType: HDD is "supported ... on PERSISTENT_1 Lustre file system deployment types"; DriveCacheType "is
# required when StorageType is set to HDD" (and is HDD's only).
HDD_TYPE = "PERSISTENT_1"
# KmsKeyId: "Amazon FSx for Lustre PERSISTENT_1 and PERSISTENT_2 deployment types only. SCRATCH_1 and SCRATCH_2 types
# are encrypted using the Amazon FSx service KMS key for your account."
# CreateDataRepositoryAssociation: "supported on all FSx for Lustre 2.12 and 2.15 file systems, excluding scratch_1
# deployment type".
NO_ASSOCIATIONS_TYPE = "SCRATCH_1"
# MetadataConfiguration is PERSISTENT_2's. USER_PROVISIONED Iops on SSD: "1500, 3000, 6000, 12000, and multiples of
# 12000 up to a maximum of 192000".
METADATA_TYPE = "PERSISTENT_2"
SMALL_METADATA_IOPS = (1500, 3000, 6000)
METADATA_IOPS_STEP = 12000
# Lustre version the kit creates: AWS's HyperPod Terraform creates 2.15; PERSISTENT_2 refuses 2.10 and data
# repository associations need 2.12 or later.
LUSTRE_VERSION = "2.15"
# The EKS add-on that mounts the file systems on the nodes, and the storage stack's output mapping
# "<team>/<name>" to each file system's id (the stack writes both; `validate --live` reads them).
CSI_DRIVER_ADDON = "aws-fsx-csi-driver"
FILE_SYSTEM_IDS_OUTPUT = "FileSystemIds"


# What UpdateFileSystem can change of an existing Lustre file system (botocore FSx
# UpdateFileSystemLustreConfiguration); a change of any other LustreConfiguration setting cannot be applied in place,
# though cfn-lint's AWS::FSx::FileSystem schema does not mark it create-only. Its capacity: "The value must be greater
# than the current storage capacity" (UpdateFileSystemRequest StorageCapacity).
UPDATABLE_LUSTRE_SETTINGS = frozenset({
    "WeeklyMaintenanceStartTime", "DailyAutomaticBackupStartTime", "AutomaticBackupRetentionDays", "AutoImportPolicy",
    "DataCompressionType", "LogConfiguration", "RootSquashConfiguration", "PerUnitStorageThroughput",
    "MetadataConfiguration", "ThroughputCapacity", "DataReadCacheConfiguration"})


def is_scratch(deployment_type: str) -> bool:
    return deployment_type.startswith("SCRATCH")


def capacity_steps(file_system: LustreFileSystem) -> tuple[tuple[int, ...], int] | None:
    """The capacities FSx takes for the file system's deployment and storage type: (the small values, the
    increment whose multiples are allowed). None for HDD without a valid throughput, which decides its increment."""
    if file_system.storage_type == "HDD":
        step = HDD_INCREMENT_GIB.get(file_system.per_unit_storage_throughput or 0)
        return None if step is None else ((), step)
    if file_system.deployment_type == "SCRATCH_1":
        return SMALL_CAPACITIES_GIB, SCRATCH_1_INCREMENT_GIB
    return SMALL_CAPACITIES_GIB, CAPACITY_INCREMENT_GIB


def capacity_allowed(gib: int, steps: tuple[tuple[int, ...], int]) -> bool:
    small, step = steps
    return gib in small or (gib > 0 and gib % step == 0)


def capacity_choices(gib: int, steps: tuple[tuple[int, ...], int]) -> str:
    """What a refused capacity may be instead: the allowed values around it."""
    small, step = steps
    below = [c for c in (*small, gib // step * step) if 0 < c < gib]
    above = min(c for c in (*small, (gib // step + 1) * step) if c > gib)
    near = [max(below)] if below else []
    near.append(above)
    listed = f"{', '.join(map(str, small))} or " if small else ""
    return f"{listed}a multiple of {step} GiB; nearest: {' or '.join(map(str, near))}"


def throughput_choices(file_system: LustreFileSystem) -> tuple[int, ...]:
    """The per-unit throughputs FSx takes for the file system's type; empty: it takes none (scratch)."""
    return THROUGHPUTS.get((file_system.deployment_type, file_system.storage_type), ())


def metadata_iops_allowed(iops: int) -> bool:
    return iops in SMALL_METADATA_IOPS or (0 < iops <= MAX_METADATA_IOPS and iops % METADATA_IOPS_STEP == 0)


def throughput_mbps(gib: int, per_tib: int) -> int:
    """A persistent file system's throughput: capacity (TiB) times its per-unit throughput."""
    return gib * per_tib // 1024


def overlapping_paths(first: str, second: str) -> bool:
    """Two file system paths of data repository associations that FSx refuses together: equal, or one inside
    the other ("if a data repository is associated with file system path /ns1/, then you cannot link another
    data repository with file system path /ns1/ns2")."""
    # Compared as the directories they name: /a/../b is /b, /a//b/. is /a/b.
    a, b = (posixpath.normpath(path).rstrip("/") + "/" for path in (first, second))
    return a.startswith(b) or b.startswith(a)


def file_system_zone(config: KitConfig, file_system: LustreFileSystem) -> str:
    """The zone a file system lives in: its own, else the environment's first."""
    return file_system.availability_zone_id or config.availability_zone_ids[0]
