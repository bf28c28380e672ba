"""The LustreFileSystem construct: what CloudFormation gets, held to cfn-lint's AWS::FSx::* schemas (property
names and create-only properties) and to what the construct promises (retained, the nodes' security group)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Template

from cdk_app.domain.resource_schemas import create_only_properties, resource_schema
from hyperpod_constructs.lustre_file_system import DataRepositoryLink, LustreFileSystem, LustreFileSystemProps

PROPS = LustreFileSystemProps(name="fs", subnet_id="subnet-0123456789abcdef0", security_group_id="sg-0123456789abcdef0",
                              storage_capacity_gib=2400, per_unit_storage_throughput=250)


def template_for(props: LustreFileSystemProps) -> dict:
    stack = Stack(App(), "Test")
    LustreFileSystem(stack, "Fs", props=props)
    return Template.from_stack(stack).to_json()


def _of_type(template: dict, type_name: str) -> list[dict]:
    return [r for r in template["Resources"].values() if r["Type"] == type_name]


def test_persistent_2_file_system_is_retained_in_the_nodes_group_with_automatic_metadata():
    [fs] = _of_type(template_for(PROPS), "AWS::FSx::FileSystem")
    assert (fs["DeletionPolicy"], fs["UpdateReplacePolicy"]) == ("RetainExceptOnCreate", "Retain")
    props = fs["Properties"]
    assert props["SecurityGroupIds"] == ["sg-0123456789abcdef0"] and props["SubnetIds"] == ["subnet-0123456789abcdef0"]
    assert (props["FileSystemType"], props["FileSystemTypeVersion"], props["StorageType"]) == ("LUSTRE", "2.15", "SSD")
    assert props["LustreConfiguration"] == {"DeploymentType": "PERSISTENT_2", "DataCompressionType": "LZ4",
                                            "PerUnitStorageThroughput": 250,
                                            "MetadataConfiguration": {"Mode": "AUTOMATIC"}}
    schema = resource_schema("AWS::FSx::FileSystem")
    assert set(props) <= set(schema["properties"])
    assert set(props["LustreConfiguration"]) <= set(schema["definitions"]["LustreConfiguration"]["properties"])


def test_user_provisioned_metadata_and_backups():
    [fs] = _of_type(template_for(replace(PROPS, metadata_iops=12000, automatic_backup_retention_days=7,
                                         daily_automatic_backup_start_time="03:00")), "AWS::FSx::FileSystem")
    lustre = fs["Properties"]["LustreConfiguration"]
    assert lustre["MetadataConfiguration"] == {"Mode": "USER_PROVISIONED", "Iops": 12000}
    assert (lustre["AutomaticBackupRetentionDays"], lustre["DailyAutomaticBackupStartTime"]) == (7, "03:00")


def test_scratch_has_no_throughput_metadata_or_backups():
    [fs] = _of_type(template_for(replace(PROPS, deployment_type="SCRATCH_2", per_unit_storage_throughput=None)),
                    "AWS::FSx::FileSystem")
    assert fs["Properties"]["LustreConfiguration"] == {"DeploymentType": "SCRATCH_2", "DataCompressionType": "LZ4"}


def test_associations_link_paths_to_s3_with_their_events():
    links = (DataRepositoryLink("/datasets", "s3://bucket/datasets/", import_events=("NEW", "CHANGED")),
             DataRepositoryLink("/out", "s3://bucket/out/", export_events=("NEW",), imported_file_chunk_size_mib=2048,
                                batch_import_metadata_on_create=True))
    template = template_for(replace(PROPS, data_repository_associations=links))
    associations = sorted((r["Properties"] for r in _of_type(template, "AWS::FSx::DataRepositoryAssociation")),
                          key=lambda p: p["FileSystemPath"])
    assert associations[0]["S3"] == {"AutoImportPolicy": {"Events": ["NEW", "CHANGED"]}}
    assert associations[1]["S3"] == {"AutoExportPolicy": {"Events": ["NEW"]}}
    assert (associations[1]["ImportedFileChunkSize"], associations[1]["BatchImportMetaDataOnCreate"]) == (2048, True)
    [fs_id] = [k for k, r in template["Resources"].items() if r["Type"] == "AWS::FSx::FileSystem"]
    assert all(a["FileSystemId"] == {"Ref": fs_id} for a in associations)
    schema = resource_schema("AWS::FSx::DataRepositoryAssociation")
    assert all(set(a) <= set(schema["properties"]) for a in associations)
    # What a change replaces: the schema's create-only properties, which `plan` reads too.
    assert ("FileSystemPath",) in create_only_properties("AWS::FSx::DataRepositoryAssociation")


def test_association_ids_follow_their_paths_not_their_order():
    links = (DataRepositoryLink("/a", "s3://bucket/a/"), DataRepositoryLink("/b", "s3://bucket/b/"))
    ids = set(template_for(replace(PROPS, data_repository_associations=links))["Resources"])
    swapped = set(template_for(replace(PROPS, data_repository_associations=links[::-1]))["Resources"])
    assert ids == swapped


@pytest.mark.parametrize("change, message", [
    ({"deployment_type": "SCRATCH_3"}, "deployment_type"),
    ({"per_unit_storage_throughput": None}, "per_unit_storage_throughput"),
    ({"deployment_type": "SCRATCH_2"}, "per_unit_storage_throughput"),
    ({"deployment_type": "PERSISTENT_1", "per_unit_storage_throughput": 50, "metadata_iops": 1500}, "metadata_iops"),
    ({"data_repository_associations": tuple(DataRepositoryLink(f"/d{i}", f"s3://b/d{i}") for i in range(9))}, "at most 8"),
    ({"data_repository_associations": (DataRepositoryLink("/d", "s3://b/1"), DataRepositoryLink("/d", "s3://b/2"))},
     "distinct"),
    ({"storage_type": "HDD", "drive_cache_type": "READ"}, "HDD on PERSISTENT_1"),
    ({"deployment_type": "PERSISTENT_1", "per_unit_storage_throughput": 40, "storage_type": "HDD"}, "drive_cache_type"),
    ({"drive_cache_type": "NONE"}, "drive_cache_type"),
    ({"deployment_type": "SCRATCH_2", "per_unit_storage_throughput": None, "kms_key_id": "alias/x"}, "persistent"),
    ({"deployment_type": "SCRATCH_1", "per_unit_storage_throughput": None,
      "data_repository_associations": (DataRepositoryLink("/d", "s3://bucket/d/"),)}, "SCRATCH_1"),
])
def test_props_the_construct_refuses(change, message):
    with pytest.raises(ValueError, match=message):
        template_for(replace(PROPS, **change))


def test_hdd_with_its_read_cache_and_a_customer_managed_key():
    key = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    [fs] = _of_type(template_for(replace(PROPS, deployment_type="PERSISTENT_1", storage_type="HDD", drive_cache_type="READ",
                                         storage_capacity_gib=3600, per_unit_storage_throughput=40, kms_key_id=key)),
                    "AWS::FSx::FileSystem")
    props = fs["Properties"]
    assert (props["StorageType"], props["KmsKeyId"]) == ("HDD", key)
    assert props["LustreConfiguration"] == {"DeploymentType": "PERSISTENT_1", "DataCompressionType": "LZ4",
                                            "DriveCacheType": "READ", "PerUnitStorageThroughput": 40}
    # A new key is a new file system: KmsKeyId is create-only (plan refuses it).
    assert ("KmsKeyId",) in create_only_properties("AWS::FSx::FileSystem")

