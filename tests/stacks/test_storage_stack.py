"""The storage stack (an environment with a storage section) synthesized by the real CDK CLI, with cdk-nag on: in
us-east-1 (config/dev.yaml, whose snapshot tests/stacks/test_synth.py holds) and in us-west-2 (config/prod.yaml
with a storage section of every deployment type, HDD with its read cache, a customer-managed KMS key, associations
and user-provisioned metadata IOPS; dev.yaml with the same options in us-east-1), each clean
under cfn-lint with that region's data; adding storage leaves the network and cluster stacks as they were."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT
from support.synthesis import config_assembly, env_assembly

from cdk_app.domain.lustre import FILE_SYSTEM_IDS_OUTPUT
from cdk_app.domain.resource_schemas import create_only_properties

PROD_STORAGE = """
storage:
  file_systems:
    - name: checkpoints
      team: research-nlp
      storage_capacity_gib: 4800
      per_unit_storage_throughput: 500
      metadata_iops: 12000
      availability_zone_id: usw2-az2
      automatic_backup_retention_days: 30
      data_repository_associations:
        - {file_system_path: /datasets, s3_path: s3://prod-datasets-444455556666/, import_events: [NEW, CHANGED]}
        - {file_system_path: /exports, s3_path: s3://prod-exports-444455556666/nlp/, export_events: [NEW, CHANGED, DELETED]}
    - name: scratch
      team: research-nlp
      deployment_type: SCRATCH_2
      storage_capacity_gib: 2400
      compression: NONE
      availability_zone_id: usw2-az2
    - name: checkpoints
      team: research-vision
      deployment_type: PERSISTENT_1
      storage_capacity_gib: 1200
      per_unit_storage_throughput: 200
      availability_zone_id: usw2-az2
    - name: archive
      team: research-vision
      deployment_type: PERSISTENT_1
      storage_type: HDD
      drive_cache_type: READ
      storage_capacity_gib: 5400
      per_unit_storage_throughput: 40
      kms_key_id: arn:aws:kms:us-west-2:444455556666:key/1234abcd-12ab-34cd-56ef-1234567890ab
      availability_zone_id: usw2-az2
    - name: legacy-scratch
      team: research-vision
      deployment_type: SCRATCH_1
      storage_capacity_gib: 3600
      availability_zone_id: usw2-az2
"""
# The same options in us-east-1, after dev's file systems (its storage section ends the file).
DEV_OPTIONS = """    - name: archive
      team: john
      deployment_type: PERSISTENT_1
      storage_type: HDD
      drive_cache_type: NONE
      storage_capacity_gib: 6000
      per_unit_storage_throughput: 12
      kms_key_id: alias/fsx-data
      availability_zone_id: use1-az4
    - name: legacy-scratch
      team: smith
      deployment_type: SCRATCH_1
      storage_capacity_gib: 1200
      availability_zone_id: use1-az4
    - name: encrypted
      team: smith
      storage_capacity_gib: 2400
      per_unit_storage_throughput: 125
      kms_key_id: mrk-1234abcd12ab34cd56ef1234567890ab
      availability_zone_id: use1-az4
"""


@pytest.fixture(scope="module")
def prod_with_storage(tmp_path_factory) -> Path:
    return config_assembly(tmp_path_factory, (ROOT / "config" / "prod.yaml").read_text() + PROD_STORAGE)


def _lint(region: str, *templates: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "cfn-lint"), "--regions", region, "--ignore-checks", "W3005",
                           "--", *map(str, templates)], capture_output=True, text=True)


def test_prod_with_storage_is_lint_clean_in_us_west_2(prod_with_storage):
    result = _lint("us-west-2", *sorted(prod_with_storage.glob("*.template.json")))
    assert result.returncode == 0, result.stdout + result.stderr


def test_dev_storage_with_every_option_is_lint_clean_in_us_east_1(tmp_path_factory):
    text = (ROOT / "config" / "dev.yaml").read_text()
    assert text.rstrip().endswith("mount_path: /checkpoints"), "dev.yaml's storage section no longer ends the file"
    assembly = config_assembly(tmp_path_factory, text + DEV_OPTIONS)
    template = assembly / "HyperPod-dev-storage.template.json"
    result = _lint("us-east-1", template)
    assert result.returncode == 0, result.stdout + result.stderr
    kinds = sorted((p["LustreConfiguration"]["DeploymentType"], p.get("StorageType"), p.get("KmsKeyId", ""))
                   for r in json.loads(template.read_text())["Resources"].values()
                   if r["Type"] == "AWS::FSx::FileSystem" for p in (r["Properties"],))
    assert kinds == [("PERSISTENT_1", "HDD", "alias/fsx-data"), ("PERSISTENT_2", "SSD", ""),
                     ("PERSISTENT_2", "SSD", "mrk-1234abcd12ab34cd56ef1234567890ab"), ("SCRATCH_1", "SSD", ""),
                     ("SCRATCH_2", "SSD", "")]


def test_adding_storage_changes_neither_the_network_nor_the_cluster_stack(prod_with_storage, tmp_path_factory):
    plain = env_assembly(tmp_path_factory, "prod")
    for stack in ("network", "cluster"):
        name = f"HyperPod-prod-{stack}.template.json"
        assert json.loads((prod_with_storage / name).read_text()) == json.loads((plain / name).read_text()), stack


def test_the_storage_stack_holds_every_file_system_its_associations_the_driver_and_the_volumes(prod_with_storage):
    template = json.loads((prod_with_storage / "HyperPod-prod-storage.template.json").read_text())
    types = [r["Type"] for r in template["Resources"].values()]
    assert FILE_SYSTEM_IDS_OUTPUT in template["Outputs"]  # what validate --live finds the file systems by
    assert types.count("AWS::FSx::FileSystem") == 5 and types.count("AWS::FSx::DataRepositoryAssociation") == 2
    [addon] = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::EKS::Addon"]
    assert addon["AddonName"] == "aws-fsx-csi-driver" and "ServiceAccountRoleArn" not in addon
    [volumes] = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "Custom::KubernetesManifests"]
    assert volumes["Name"] == "storage" and "Fn::Join" in volumes["Manifests"]  # the file systems' names, at deploy
    # The manifests string, its deploy-time parts left out, holds one volume per file system.
    text = "".join(part for part in volumes["Manifests"]["Fn::Join"][1] if isinstance(part, str))
    assert text.count('"kind":"PersistentVolume"') == 5
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::FSx::FileSystem":
            assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("RetainExceptOnCreate", "Retain")
    # What a change of a file system replaces, per cfn-lint's schema (plan reads the same).
    assert ("SubnetIds",) in create_only_properties("AWS::FSx::FileSystem")
