"""`validate --live` for the storage section against botocore's Stubber, which checks every request and every
stubbed response against the real CloudFormation, FSx and EKS models: file systems found through the storage
stack's output, drift of each setting, associations made outside the kit, the CSI add-on, and read errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber
from support.paths import ROOT

from cdk_app.cli.live import LiveAccessError, LiveResult
from cdk_app.cli.live_storage import compare_storage, gather_storage, with_storage
from cdk_app.config.loader import load_config

DEV_TEXT = (ROOT / "config" / "dev.yaml").read_text()
NOW = datetime(2026, 11, 21, tzinfo=UTC)
JOHN, SMITH = "fs-0123456789abcdef0", "fs-0fedcba9876543210"
KW = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "x"}


def load(text=DEV_TEXT):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dev.yaml"
        path.write_text(text)
        return load_config(path)


def file_system(fs_id, deployment_type, *, capacity=1200, throughput=None, lifecycle="AVAILABLE", backups=None,
                metadata=None, compression="LZ4", failure=None):
    lustre = {"DeploymentType": deployment_type, "DataCompressionType": compression, "MountName": "abcdefgh"}
    if throughput is not None:
        lustre["PerUnitStorageThroughput"] = throughput
    if backups is not None:
        lustre.update(AutomaticBackupRetentionDays=backups, DailyAutomaticBackupStartTime="03:00")
    if metadata is not None:
        lustre["MetadataConfiguration"] = metadata
    found = {"FileSystemId": fs_id, "FileSystemType": "LUSTRE", "Lifecycle": lifecycle, "StorageCapacity": capacity,
             "StorageType": "SSD", "CreationTime": NOW, "LustreConfiguration": lustre}
    if failure:
        found["FailureDetails"] = {"Message": failure}
    return found


def association(fs_id, path, s3, *, imports=("NEW", "CHANGED", "DELETED"), exports=(), lifecycle="AVAILABLE", ident=1):
    s3_config = {}
    if imports:
        s3_config["AutoImportPolicy"] = {"Events": list(imports)}
    if exports:
        s3_config["AutoExportPolicy"] = {"Events": list(exports)}
    return {"AssociationId": f"dra-{ident:017x}", "FileSystemId": fs_id, "Lifecycle": lifecycle, "FileSystemPath": path,
            "DataRepositoryPath": s3, "S3": s3_config, "CreationTime": NOW}


IN_SYNC = {
    JOHN: file_system(JOHN, "PERSISTENT_2", throughput=250, backups=7, metadata={"Mode": "AUTOMATIC", "Iops": 1500}),
    SMITH: file_system(SMITH, "SCRATCH_2"),
}
JOHN_LINK = association(JOHN, "/datasets", "s3://dev-datasets-111122223333/c4/")


def account(*, file_systems=None, associations=None, addon="v1.6.0-eksbuild.1", addon_status="ACTIVE",
            ids=None, stack=True, association_pages=1):
    """The account as gather_storage reads it: the storage stack's outputs, each file system by id (FSx answers
    FileSystemNotFound for an id it does not know), their associations page by page, the add-on."""
    file_systems = IN_SYNC if file_systems is None else file_systems
    associations = [JOHN_LINK] if associations is None else associations
    ids = {"john/checkpoints": JOHN, "smith/checkpoints": SMITH} if ids is None else ids
    cfn, fsx, eks = (boto3.client(s, **KW) for s in ("cloudformation", "fsx", "eks"))
    c, f, e = Stubber(cfn), Stubber(fsx), Stubber(eks)
    if stack:
        c.add_response("describe_stacks", {"Stacks": [{
            "StackName": "HyperPod-dev-storage", "CreationTime": NOW, "StackStatus": "CREATE_COMPLETE",
            "Outputs": [{"OutputKey": "FileSystemIds", "OutputValue": json.dumps(ids)}]}]},
            {"StackName": "HyperPod-dev-storage"})
    else:
        c.add_client_error("describe_stacks", service_error_code="ValidationError",
                           service_message="Stack with id HyperPod-dev-storage does not exist",
                           expected_params={"StackName": "HyperPod-dev-storage"})
    for fs_id in sorted(set(ids.values()) if stack else ()):
        if fs_id in file_systems:
            f.add_response("describe_file_systems", {"FileSystems": [file_systems[fs_id]]}, {"FileSystemIds": [fs_id]})
        else:
            f.add_client_error("describe_file_systems", service_error_code="FileSystemNotFound",
                               expected_params={"FileSystemIds": [fs_id]})
    known = sorted(i for i in (set(ids.values()) if stack else ()) if i in file_systems)
    if known:
        filters = [{"Name": "file-system-id", "Values": known}]
        size = max(1, -(-len(associations) // association_pages))
        chunks = [associations[k:k + size] for k in range(0, len(associations), size)] or [[]]
        for n, chunk in enumerate(chunks):
            response = {"Associations": chunk, **({"NextToken": f"dG9rZW{n}="} if n + 1 < len(chunks) else {})}
            f.add_response("describe_data_repository_associations", response,
                           {"Filters": filters, **({"NextToken": f"dG9rZW{n - 1}="} if n else {})})
    if addon is None:
        e.add_client_error("describe_addon", service_error_code="ResourceNotFoundException",
                           expected_params={"clusterName": "eks-dev", "addonName": "aws-fsx-csi-driver"})
    else:
        e.add_response("describe_addon", {"addon": {"addonName": "aws-fsx-csi-driver", "addonVersion": addon,
                                                    "status": addon_status, "clusterName": "eks-dev"}},
                       {"clusterName": "eks-dev", "addonName": "aws-fsx-csi-driver"})
    for stubber in (c, f, e):
        stubber.activate()
    return (cfn, fsx, eks), (c, f, e)


def findings(text=DEV_TEXT, **kwargs):
    loaded = load(text)
    clients, stubbers = account(**kwargs)
    state = gather_storage(loaded.config, *clients, "eks-dev")
    for stubber in stubbers:
        stubber.assert_no_pending_responses()
    return compare_storage(loaded.config, loaded.source, state)


def by_code(result):
    return sorted((f.code, f.severity.value, f.path) for f in result.findings)


def test_in_sync_storage_reports_nothing_and_reads_every_page():
    extra = association(JOHN, "/other", "s3://dev-datasets-111122223333/other/", ident=2)
    result = findings(associations=[JOHN_LINK, extra], association_pages=2)
    assert by_code(result) == [("HPK916", "warning", "storage.file_systems[0].data_repository_associations")]
    assert "made outside the kit: /other <-> s3://dev-datasets-111122223333/other/" in result.findings[0].message
    assert by_code(findings()) == []
    assert findings().section["file_systems"][0] == {"file_system": "john/checkpoints", "id": JOHN,
                                                     "lifecycle": "AVAILABLE", "storage_capacity_gib": 1200}


def test_capacity_grown_outside_the_kit_is_an_error_naming_the_deployed_size():
    result = findings(file_systems={**IN_SYNC, JOHN: {**IN_SYNC[JOHN], "StorageCapacity": 2400}})
    finding, = result.findings
    assert (finding.code, finding.severity.value, finding.path) == (
        "HPK915", "error", "storage.file_systems[0].storage_capacity_gib")
    assert finding.line == DEV_TEXT.splitlines().index("      storage_capacity_gib: 1200") + 1
    assert "has 2400 GiB, the config says 1200" in finding.message and finding.hint == "set storage_capacity_gib: 2400"


def test_a_capacity_the_config_grew_waits_for_the_deploy():
    text = DEV_TEXT.replace("storage_capacity_gib: 1200", "storage_capacity_gib: 2400", 1)
    finding, = findings(text).findings
    assert (finding.code, finding.severity.value) == ("HPK916", "warning") and "grows it (for good)" in finding.message


def test_updatable_settings_that_drifted_are_named():
    drifted = file_system(JOHN, "PERSISTENT_2", throughput=125, backups=0, compression="NONE",
                          metadata={"Mode": "AUTOMATIC", "Iops": 1500})
    result = findings(file_systems={**IN_SYNC, JOHN: drifted})
    assert by_code(result) == [("HPK916", "warning", f"storage.file_systems[0].{key}") for key in
                               ("automatic_backup_retention_days", "compression", "per_unit_storage_throughput")]


def test_a_deployment_type_fsx_cannot_change():
    result = findings(file_systems={**IN_SYNC, SMITH: file_system(SMITH, "PERSISTENT_1", throughput=50)})
    finding, = result.findings
    assert (finding.code, finding.path) == ("HPK914", "storage.file_systems[1].deployment_type")
    assert "has deployment_type PERSISTENT_1, the config says SCRATCH_2: FSx cannot change it" in finding.message
    hdd = {**file_system(SMITH, "PERSISTENT_1", throughput=40), "StorageType": "HDD"}
    hdd["LustreConfiguration"]["DriveCacheType"] = "READ"
    text = DEV_TEXT.replace("      deployment_type: SCRATCH_2\n", "      deployment_type: PERSISTENT_1\n"
                            "      per_unit_storage_throughput: 50\n")
    assert by_code(findings(text, file_systems={**IN_SYNC, SMITH: hdd})) == [
        ("HPK914", "error", f"storage.file_systems[1].{key}") for key in ("drive_cache_type", "storage_type")]


@pytest.mark.parametrize(("deployed", "config_iops", "expected"), [
    ({"Mode": "USER_PROVISIONED", "Iops": 24000}, 12000, ("HPK915", "error")),  # FSx never lowers them
    ({"Mode": "USER_PROVISIONED", "Iops": 6000}, 12000, ("HPK916", "warning")),  # raised on the next deploy
    ({"Mode": "USER_PROVISIONED", "Iops": 6000}, None, ("HPK916", "warning")),  # back to AUTOMATIC
    ({"Mode": "AUTOMATIC", "Iops": 12000}, 12000, ("HPK916", "warning")),  # to USER_PROVISIONED
])
def test_metadata_iops(deployed, config_iops, expected):
    text = DEV_TEXT if config_iops is None else DEV_TEXT.replace(
        "      per_unit_storage_throughput: 250\n", f"      per_unit_storage_throughput: 250\n      metadata_iops: {config_iops}\n", 1)
    drifted = file_system(JOHN, "PERSISTENT_2", throughput=250, backups=7, metadata=deployed)
    finding, = findings(text, file_systems={**IN_SYNC, JOHN: drifted}).findings
    assert (finding.code, finding.severity.value, finding.path) == (*expected, "storage.file_systems[0].metadata_iops")


@pytest.mark.parametrize(("lifecycle", "severity"), [("CREATING", "warning"), ("MISCONFIGURED", "error"),
                                                      ("FAILED", "error")])
def test_a_file_system_that_is_not_available(lifecycle, severity):
    broken = {**IN_SYNC[SMITH], "Lifecycle": lifecycle, "FailureDetails": {"Message": "subnet has no free addresses"}}
    finding, = findings(file_systems={**IN_SYNC, SMITH: broken}).findings
    assert (finding.code, finding.severity.value) == ("HPK913", severity)
    assert f"({SMITH}) is {lifecycle}: subnet has no free addresses" in finding.message


def test_a_file_system_deleted_outside_the_kit_and_one_not_deployed_yet():
    result = findings(file_systems={JOHN: IN_SYNC[JOHN]})  # SMITH's id answers FileSystemNotFound
    finding, = result.findings
    assert (finding.code, finding.severity.value, finding.path) == ("HPK913", "error", "storage.file_systems[1].name")
    assert f"({SMITH}) was deleted outside the kit" in finding.message
    result = findings(ids={"john/checkpoints": JOHN})
    finding, = result.findings
    assert (finding.code, finding.severity.value) == ("HPK913", "warning") and "is not deployed" in finding.message


def test_no_storage_stack_yet_reads_no_file_system_and_does_not_blame_the_add_on():
    result = findings(stack=False, addon=None)
    assert by_code(result) == [("HPK913", "warning", f"storage.file_systems[{i}].name") for i in (0, 1)]


def test_association_drift_path_policies_and_state():
    moved = association(JOHN, "/datasets", "s3://dev-datasets-111122223333/c5/", imports=("NEW",), exports=("NEW",),
                        lifecycle="MISCONFIGURED")
    result = findings(associations=[moved])
    base = "storage.file_systems[0].data_repository_associations[0]"
    assert by_code(result) == [("HPK913", "error", f"{base}.file_system_path"), ("HPK916", "warning", f"{base}.export_events"),
                               ("HPK916", "warning", f"{base}.import_events"), ("HPK916", "warning", f"{base}.s3_path")]
    assert by_code(findings(associations=[])) == [("HPK916", "warning", f"{base}.file_system_path")]


@pytest.mark.parametrize(("addon", "status", "pin", "expected"), [
    (None, "ACTIVE", None, [("HPK917", "error")]),
    ("v1.6.0-eksbuild.1", "DEGRADED", None, [("HPK917", "error")]),
    ("v1.6.0-eksbuild.1", "ACTIVE", "v1.5.0-eksbuild.1", [("HPK917", "warning")]),
    ("v1.6.0-eksbuild.1", "ACTIVE", "v1.6.0-eksbuild.1", []),
])
def test_csi_driver_add_on(addon, status, pin, expected):
    text = DEV_TEXT if pin is None else DEV_TEXT.replace("storage:\n", f"storage:\n  csi_driver_version: {pin}\n")
    result = findings(text, addon=addon, addon_status=status)
    assert [(f.code, f.severity.value) for f in result.findings] == expected
    assert all(f.path == "storage.csi_driver_version" for f in result.findings)


def test_read_errors_are_findings_not_tracebacks():
    loaded = load()

    class Session:
        def client(self, service, config=None):
            client = boto3.client(service, **KW)
            if service == "cloudformation":
                stubber = Stubber(client)
                stubber.add_client_error("describe_stacks", service_error_code="AccessDenied",
                                         expected_params={"StackName": "HyperPod-dev-storage"})
                stubber.activate()
            return client

    result = with_storage(LiveResult(), loaded.config, loaded.source, Session(), None, "eks-dev")
    finding, = result.findings
    assert finding.code == "HPK606" and "not allowed to call cloudformation:DescribeStacks" in finding.message
    assert result.section["storage"]["error"]


def test_the_docs_list_every_action_the_storage_checks_need():
    from cdk_app.cli.live_storage import ACTIONS

    page = (ROOT / "docs" / "how-to" / "storage.md").read_text()
    assert all(f"`{action}`" in page for action in ACTIONS)


def test_a_file_system_deployed_but_no_longer_in_the_config_is_named():
    text = DEV_TEXT[:DEV_TEXT.index("    - name: checkpoints\n      team: smith")]
    result = findings(text)
    finding, = result.findings
    assert (finding.code, finding.severity.value, finding.path) == ("HPK916", "warning", "storage.file_systems")
    assert f"'smith/checkpoints' ({SMITH}) is deployed but not in the config" in finding.message


def test_association_paths_compare_as_the_directories_and_prefixes_they_name():
    spelled = association(JOHN, "/datasets/", "s3://dev-datasets-111122223333/c4")
    assert by_code(findings(associations=[spelled])) == []


def test_without_the_eks_cluster_the_add_on_is_not_blamed():
    loaded = load()
    clients, _ = account()
    state = gather_storage(loaded.config, *clients, None)
    assert not state.addon_read and by_code(compare_storage(loaded.config, loaded.source, state)) == []


@pytest.mark.parametrize(("output", "message"), [("{", "FileSystemIds output is not JSON"),
                                                   ('["fs-1"]', "not a JSON object of file system ids"),
                                                   ('{"john/checkpoints": 5}', "not a JSON object of file system ids")])
def test_an_output_that_is_not_a_map_of_ids_is_named(output, message):
    loaded = load()
    cfn = boto3.client("cloudformation", **KW)
    c = Stubber(cfn)
    c.add_response("describe_stacks", {"Stacks": [{"StackName": "HyperPod-dev-storage", "CreationTime": NOW,
                                                   "StackStatus": "CREATE_COMPLETE",
                                                   "Outputs": [{"OutputKey": "FileSystemIds", "OutputValue": output}]}]},
                   {"StackName": "HyperPod-dev-storage"})
    c.activate()
    with pytest.raises(LiveAccessError, match=message):
        gather_storage(loaded.config, cfn, None, None, "eks-dev")
