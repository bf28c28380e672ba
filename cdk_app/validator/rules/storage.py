"""Shared storage: the FSx for Lustre file systems of the storage section, against what FSx takes for each
deployment type (cdk_app/domain/lustre.py, from botocore's FSx model), the environment's zones and teams."""

from __future__ import annotations

from cdk_app.config.model import KitConfig
from cdk_app.config.storage_model import LustreFileSystem
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.lustre import (
    HDD_TYPE,
    METADATA_TYPE,
    NO_ASSOCIATIONS_TYPE,
    capacity_allowed,
    capacity_choices,
    capacity_steps,
    file_system_zone,
    is_scratch,
    metadata_iops_allowed,
    overlapping_paths,
    throughput_choices,
)
from cdk_app.domain.mount_paths import ALLOWED, bad_mount_path
from cdk_app.domain.s3_names import bucket_name_problem
from cdk_app.findings import format_path
from cdk_app.support.text_table import printable
from cdk_app.validator.reporter import Reporter, report_repeats
from cdk_app.validator.rules.region import partition
from cdk_app.validator.rules.zones import group_zone


def check_storage(config: KitConfig, report: Reporter) -> None:
    if config.storage is None:
        return
    names: list[tuple[PathKey, str]] = []
    mounts: list[tuple[PathKey, str]] = []
    for i, file_system in enumerate(config.storage.file_systems):
        base: PathKey = ("storage", "file_systems", i)
        # Names are the claims' in the team's namespace: unique per team. A repeated one is HPK910 already.
        key = f"{printable(file_system.team)}/{file_system.name}"
        if all(key != name for _, name in names):
            mounts.append((base + ("mount_path",), f"{printable(file_system.team)}:{file_system.job_mount_path}"))
        names.append((base + ("name",), key))
        _check_mount_path(file_system, base, report)
        _check_team(config, file_system, base, report)
        _check_storage_type(file_system, base, report)
        _check_performance(file_system, base, report)
        _check_encryption(config, file_system, base, report)
        _check_backups(file_system, base, report)
        _check_zone(config, file_system, base, report)
        _check_associations(file_system, base, report)
    report_repeats(report, "HPK910", names, "file system (team/name)")
    report_repeats(report, "HPK910", mounts, "team:mount path")


def _check_mount_path(file_system: LustreFileSystem, base: PathKey, report: Reporter) -> None:
    if file_system.mount_path is None:
        return
    if bad_mount_path(file_system.mount_path):
        report.error("HPK911", base + ("mount_path",), f"mount path {file_system.mount_path} is not one a job can use",
                     f"{ALLOWED} (default: /fsx/{file_system.name})")


def _check_team(config: KitConfig, file_system: LustreFileSystem, base: PathKey, report: Reporter) -> None:
    teams = [t.name for t in config.teams]
    if file_system.team not in teams:
        report.error("HPK901", base + ("team",), f"file system '{file_system.name}' belongs to team "
                     f"{file_system.team!r}, which is not a team of the environment",
                     f"use one of: {', '.join(map(repr, teams)) or 'none (add the team under teams first)'}")


def _check_storage_type(file_system: LustreFileSystem, base: PathKey, report: Reporter) -> None:
    kind, storage, cache = file_system.deployment_type, file_system.storage_type, file_system.drive_cache_type
    if storage == "HDD" and kind != HDD_TYPE:
        report.error("HPK918", base + ("storage_type",), f"{kind} file systems have SSD storage only",
                     f"remove storage_type (SSD), or use deployment_type {HDD_TYPE} for HDD")
    elif storage == "HDD" and cache is None:
        report.error("HPK918", base + ("drive_cache_type",), "an HDD file system needs a drive_cache_type",
                     "set drive_cache_type: READ (caches up to 20% of the capacity on SSD) or NONE")
    elif storage == "SSD" and cache is not None:
        report.error("HPK918", base + ("drive_cache_type",), "drive_cache_type is for HDD file systems only",
                     "remove drive_cache_type, or set storage_type: HDD on a PERSISTENT_1 file system")


def _check_performance(file_system: LustreFileSystem, base: PathKey, report: Reporter) -> None:
    kind = file_system.deployment_type
    described = f"{kind}{' HDD' if file_system.storage_type == 'HDD' else ''}"
    throughput, choices = file_system.per_unit_storage_throughput, throughput_choices(file_system)
    if choices and throughput not in choices:
        given = "is required" if throughput is None else f"{throughput} MB/s/TiB is not allowed"
        report.error("HPK903", base + ("per_unit_storage_throughput",),
                     f"{described}: per_unit_storage_throughput {given}",
                     f"use one of: {', '.join(map(str, choices))} MB/s per TiB of storage")
    elif not choices and throughput is not None and is_scratch(kind):
        report.error("HPK903", base + ("per_unit_storage_throughput",),
                     f"{kind} has no per-unit throughput (a scratch file system's follows its capacity)",
                     "remove per_unit_storage_throughput, or use a persistent deployment_type")
    steps = capacity_steps(file_system)
    gib = file_system.storage_capacity_gib
    # HDD without a valid throughput: its capacity increment is unknown, and HPK903 says why.
    if steps is not None and not capacity_allowed(gib, steps):
        report.error("HPK902", base + ("storage_capacity_gib",),
                     f"{gib} GiB is not a capacity FSx for Lustre {described} takes"
                     + (f" at {throughput} MB/s/TiB" if file_system.storage_type == "HDD" else ""),
                     f"use {capacity_choices(gib, steps)}")
    iops = file_system.metadata_iops
    if iops is not None and kind != METADATA_TYPE:
        report.error("HPK904", base + ("metadata_iops",), f"{kind} has no metadata configuration",
                     f"remove metadata_iops, or use deployment_type {METADATA_TYPE}")
    elif iops is not None and not metadata_iops_allowed(iops):
        report.error("HPK904", base + ("metadata_iops",), f"{iops} metadata IOPS is not a value FSx provisions",
                     "use 1500, 3000, 6000, 12000 or a multiple of 12000 up to 192000, or leave it out (AUTOMATIC)")


def _check_encryption(config: KitConfig, file_system: LustreFileSystem, base: PathKey, report: Reporter) -> None:
    key = file_system.kms_key_id
    if key is None:
        return
    if is_scratch(file_system.deployment_type):
        # CreateFileSystem KmsKeyId: persistent types only; scratch ones always use FSx's key.
        report.error("HPK919", base + ("kms_key_id",),
                     f"{file_system.deployment_type} file systems are encrypted with FSx's own key only",
                     "remove kms_key_id, or use a persistent deployment_type")
        return
    if key.startswith("arn:"):
        # arn:<partition>:kms:<region>:<account>:... - FSx takes a key of the file system's own region (KMS keys are
        # regional; a multi-Region key's replica there has its own ARN).
        _, key_partition, _, key_region = key.split(":", 4)[:4]
        if key_region != config.region or key_partition != partition(config.region):
            report.error("HPK919", base + ("kms_key_id",),
                         f"the KMS key is in {key_partition}/{key_region}, the file system in "
                         f"{partition(config.region)}/{config.region}",
                         f"use a key of {config.region} (for a multi-Region key, its replica there)")


def _check_backups(file_system: LustreFileSystem, base: PathKey, report: Reporter) -> None:
    retention, start = file_system.automatic_backup_retention_days, file_system.daily_automatic_backup_start_time
    if is_scratch(file_system.deployment_type):
        for key, value in (("automatic_backup_retention_days", retention), ("daily_automatic_backup_start_time", start)):
            if value is not None:
                report.error("HPK905", base + (key,), f"{file_system.deployment_type} file systems have no backups",
                             f"remove {key}, or use a persistent deployment_type")
    elif start is not None and not retention:
        report.error("HPK905", base + ("daily_automatic_backup_start_time",),
                     "a backup start time without automatic backups (automatic_backup_retention_days is 0 or unset)",
                     "set automatic_backup_retention_days to 1-90, or remove daily_automatic_backup_start_time")


def _check_zone(config: KitConfig, file_system: LustreFileSystem, base: PathKey, report: Reporter) -> None:
    zone = file_system_zone(config, file_system)
    path = base + ("availability_zone_id",)
    with_subnet = ({s.availability_zone_id for s in config.network.existing_subnets} if config.network.existing_vpc_id
                   else set(config.availability_zone_ids))
    if zone not in with_subnet:
        report.error("HPK906", path, f"file system '{file_system.name}' is in zone {zone}, where the environment "
                     "has no subnet", f"use one of: {', '.join(sorted(with_subnet))}")
        return
    groups = config.hyperpod.instance_groups
    zones = {group_zone(config, g) for g in range(len(groups)) if groups[g].count > 0}
    if zone not in zones:
        report.warning("HPK907", path, f"file system '{file_system.name}' is in zone {zone}, where no instance group "
                       "has nodes: every read and write crosses zones (slower, and charged per GB)",
                       f"put it in the zone of the groups the team trains on: {', '.join(sorted(zones)) or 'none'}")


def _check_associations(file_system: LustreFileSystem, base: PathKey, report: Reporter) -> None:
    associations = file_system.data_repository_associations
    if associations and file_system.deployment_type == NO_ASSOCIATIONS_TYPE:
        report.error("HPK920", base + ("data_repository_associations",),
                     f"{NO_ASSOCIATIONS_TYPE} file systems take no data repository associations",
                     "use deployment_type SCRATCH_2 (same price) or a persistent type to link S3")
        return
    s3_paths: list[tuple[PathKey, str]] = []
    for j, association in enumerate(associations):
        here: PathKey = base + ("data_repository_associations", j)
        s3_paths.append((here + ("s3_path",), association.s3_path.rstrip("/") + "/"))
        bucket = association.s3_path.removeprefix("s3://").split("/", 1)[0]
        problem = bucket_name_problem(bucket)
        if problem:
            report.error("HPK912", here + ("s3_path",), f"bucket {bucket[:80]!r} is not a name S3 allows: {problem}",
                         "the name of an existing general purpose bucket (S3 User Guide, bucket naming rules)")
        for key in ("import_events", "export_events"):
            events = getattr(association, key)
            report_repeats(report, "HPK909", [(here + (key, k), e) for k, e in enumerate(events)], "event")
        if association.file_system_path == "/" and len(associations) > 1:
            report.error("HPK908", here + ("file_system_path",), "/ links the whole file system, so it must be its "
                         "only data repository association", "link subdirectories such as /datasets instead")
            continue
        for k in range(j):
            other = associations[k].file_system_path
            if other != "/" and overlapping_paths(association.file_system_path, other):
                report.error("HPK908", here + ("file_system_path",),
                             f"{association.file_system_path} overlaps {other} "
                             f"(at {format_path(base + ('data_repository_associations', k, 'file_system_path'))})",
                             "each association needs its own directory, not inside another's")
    report_repeats(report, "HPK908", s3_paths, "S3 path")
