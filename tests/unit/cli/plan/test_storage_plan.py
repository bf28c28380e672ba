"""`hyperpod-kit plan` on edits of config/dev.yaml's storage section (john's PERSISTENT_2 and smith's SCRATCH_2
`checkpoints`), synthesized in-process: a file system is stateful, its replacement (cfn-lint's create-only
properties of AWS::FSx::FileSystem) is refused, its capacity only grows (botocore FSx UpdateFileSystem: "The value
must be greater than the current storage capacity") and what UpdateFileSystem cannot change fails."""

from __future__ import annotations

import re
from pathlib import Path

import botocore.session
import pytest
from support.paths import ROOT
from support.synthesis import env_assembly

from cdk_app.cli import plan as planning
from cdk_app.config.loader import load_config
from cdk_app.domain.lustre import UPDATABLE_LUSTRE_SETTINGS

BASE = (ROOT / "config" / "dev.yaml").read_text()
JOHN = "      storage_capacity_gib: 1200\n      per_unit_storage_throughput: 250\n"
SMITH = "      deployment_type: SCRATCH_2\n      storage_capacity_gib: 1200\n      availability_zone_id: use1-az4\n"
EDITS = {
    "grow": BASE.replace(JOHN, JOHN.replace("1200", "2400")),
    "zone": BASE.replace(SMITH, SMITH.replace("use1-az4", "use1-az6")),
    "type": BASE.replace(SMITH, SMITH.replace("SCRATCH_2", "PERSISTENT_2") + "      per_unit_storage_throughput: 125\n"),
    "p1": BASE.replace(SMITH, SMITH.replace("SCRATCH_2", "PERSISTENT_1").replace("1200", "1800")
                       + "      per_unit_storage_throughput: 50\n").replace("1800", "2400"),
    "hdd": BASE.replace(SMITH, SMITH.replace("SCRATCH_2", "PERSISTENT_1").replace("1200", "3600")
                        + "      per_unit_storage_throughput: 40\n      storage_type: HDD\n      drive_cache_type: READ\n"),
    "kms": BASE.replace(JOHN, JOHN + "      kms_key_id: alias/fsx-data\n"),
    "s1": BASE.replace(SMITH, SMITH.replace("SCRATCH_2", "SCRATCH_1")),
    "s1grow": BASE.replace(SMITH, SMITH.replace("SCRATCH_2", "SCRATCH_1").replace("1200", "2400")),
}
FSX = botocore.session.get_session().get_service_model("fsx")


def test_the_updatable_settings_are_the_apis():
    assert UPDATABLE_LUSTRE_SETTINGS == set(FSX.shape_for("UpdateFileSystemLustreConfiguration").members)
    capacity = re.sub(r"\s+", " ", FSX.shape_for("UpdateFileSystemRequest").members["StorageCapacity"].documentation)
    assert "The value must be greater than the current storage capacity" in capacity


@pytest.fixture(scope="module")
def synths(tmp_path_factory) -> dict[str, Path]:
    out = {"base": env_assembly(tmp_path_factory, "dev")}
    for name, text in EDITS.items():
        assert text != BASE, name
        folder = tmp_path_factory.mktemp(f"plan-storage-{name}")
        (folder / "dev.yaml").write_text(text)
        out[name] = planning.synthesize(load_config(folder / "dev.yaml").config, folder / "cdk.out")
    return out


def _plan(synths, before: str, after: str) -> planning.Plan:
    return planning.compare(planning.read_templates(synths[before]), planning.read_templates(synths[after]), before)


def _file_system(synths, team: str) -> str:
    template = planning.read_templates(synths["base"])["HyperPod-dev-storage"]
    [logical_id] = [k for k, r in template["Resources"].items()
                    if r["Type"] == "AWS::FSx::FileSystem" and k.startswith(f"Lustre{team}")]
    return logical_id


@pytest.mark.synth
def test_growing_a_file_system_is_called_out_and_shrinking_it_fails(synths):
    john = _file_system(synths, "john")
    grow = _plan(synths, "base", "grow")
    # The file system, and its volume's capacity in the storage set (the claim's request stays: see
    # tests/realk8s/test_team_volumes.py for the API server's verdict on both).
    assert sorted((c.type, c.action) for c in grow.changes) == [("AWS::FSx::FileSystem", "modify"),
                                                                ("Custom::KubernetesManifests", "modify")]
    [note] = grow.hazards
    assert (note.name, note.refuse, note.fails) == (john, False, False) and "1200 -> 2400 GiB" in note.text
    assert "never shrink back" in note.text and grow.refused() == []
    shrink = _plan(synths, "grow", "base")
    [failing] = shrink.hazards
    assert failing.fails and "2400 -> 1200 GiB" in failing.text and "only grows" in failing.text


@pytest.mark.synth
def test_moving_a_file_system_to_another_zone_replaces_it_and_is_refused(synths):
    smith = _file_system(synths, "smith")
    plan = _plan(synths, "base", "zone")
    [change] = [c for c in plan.changes if c.logical_id == smith]
    assert (change.action, change.stateful, change.reasons) == ("replace", True, ("create-only SubnetIds changes",))
    assert change.retained == "UpdateReplacePolicy Retain"
    assert smith in {c.logical_id for c in plan.refused()}


@pytest.mark.synth
def test_changing_the_deployment_type_fails(synths):
    smith = _file_system(synths, "smith")
    plan = _plan(synths, "base", "type")
    failing = [h for h in plan.hazards if h.fails]
    assert [(h.name, "DeploymentType SCRATCH_2 -> PERSISTENT_2" in h.text) for h in failing] == [(smith, True)]
    assert "will fail" in planning.render(plan)


@pytest.mark.synth
def test_moving_a_file_system_to_hdd_fails(synths):
    smith = _file_system(synths, "smith")
    plan = _plan(synths, "p1", "hdd")
    failing = sorted(h.text.split(": ", 2)[1].split(" ")[0] for h in plan.hazards if h.fails and h.name == smith)
    assert failing == ["DriveCacheType", "StorageType"]


@pytest.mark.synth
def test_a_customer_managed_key_replaces_the_file_system_and_is_refused(synths):
    john = _file_system(synths, "john")
    plan = _plan(synths, "base", "kms")
    [change] = [c for c in plan.changes if c.logical_id == john]
    assert (change.action, change.reasons) == ("replace", ("create-only KmsKeyId changes",))
    assert john in {c.logical_id for c in plan.refused()}


@pytest.mark.synth
def test_a_scratch_1_file_system_cannot_grow(synths):
    capacity = re.sub(r"<[^>]+>", "", FSX.shape_for("UpdateFileSystemRequest").members["StorageCapacity"].documentation)
    assert "For SCRATCH_1 file systems, you can't increase the storage capacity" in capacity
    smith = _file_system(synths, "smith")
    failing = [h for h in _plan(synths, "s1", "s1grow").hazards if h.fails]
    assert [(h.name, "SCRATCH_1 file system's capacity cannot grow" in h.text) for h in failing] == [(smith, True)]
