"""The optional `storage:` section: FSx for Lustre file systems of the teams, each optionally linked to S3
prefixes by data repository associations, as frozen pydantic models.

Enums, ranges and formats are botocore's FSx model and cfn-lint's AWS::FSx::* schemas (cdk_app/domain/lustre.py
holds the values the documentation states; tests/unit/domain/test_lustre.py checks them against both). Rules
across fields (capacity increments per type, throughput per type, zones, teams, overlapping paths) live in
cdk_app.validator.rules.storage.

A file system belongs to one team: the kit gives the team a PersistentVolume of the whole file system and a
claim bound to it in the team's namespace, so no other team's pods can mount it (docs/how-to/storage.md).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from cdk_app.config.types import AZ_ID_PATTERN, Bool, Int, KitModel, Str

# botocore FSx LustreDeploymentType, all four: SCRATCH_1 (first-generation scratch) takes no data repository
# association and no in-transit encryption, and its capacity never grows; SCRATCH_2 replaces it at the same price.
DeploymentType = Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"]
# botocore FSx StorageType without INTELLIGENT_TIERING: a Lustre Intelligent-Tiering file system has no storage
# capacity to provision but a ThroughputCapacity and a read cache, a model of its own the kit does not offer.
StorageType = Literal["SSD", "HDD"]
DriveCacheType = Literal["NONE", "READ"]
Compression = Literal["NONE", "LZ4"]
EventType = Literal["NEW", "CHANGED", "DELETED"]
# botocore FSx: AutomaticBackupRetentionDays 0-90; MetadataIops 1500-192000; CreateDataRepositoryAssociation "a
# maximum of 8 data repository associations on a file system".
MAX_BACKUP_RETENTION_DAYS = 90
MAX_METADATA_IOPS = 192000
MAX_ASSOCIATIONS = 8

# The claim's name in the team's namespace and part of its PersistentVolume's (hyperpod-kit-hyperpod-ns-<team>-<name>).
FILE_SYSTEM_NAME_PATTERN = r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$"
# botocore FSx Namespace (FileSystemPath): 1-4096 characters without NUL, NEL, line or paragraph separators,
# CR or LF; FSx also requires the leading slash.
FILE_SYSTEM_PATH_PATTERN = "^/[^\\u0000\\u0085\\u2028\\u2029\\r\\n]{0,4095}$"
# botocore FSx ArchivePath (DataRepositoryPath), 3-4357 characters, of the form s3://bucket-name/prefix/ with an
# S3 bucket name (3-63 lower-case letters, digits, dots and hyphens).
S3_PATH_PATTERN = "^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[^\\u0000\\u0085\\u2028\\u2029\\r\\n]{0,4289})?$"
# The job's default mount point of the file system: an absolute path without ':' (job --volume's separator); '.',
# '..' and the runtime's directories are HPK911's.
MOUNT_PATH_PATTERN = r"^/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$"
DAILY_TIME_PATTERN = r"^([01]\d|2[0-3]):([0-5]\d)$"
MAX_FILE_SYSTEMS = 10
# A KMS key as AWS::FSx::FileSystem KmsKeyId takes it (cfn-lint's formats AWS::KMS::Key.Arn, AWS::KMS::Key.Id and
# AWS::KMS::Alias.AliasName, rules E1157, E1162 and its alias rule): a key or alias ARN, a key id (mrk- for a
# multi-Region key) or an alias name.
KMS_KEY_PATTERN = (r"^(arn:aws[a-zA-Z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/.+"
                   r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32}|alias/[a-zA-Z0-9:/_-]+)$")


class DataRepositoryAssociation(KitModel):
    file_system_path: Annotated[Str, Field(pattern=FILE_SYSTEM_PATH_PATTERN)]
    """Directory of the file system linked to the S3 prefix, with its leading slash, e.g. /datasets. Paths of one
    file system may not nest; / only as its single association. Changing it replaces the association."""
    s3_path: Annotated[Str, Field(pattern=S3_PATH_PATTERN, max_length=4357)]
    """S3 bucket or prefix, e.g. s3://my-bucket/datasets/. Changing it replaces the association."""
    import_events: Annotated[tuple[EventType, ...], Field(max_length=3)] = ()
    """S3 changes imported into the file system automatically: NEW, CHANGED, DELETED. Default none."""
    export_events: Annotated[tuple[EventType, ...], Field(max_length=3)] = ()
    """File system changes exported to S3 automatically: NEW, CHANGED, DELETED. Default none."""
    batch_import_metadata_on_create: Bool = False
    """Import the metadata of the objects already under the prefix when the association is created."""
    imported_file_chunk_size_mib: Annotated[Int, Field(ge=1, le=512000)] | None = None
    """Most data of one imported file on one disk (MiB, 1-512000; sets its stripe count). Default: FSx's 1024."""


class LustreFileSystem(KitModel):
    name: Annotated[Str, Field(pattern=FILE_SYSTEM_NAME_PATTERN)]
    """Name of the file system, unique among the team's: its claim in the team's namespace is called so
    (lower-case letters, digits and inner hyphens, at most 32)."""
    team: Str
    """The team whose file system it is: a team of `teams`. Only that team's pods can mount it."""
    deployment_type: DeploymentType = "PERSISTENT_2"
    """PERSISTENT_2 (latency-sensitive training, metadata performance), PERSISTENT_1 (throughput, also on HDD), or
    SCRATCH_2 (temporary data: not replicated, no backups); SCRATCH_1 only where it already exists (no S3 links, its
    capacity never grows). Fixed once created: FSx cannot change it (`plan` says the deploy would fail); another
    type is a new file system under another name."""
    storage_type: StorageType = "SSD"
    """SSD, or HDD for PERSISTENT_1 only (cheaper per GiB, for large sequential reads; with drive_cache_type).
    Fixed once created."""
    drive_cache_type: DriveCacheType | None = None
    """HDD only, and required there: READ caches up to 20% of the capacity on SSD for files read again; NONE."""
    storage_capacity_gib: Annotated[Int, Field(ge=1200, le=2147483647)]
    """Storage in GiB. SSD (and SCRATCH_2): 1200, 2400 or a multiple of 2400; SCRATCH_1: 1200, 2400 or a multiple
    of 3600; HDD: a multiple of 6000 at 12 MB/s/TiB, of 1800 at 40 MB/s/TiB. It can only grow, by editing this
    number (SCRATCH_1: never)."""
    per_unit_storage_throughput: Annotated[Int, Field(ge=12, le=1000)] | None = None
    """Throughput per TiB of storage (MB/s/TiB), required by the persistent types: PERSISTENT_1 50, 100 or 200 on
    SSD, 12 or 40 on HDD; PERSISTENT_2 125, 250, 500 or 1000. Scratch file systems take none."""
    kms_key_id: Annotated[Str, Field(pattern=KMS_KEY_PATTERN, max_length=2048)] | None = None
    """Persistent types: the customer-managed KMS key that encrypts the data at rest (key ARN, key id or alias,
    in the environment's region; its key policy must let FSx use it). Default: the account's aws/fsx key. Scratch
    types always use FSx's key. Changing it replaces the file system (`plan` refuses)."""
    metadata_iops: Annotated[Int, Field(ge=1500, le=MAX_METADATA_IOPS)] | None = None
    """PERSISTENT_2 only: metadata IOPS to provision (1500, 3000, 6000, 12000 or a multiple of 12000). Default:
    AUTOMATIC mode, which scales them with the capacity."""
    compression: Compression = "LZ4"
    """Data compression: LZ4 (as AWS's HyperPod setups create it) or NONE."""
    availability_zone_id: Annotated[Str, Field(pattern=AZ_ID_PATTERN)] | None = None
    """Zone of the file system (an FSx for Lustre file system lives in one): put it beside the instance groups
    the team trains on. Default: the environment's first zone. Changing it replaces the file system."""
    automatic_backup_retention_days: Annotated[Int, Field(ge=0, le=MAX_BACKUP_RETENTION_DAYS)] | None = None
    """Persistent types: days automatic daily backups are kept (0-90, 0 turns them off). Default: FSx's (0)."""
    daily_automatic_backup_start_time: Annotated[Str, Field(pattern=DAILY_TIME_PATTERN)] | None = None
    """Persistent types with backups: when the daily backup starts, HH:MM in UTC. Default: FSx picks one."""
    mount_path: Annotated[Str, Field(pattern=MOUNT_PATH_PATTERN)] | None = None
    """Where `hyperpod-kit job` mounts the file system in the team's pods. Default: /fsx/<name>."""
    data_repository_associations: Annotated[tuple[DataRepositoryAssociation, ...], Field(max_length=MAX_ASSOCIATIONS)] = ()
    """S3 prefixes linked to directories of the file system (at most 8). Default none."""

    @property
    def job_mount_path(self) -> str:
        return self.mount_path or f"/fsx/{self.name}"


class Storage(KitModel):
    """Shared storage of the teams' jobs."""

    file_systems: Annotated[tuple[LustreFileSystem, ...], Field(min_length=1, max_length=MAX_FILE_SYSTEMS)]
    """FSx for Lustre file systems (1-10), each a team's."""
    csi_driver_version: Annotated[Str, Field(pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$")] | None = None
    """Version of the aws-fsx-csi-driver EKS add-on that mounts the file systems on the nodes (as `aws eks
    describe-addon-versions --addon-name aws-fsx-csi-driver` lists them). Default: the version EKS picks for the
    cluster's Kubernetes version when the add-on is created; record it here to pin it."""


def team_file_systems(storage: Storage | None, team: str) -> tuple[LustreFileSystem, ...]:
    """The file systems of `team`, in config order (each gets a claim named after it in the team's namespace)."""
    return tuple(fs for fs in (storage.file_systems if storage else ()) if fs.team == team)
