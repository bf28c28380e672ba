"""The FSx for Lustre values of the config model and cdk_app/domain/lustre.py, held to botocore's FSx model (its
enums, ranges and the documentation strings of CreateFileSystem and CreateDataRepositoryAssociation) and to
cfn-lint's AWS::FSx::DataRepositoryAssociation schema."""

from __future__ import annotations

import re
import typing

import botocore.session
import pytest

from cdk_app.config import storage_model
from cdk_app.domain import lustre
from cdk_app.domain.resource_schemas import resource_schema

FSX = botocore.session.get_session().get_service_model("fsx")
LUSTRE = FSX.shape_for("CreateFileSystemLustreConfiguration").members
DRA = resource_schema("AWS::FSx::DataRepositoryAssociation")


def _text(documentation: str) -> str:
    return re.sub(r"\s+([,.])", r"\1", re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", documentation)))


CAPACITY_DOC = _text(FSX.shape_for("CreateFileSystemRequest").members["StorageCapacity"].documentation)
THROUGHPUT_DOC = _text(LUSTRE["PerUnitStorageThroughput"].documentation)
IOPS_DOC = _text(FSX.shape_for("CreateFileSystemLustreMetadataConfiguration").members["Iops"].documentation)
DRA_DOC = _text(FSX.operation_model("CreateDataRepositoryAssociation").documentation)


def _choices(annotation) -> set[str]:
    return set(typing.get_args(annotation))


def test_deployment_and_storage_types_are_the_apis():
    assert _choices(storage_model.DeploymentType) == set(LUSTRE["DeploymentType"].enum)
    # Intelligent-Tiering is left out (no provisioned capacity: a model of its own).
    assert _choices(storage_model.StorageType) == set(FSX.shape_for("StorageType").enum) - {"INTELLIGENT_TIERING"}
    assert _choices(storage_model.DriveCacheType) == set(LUSTRE["DriveCacheType"].enum)


def test_compression_and_event_types_are_the_apis():
    assert _choices(storage_model.Compression) == set(LUSTRE["DataCompressionType"].enum)
    events = set(FSX.shape_for("EventType").enum)
    assert _choices(storage_model.EventType) == events == set(DRA["definitions"]["EventType"]["enum"])
    assert DRA["definitions"]["EventTypes"]["maxItems"] == 3


def test_ranges_are_the_apis():
    assert storage_model.MAX_BACKUP_RETENTION_DAYS == LUSTRE["AutomaticBackupRetentionDays"].metadata["max"]
    iops = FSX.shape_for("MetadataIops").metadata
    assert (lustre.SMALL_METADATA_IOPS[0], storage_model.MAX_METADATA_IOPS) == (iops["min"], iops["max"])
    chunk = DRA["properties"]["ImportedFileChunkSize"]
    fields = storage_model.DataRepositoryAssociation.model_json_schema()["properties"]
    [declared] = [f for f in fields["imported_file_chunk_size_mib"]["anyOf"] if f.get("type") == "integer"]
    assert (declared["minimum"], declared["maximum"]) == (chunk["minimum"], chunk["maximum"])
    assert fields["s3_path"]["maxLength"] == DRA["properties"]["DataRepositoryPath"]["maxLength"]
    retention = storage_model.LustreFileSystem.model_json_schema()["properties"]["automatic_backup_retention_days"]
    [declared] = [f for f in retention["anyOf"] if f.get("type") == "integer"]
    assert (declared["minimum"], declared["maximum"]) == (0, LUSTRE["AutomaticBackupRetentionDays"].metadata["max"])


def spec(**fields):
    return storage_model.LustreFileSystem(name="fs", team="t", storage_capacity_gib=1200, **fields)


def test_ssd_capacities_are_the_documented_ones():
    found = re.search(r"For SCRATCH_2, PERSISTENT_2, and PERSISTENT_1 deployment types using SSD storage type, the "
                      r"valid values are (\d+) GiB, (\d+) GiB, and increments of (\d+) GiB", CAPACITY_DOC)
    assert found, CAPACITY_DOC
    small, increment = (int(found[1]), int(found[2])), int(found[3])
    for kind in ("SCRATCH_2", "PERSISTENT_2", "PERSISTENT_1"):
        assert lustre.capacity_steps(spec(deployment_type=kind)) == (small, increment)
    steps = (small, increment)
    for gib in (small[0], small[1], 2 * increment, 10 * increment):
        assert lustre.capacity_allowed(gib, steps)
    for gib in (small[0] - 1, small[0] + 1, increment + small[0], 0):
        assert not lustre.capacity_allowed(gib, steps)


def test_scratch_1_capacities_are_the_documented_ones():
    found = re.search(r"For SCRATCH_1 deployment type, valid values are (\d+) GiB, (\d+) GiB, and increments of "
                      r"(\d+) GiB", CAPACITY_DOC)
    assert found, CAPACITY_DOC
    steps = lustre.capacity_steps(spec(deployment_type="SCRATCH_1"))
    assert steps == ((int(found[1]), int(found[2])), int(found[3]))
    assert [g for g in (1200, 2400, 3600, 4800, 7200) if lustre.capacity_allowed(g, steps)] == [1200, 2400, 3600, 7200]


def test_hdd_capacities_follow_the_throughput_as_documented():
    found = re.findall(r"increments of (\d+) GiB for (\d+) MB/s/TiB file systems", CAPACITY_DOC)
    assert "For PERSISTENT_1 HDD file systems, valid values are increments of" in CAPACITY_DOC and len(found) == 2
    assert lustre.HDD_INCREMENT_GIB == {int(per_tib): int(gib) for gib, per_tib in found}
    for per_tib, step in lustre.HDD_INCREMENT_GIB.items():
        hdd = spec(deployment_type="PERSISTENT_1", storage_type="HDD", drive_cache_type="NONE",
                   per_unit_storage_throughput=per_tib)
        assert lustre.capacity_steps(hdd) == ((), step)
        assert not lustre.capacity_allowed(1200, ((), step)) and lustre.capacity_allowed(3 * step, ((), step))
    # Without a valid throughput the increment is unknown (the throughput's own finding says why).
    assert lustre.capacity_steps(spec(deployment_type="PERSISTENT_1", storage_type="HDD", drive_cache_type="READ",
                                      per_unit_storage_throughput=50)) is None


@pytest.mark.parametrize(("kind", "storage"), [("PERSISTENT_1", "SSD"), ("PERSISTENT_1", "HDD"), ("PERSISTENT_2", "SSD")])
def test_throughputs_are_the_documented_ones(kind, storage):
    found = re.search(rf"For {kind} {storage} storage: ([0-9, ]+) MB/s/TiB", THROUGHPUT_DOC)
    assert found, THROUGHPUT_DOC
    assert lustre.THROUGHPUTS[(kind, storage)] == tuple(int(v) for v in found[1].split(","))


def test_scratch_types_provision_no_throughput():
    assert "Required with PERSISTENT_1 and PERSISTENT_2 deployment types using an SSD or HDD" in THROUGHPUT_DOC
    assert {kind for kind, _ in lustre.THROUGHPUTS} == {"PERSISTENT_1", "PERSISTENT_2"}
    assert set(re.findall(r"For (\w+) (\w+) storage:", THROUGHPUT_DOC)) == set(lustre.THROUGHPUTS)


def test_hdd_drive_cache_and_kms_rules_are_the_documented_ones():
    storage_doc = _text(FSX.shape_for("CreateFileSystemRequest").members["StorageType"].documentation)
    assert f"HDD to use hard disk drive storage, which is supported on SINGLE_AZ_2 and MULTI_AZ_1 Windows file system " \
           f"deployment types, and on {lustre.HDD_TYPE} Lustre" in storage_doc
    assert "This parameter is required when StorageType is set to HDD" in _text(LUSTRE["DriveCacheType"].documentation)
    kms_doc = _text(FSX.shape_for("CreateFileSystemRequest").members["KmsKeyId"].documentation)
    assert "Amazon FSx for Lustre PERSISTENT_1 and PERSISTENT_2 deployment types only" in kms_doc
    assert lustre.is_scratch("SCRATCH_1") and lustre.is_scratch("SCRATCH_2")


KMS_SAMPLES = ("arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
               "arn:aws-us-gov:kms:us-gov-west-1:111122223333:alias/fsx", "arn:aws:kms:us-east-1:1111:key/x",
               "1234abcd-12ab-34cd-56ef-1234567890ab", "mrk-1234abcd12ab34cd56ef1234567890ab", "mrk-12",
               "alias/fsx-data", "alias/a:b", "alias/", "key/1234", "aws/fsx", "1234ABCD-12AB-34CD-56EF-1234567890AB",
               "arn:aws:s3:::bucket")


@pytest.mark.parametrize("sample", KMS_SAMPLES)
def test_kms_key_formats_are_cfn_lints(sample):
    """What the model takes is what cfn-lint's formats of AWS::FSx::FileSystem KmsKeyId take: a key ARN, a key id
    or an alias name."""
    from cfnlint.rules.formats.KmsAliasName import KmsAliasName
    from cfnlint.rules.formats.KmsKeyArn import KmsKeyArn
    from cfnlint.rules.formats.KmsKeyId import KmsKeyId

    formats = resource_schema("AWS::FSx::FileSystem")["properties"]["KmsKeyId"]["anyOf"]
    assert {f["format"] for f in formats} == {"AWS::KMS::Key.Arn", "AWS::KMS::Key.Id", "AWS::KMS::Alias.AliasName"}
    cfn_lint = any(re.search(rule().pattern, sample) for rule in (KmsAliasName, KmsKeyArn, KmsKeyId))
    assert bool(re.search(storage_model.KMS_KEY_PATTERN, sample)) == cfn_lint


def test_metadata_iops_are_the_documented_ones():
    found = re.search(r"For SSD file systems, valid values are ([0-9, ]+), and multiples of (\d+) up to a maximum of "
                      r"(\d+)", IOPS_DOC)
    assert found, IOPS_DOC
    listed = tuple(int(v) for v in found[1].split(","))
    step, top = int(found[2]), int(found[3])
    assert lustre.METADATA_IOPS_STEP == step and storage_model.MAX_METADATA_IOPS == top
    assert all(lustre.metadata_iops_allowed(v) for v in (*listed, 2 * step, top))
    assert not any(lustre.metadata_iops_allowed(v) for v in (listed[0] - 1, step + listed[0], top + step))
    assert "PERSISTENT_2" in _text(FSX.shape_for("CreateFileSystemLustreMetadataConfiguration").documentation)


def test_association_limits_are_the_documented_ones():
    assert storage_model.MAX_ASSOCIATIONS == int(re.search(r"a maximum of (\d+) data repository associations",
                                                           DRA_DOC)[1])
    # The one deployment type without associations (HPK920).
    assert f"excluding {lustre.NO_ASSOCIATIONS_TYPE.lower()} deployment type" in DRA_DOC


def test_nested_paths_overlap_as_fsx_documents():
    path_doc = _text(FSX.shape_for("CreateDataRepositoryAssociationRequest").members["FileSystemPath"].documentation)
    assert "/ns1/, then you cannot link another data repository with file system path /ns1/ns2" in path_doc
    assert lustre.overlapping_paths("/ns1/", "/ns1/ns2") and lustre.overlapping_paths("/ns1/ns2", "/ns1")
    assert lustre.overlapping_paths("/ns1", "/ns1/")
    assert not lustre.overlapping_paths("/ns1", "/ns10") and not lustre.overlapping_paths("/a/b", "/a/c")


def test_path_patterns_are_the_apis():
    assert storage_model.FILE_SYSTEM_PATH_PATTERN[2:] == FSX.shape_for("Namespace").metadata["pattern"][1:].replace(
        "{1,4096}", "{0,4095}")
    assert DRA["properties"]["FileSystemPath"]["maxLength"] == FSX.shape_for("Namespace").metadata["max"] == 4096
