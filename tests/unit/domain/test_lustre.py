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


def test_deployment_types_are_the_apis_but_scratch_1():
    assert _choices(storage_model.DeploymentType) == set(LUSTRE["DeploymentType"].enum) - {"SCRATCH_1"}


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


def test_ssd_capacities_are_the_documented_ones():
    found = re.search(r"For SCRATCH_2, PERSISTENT_2, and PERSISTENT_1 deployment types using SSD storage type, the "
                      r"valid values are (\d+) GiB, (\d+) GiB, and increments of (\d+) GiB", CAPACITY_DOC)
    assert found, CAPACITY_DOC
    small, increment = (int(found[1]), int(found[2])), int(found[3])
    assert (lustre.SMALL_CAPACITIES_GIB, lustre.CAPACITY_INCREMENT_GIB) == (small, increment)
    for gib in (small[0], small[1], 2 * increment, 10 * increment):
        assert lustre.capacity_allowed(gib)
    for gib in (small[0] - 1, small[0] + 1, increment + small[0], 0):
        assert not lustre.capacity_allowed(gib)


@pytest.mark.parametrize("kind", ["PERSISTENT_1", "PERSISTENT_2"])
def test_throughputs_are_the_documented_ones(kind):
    found = re.search(rf"For {kind} SSD storage: ([0-9, ]+) MB/s/TiB", THROUGHPUT_DOC)
    assert found, THROUGHPUT_DOC
    assert lustre.THROUGHPUTS[kind] == tuple(int(v) for v in found[1].split(","))


def test_scratch_types_provision_no_throughput():
    assert "Required with PERSISTENT_1 and PERSISTENT_2" in THROUGHPUT_DOC
    assert set(lustre.THROUGHPUTS) == {"PERSISTENT_1", "PERSISTENT_2"}


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
    # The one deployment type without associations is the one the kit leaves out.
    assert "excluding scratch_1 deployment type" in DRA_DOC


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
