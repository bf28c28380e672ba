"""FSx for Lustre: what a file system of each deployment type takes, beyond the config model's enums and
ranges (cdk_app/config/storage_model.py, which says which types the kit offers). One source for the validator
and the stacks; tests/unit/domain/test_lustre.py holds every number to the botocore FSx model (its enums, ranges
and the documentation strings of CreateFileSystem) and to cfn-lint's AWS::FSx::* schemas.
"""

from __future__ import annotations

import posixpath

from cdk_app.config.model import KitConfig
from cdk_app.config.storage_model import MAX_METADATA_IOPS, LustreFileSystem

# CreateFileSystem StorageCapacity: "For SCRATCH_2, PERSISTENT_2, and PERSISTENT_1 deployment types using SSD
# storage type, the valid values are 1200 GiB, 2400 GiB, and increments of 2400 GiB."
SMALL_CAPACITIES_GIB = (1200, 2400)
CAPACITY_INCREMENT_GIB = 2400
# PerUnitStorageThroughput (MB/s/TiB), SSD: only the persistent types provision it.
THROUGHPUTS: dict[str, tuple[int, ...]] = {"PERSISTENT_1": (50, 100, 200), "PERSISTENT_2": (125, 250, 500, 1000)}
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


def capacity_allowed(gib: int) -> bool:
    return gib in SMALL_CAPACITIES_GIB or (gib > 0 and gib % CAPACITY_INCREMENT_GIB == 0)


def capacity_choices(gib: int) -> str:
    """What a refused capacity may be instead: the allowed values around it."""
    step = CAPACITY_INCREMENT_GIB
    below = [c for c in (*SMALL_CAPACITIES_GIB, gib // step * step) if 0 < c < gib]
    above = min(c for c in (*SMALL_CAPACITIES_GIB, (gib // step + 1) * step) if c > gib)
    near = [max(below)] if below else []
    near.append(above)
    return (f"{', '.join(map(str, SMALL_CAPACITIES_GIB))} or a multiple of {CAPACITY_INCREMENT_GIB} GiB; "
            f"nearest: {' or '.join(map(str, near))}")


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
