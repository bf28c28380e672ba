"""Live checks of the `storage:` section (`hyperpod-kit validate CONFIG --live`), read-only.

Finds the deployed file systems through the storage stack's FileSystemIds output (<team>/<name> -> id, so a
file system is matched by what the kit created, not by a tag anyone can copy), describes each with FSx, lists
their data repository associations and describes the FSx CSI driver add-on, then reports against the config:
a file system or association missing or not AVAILABLE (HPK913), a setting FSx cannot change in place
(HPK914), capacity or metadata IOPS above the config - grown outside the kit; FSx never shrinks them
(HPK915), settings that drifted or wait for a deploy and associations made outside the kit (HPK916), and the
CSI driver add-on missing, unhealthy or not the pinned version (HPK917). The team volumes and claims are
Kubernetes objects, which --live does not read (the installer applies them and refuses any other form).
Every call is a Describe; nothing is written.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from typing import Any

from cdk_app.cli.live import LiveAccessError, LiveResult, call_api, live_finding, pages, stack_outputs, with_part
from cdk_app.config.model import KitConfig
from cdk_app.config.storage_model import LustreFileSystem
from cdk_app.config.yaml_source import SourceMap
from cdk_app.domain.lustre import CSI_DRIVER_ADDON, FILE_SYSTEM_IDS_OUTPUT
from cdk_app.findings import Severity
from cdk_app.stacks.layout import STORAGE, stack_name

# The IAM actions the storage part of --live needs beyond live.ACTIONS; docs/how-to/storage.md names them.
ACTIONS = ("fsx:DescribeFileSystems", "fsx:DescribeDataRepositoryAssociations")
# botocore FSx FileSystemLifecycle / DataRepositoryLifecycle: states on the way to AVAILABLE, and every other
# one but AVAILABLE (FAILED, MISCONFIGURED, MISCONFIGURED_UNAVAILABLE, DELETING) means it does not serve.
TRANSIENT = {"CREATING", "UPDATING"}
# DescribeDataRepositoryAssociations: a filter takes at most 20 values.
FILTER_VALUES = 20


@dataclass
class StorageLiveState:
    stack_found: bool
    ids: dict[str, str]  # "<team>/<name>" -> file system id, from the storage stack's output
    file_systems: dict[str, dict[str, Any]]  # id -> FSx FileSystem; an id FSx does not know is absent
    associations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # id -> its associations
    addon: dict[str, Any] | None = None  # eks DescribeAddon's addon; None when the cluster has none
    addon_read: bool = False  # False: the EKS cluster was not known, so the add-on was not read


def gather_storage(config: KitConfig, cloudformation: Any, fsx: Any, eks: Any, eks_cluster: str | None) -> StorageLiveState:
    from botocore.exceptions import ClientError

    outputs = stack_outputs(cloudformation, stack_name(config, STORAGE))
    try:
        ids = json.loads(outputs.get(FILE_SYSTEM_IDS_OUTPUT) or "{}")
    except json.JSONDecodeError as err:
        raise LiveAccessError(f"the storage stack's {FILE_SYSTEM_IDS_OUTPUT} output is not JSON: {err}") from err
    if not isinstance(ids, dict) or not all(isinstance(v, str) for v in ids.values()):
        raise LiveAccessError(f"the storage stack's {FILE_SYSTEM_IDS_OUTPUT} output is not a JSON object of file "
                              "system ids: was the stack changed outside the kit?")
    file_systems: dict[str, dict[str, Any]] = {}
    # One id per call: a file system deleted outside the kit fails only its own call (FileSystemNotFound).
    for file_system_id in sorted(set(ids.values())):
        try:
            found = call_api(fsx, "describe_file_systems", FileSystemIds=[file_system_id])["FileSystems"]
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "FileSystemNotFound":
                raise LiveAccessError(f"fsx:DescribeFileSystems failed: {err}") from err
            continue
        file_systems.update((f["FileSystemId"], f) for f in found)
    associations: dict[str, list[dict[str, Any]]] = {i: [] for i in file_systems}
    known = sorted(file_systems)
    for start in range(0, len(known), FILTER_VALUES):
        chunk = known[start:start + FILTER_VALUES]
        for association in pages(fsx, "describe_data_repository_associations", "Associations",
                                 Filters=[{"Name": "file-system-id", "Values": chunk}]):
            associations.setdefault(association.get("FileSystemId", ""), []).append(association)
    addon = None
    if eks_cluster:
        try:
            addon = call_api(eks, "describe_addon", clusterName=eks_cluster, addonName=CSI_DRIVER_ADDON)["addon"]
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise LiveAccessError(f"eks:DescribeAddon failed: {err}") from err
    return StorageLiveState(bool(outputs), ids, file_systems, associations, addon, bool(eks_cluster))


def compare_storage(config: KitConfig, source: SourceMap, state: StorageLiveState) -> LiveResult:
    storage = config.storage
    result = LiveResult()
    if storage is None:
        return result

    def add(code: str, severity: Severity, path: tuple[str | int, ...], message: str, hint: str) -> None:
        result.findings.append(live_finding(source, code, severity, ("storage", *path), message, hint))

    section = []
    for i, spec in enumerate(storage.file_systems):
        key = f"{spec.team}/{spec.name}"
        file_system_id = state.ids.get(key)
        live = state.file_systems.get(file_system_id or "")
        section.append({"file_system": key, "id": file_system_id, "lifecycle": live.get("Lifecycle") if live else None,
                        "storage_capacity_gib": live.get("StorageCapacity") if live else None})
        if file_system_id is None:
            add("HPK913", Severity.WARNING, ("file_systems", i, "name"), f"file system '{key}' is not deployed",
                f"deploy the storage stack ({stack_name(config, STORAGE)})")
            continue
        if live is None:
            add("HPK913", Severity.ERROR, ("file_systems", i, "name"),
                f"file system '{key}' ({file_system_id}) was deleted outside the kit: CloudFormation still holds it, so "
                "a deploy does not create it again, and the team's volume mounts nothing",
                "give it another name in the config (a new file system; restore the data from a backup), or restore "
                "the backup and import it into the storage stack")
            continue
        _compare_file_system(spec, i, live, add)
        _compare_associations(spec, i, state.associations.get(file_system_id, []), add)
    wanted = {f"{spec.team}/{spec.name}" for spec in storage.file_systems}
    for key, file_system_id in sorted(state.ids.items()):
        if key not in wanted:
            add("HPK916", Severity.WARNING, ("file_systems",),
                f"file system '{key}' ({file_system_id}) is deployed but not in the config: the next deploy takes it "
                "and its team's volume out of the stack; the file system itself is kept (and billed) until deleted",
                "put it back in storage.file_systems, or copy its data off and delete it after the deploy "
                "(docs/how-to/teardown.md)")
    _compare_addon(config, state, add)
    result.section = {"stack_found": state.stack_found, "file_systems": section,
                      "csi_driver_addon": (state.addon or {}).get("addonVersion")}
    return result


def _lifecycle(what: str, live: dict[str, Any], path: tuple[str | int, ...], add: Any) -> None:
    lifecycle = live.get("Lifecycle", "AVAILABLE")
    if lifecycle == "AVAILABLE":
        return
    reason = (live.get("FailureDetails") or {}).get("Message")
    transient = lifecycle in TRANSIENT
    add("HPK913", Severity.WARNING if transient else Severity.ERROR, path,
        f"{what} is {lifecycle}{f': {reason}' if reason else ''}",
        "wait for it to become AVAILABLE and check again" if transient else
        "see the FSx console's failure details: a MISCONFIGURED association usually lacks access to its bucket")


def _compare_file_system(spec: LustreFileSystem, i: int, live: dict[str, Any], add: Any) -> None:
    base = ("file_systems", i)
    name = f"file system '{spec.team}/{spec.name}' ({live['FileSystemId']})"
    _lifecycle(name, live, (*base, "name"), add)
    lustre = live.get("LustreConfiguration") or {}
    # DeploymentType and DriveCacheType have no counterpart in UpdateFileSystem's Lustre configuration
    # (cdk_app/domain/lustre.py UPDATABLE_LUSTRE_SETTINGS); UpdateFileSystem's StorageType documents no Lustre use.
    fixed = (("deployment_type", spec.deployment_type, lustre.get("DeploymentType")),
             ("storage_type", spec.storage_type, live.get("StorageType")),
             ("drive_cache_type", spec.drive_cache_type, lustre.get("DriveCacheType")))
    changed = [(key, wanted, actual) for key, wanted, actual in fixed if actual is not None and actual != wanted]
    for key, wanted, actual in changed:
        add("HPK914", Severity.ERROR, (*base, key),
            f"{name} has {key} {actual}, the config says {wanted}: FSx cannot change it on an existing file system, so "
            "the deploy fails",
            f"keep {key}: {actual}, or create a new file system under another name and copy the data")
    if changed:
        return  # the other settings follow from these
    capacity = live.get("StorageCapacity")
    if isinstance(capacity, int) and capacity > spec.storage_capacity_gib:
        # UpdateFileSystem StorageCapacity: "The value must be greater than the current storage capacity".
        add("HPK915", Severity.ERROR, (*base, "storage_capacity_gib"),
            f"{name} has {capacity} GiB, the config says {spec.storage_capacity_gib}: it was grown outside the kit, and "
            "FSx never shrinks a file system, so the deploy fails",
            f"set storage_capacity_gib: {capacity}")
    elif isinstance(capacity, int) and capacity < spec.storage_capacity_gib:
        add("HPK916", Severity.WARNING, (*base, "storage_capacity_gib"),
            f"{name} has {capacity} GiB, the config says {spec.storage_capacity_gib}: the next deploy grows it (for good)",
            "deploy the storage stack, or set the deployed capacity back in the config")
    _compare_metadata(spec, name, base, lustre.get("MetadataConfiguration"), add)
    for key, wanted, actual in (
            ("per_unit_storage_throughput", spec.per_unit_storage_throughput, lustre.get("PerUnitStorageThroughput")),
            ("compression", spec.compression, lustre.get("DataCompressionType", "NONE")),
            # FSx's default retention is 0 (no backups); scratch file systems report none.
            ("automatic_backup_retention_days", spec.automatic_backup_retention_days or 0,
             lustre.get("AutomaticBackupRetentionDays") or 0)):
        if wanted != actual:
            add("HPK916", Severity.WARNING, (*base, key),
                f"{name} has {key} {actual} deployed, the config says {wanted}",
                "deploy the storage stack (it sets the config's value), or bring the config in line with the change")
    start = spec.daily_automatic_backup_start_time
    if start is not None and lustre.get("DailyAutomaticBackupStartTime") not in (None, start):
        add("HPK916", Severity.WARNING, (*base, "daily_automatic_backup_start_time"),
            f"{name} starts its backups at {lustre['DailyAutomaticBackupStartTime']} UTC, the config says {start}",
            "deploy the storage stack, or bring the config in line with the change")


def _compare_metadata(spec: LustreFileSystem, name: str, base: tuple[str | int, ...], metadata: dict[str, Any] | None,
                      add: Any) -> None:
    if not metadata:  # not PERSISTENT_2
        return
    mode, iops = metadata.get("Mode"), metadata.get("Iops")
    path = (*base, "metadata_iops")
    if spec.metadata_iops is None:
        if mode == "USER_PROVISIONED":
            # UpdateFileSystemLustreMetadataConfiguration Mode: back to AUTOMATIC is refused when the current IOPS
            # are above the automatic default ("downscaling Metadata IOPS is not supported").
            add("HPK916", Severity.WARNING, path,
                f"{name} has {iops} user-provisioned metadata IOPS, the config says AUTOMATIC: the deploy switches it "
                "back, which FSx refuses when that is below the IOPS provisioned now",
                f"set metadata_iops: {iops}")
        return
    if isinstance(iops, int) and iops > spec.metadata_iops:
        # UpdateFileSystemLustreMetadataConfiguration Iops: "must be greater than or equal to the current number".
        add("HPK915", Severity.ERROR, path,
            f"{name} has {iops} metadata IOPS ({mode}), the config says {spec.metadata_iops}: FSx never lowers them, "
            "so the deploy fails", f"set metadata_iops: {iops}")
    elif iops != spec.metadata_iops or mode != "USER_PROVISIONED":
        add("HPK916", Severity.WARNING, path,
            f"{name} has {iops} metadata IOPS ({mode}), the config says {spec.metadata_iops}",
            "deploy the storage stack, or bring the config in line with the change")


def _events(policy: dict[str, Any] | None) -> list[str]:
    return sorted((policy or {}).get("Events", []))


def _directory(path: str) -> str:
    """A file system path as the directory it names (/datasets/ and /datasets/. are /datasets)."""
    return posixpath.normpath(path or "/").replace("//", "/")


def _prefix(s3_path: str) -> str:
    return s3_path.rstrip("/") + "/"


def _compare_associations(spec: LustreFileSystem, i: int, live: list[dict[str, Any]], add: Any) -> None:
    base = ("file_systems", i, "data_repository_associations")
    name = f"file system '{spec.team}/{spec.name}'"
    deployed = {_directory(a.get("FileSystemPath", "")): a for a in live}
    for j, wanted in enumerate(spec.data_repository_associations):
        association = deployed.pop(_directory(wanted.file_system_path), None)
        here = (*base, j)
        if association is None:
            add("HPK916", Severity.WARNING, (*here, "file_system_path"),
                f"{name} has no data repository association at {wanted.file_system_path} deployed",
                "deploy the storage stack")
            continue
        _lifecycle(f"the data repository association {wanted.file_system_path} of {name}", association,
                   (*here, "file_system_path"), add)
        if _prefix(association.get("DataRepositoryPath") or "") != _prefix(wanted.s3_path):
            add("HPK916", Severity.WARNING, (*here, "s3_path"),
                f"{wanted.file_system_path} of {name} is linked to {association.get('DataRepositoryPath')}, the config "
                f"says {wanted.s3_path}: the deploy replaces the association (the files stay on both sides)",
                "deploy the storage stack, or bring the config in line with the change")
        s3 = association.get("S3") or {}
        for key, policy in (("import_events", "AutoImportPolicy"), ("export_events", "AutoExportPolicy")):
            actual = _events(s3.get(policy))
            if actual != sorted(getattr(wanted, key)):
                add("HPK916", Severity.WARNING, (*here, key),
                    f"{wanted.file_system_path} of {name} has {key} [{', '.join(actual)}] deployed, the config says "
                    f"[{', '.join(sorted(getattr(wanted, key)))}]",
                    "deploy the storage stack, or bring the config in line with the change")
    for path, association in sorted(deployed.items()):
        add("HPK916", Severity.WARNING, base if spec.data_repository_associations else ("file_systems", i, "name"),
            f"{name} has a data repository association made outside the kit: {path} <-> "
            f"{association.get('DataRepositoryPath')} ({association.get('AssociationId')})",
            "add it to data_repository_associations, or delete it (the files stay on both sides)")


def _compare_addon(config: KitConfig, state: StorageLiveState, add: Any) -> None:
    storage = config.storage
    assert storage is not None
    pinned = storage.csi_driver_version
    path = ("csi_driver_version",)
    if state.addon is None:
        if state.stack_found and state.addon_read:
            add("HPK917", Severity.ERROR, path, f"the {CSI_DRIVER_ADDON} add-on is not on the EKS cluster: no node can "
                "mount a file system, so jobs with the team's volumes stay ContainerCreating",
                f"deploy the storage stack ({stack_name(config, STORAGE)})")
        return
    status, version = state.addon.get("status"), state.addon.get("addonVersion")
    if status not in (None, "ACTIVE", "CREATING", "UPDATING"):
        issues = "; ".join(i.get("message", "") for i in (state.addon.get("health") or {}).get("issues", []))
        add("HPK917", Severity.ERROR, path, f"the {CSI_DRIVER_ADDON} add-on is {status}{f': {issues}' if issues else ''}",
            "see the add-on's health issues (aws eks describe-addon) and deploy the storage stack again")
    if pinned is not None and version != pinned:
        add("HPK917", Severity.WARNING, path,
            f"the {CSI_DRIVER_ADDON} add-on is {version} on the cluster, the config pins {pinned}",
            "deploy the storage stack, or pin the deployed version")


def with_storage(result: LiveResult, config: KitConfig, source: SourceMap, session: Any, client_config: Any,
                 eks_cluster: str | None) -> LiveResult:
    """The live result plus the storage checks (under section "storage")."""
    if config.storage is None:
        return result
    clients = (session.client(service, config=client_config) for service in ("cloudformation", "fsx", "eks"))
    return with_part(result, source, "storage", "the shared storage", lambda: compare_storage(
        config, source, gather_storage(config, *clients, eks_cluster)))
