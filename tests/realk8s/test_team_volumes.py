"""The teams' FSx for Lustre volumes on the real API server, config/dev.yaml applied (john's and smith's
`checkpoints` file systems): the kit's PersistentVolumes and claims pass the server's validation as the installer
applies them; the persistent-volume binder binds each team's claim to its own volume and never another
namespace's claim to it; a team member can use the claim in a job but cannot make, change or delete a claim or a
volume, nor reach a file system around the claims (an inline CSI volume, an ephemeral claim naming a volume) - the
server's RBAC and the kit's guardrails refuse it, in a dry run as the member."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from support.cli_runner import run
from support.paths import ROOT
from support.realk8s.api import Cluster, wait_until
from support.realk8s.controlplane import CONTROLLERS
from support.realk8s.environment import STAND_IN_DNS_NAME, STAND_IN_FILE_SYSTEM_ID, STAND_IN_MOUNT_NAME

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.team_rbac import team_group
from cdk_app.kubernetes.team_volumes import lustre_volume, volume_claim, volume_name

ALICE = "arn:aws:sts::111122223333:assumed-role/hyperpod-team-john/alice"
JOHN = (team_group("john"),)
DEV = load_config(ROOT / "config" / "dev.yaml").config
BINDER = "persistentvolume-binder-controller"


@pytest.fixture(scope="module")
def dev(start_cluster) -> Cluster:
    # The binder too: it is what decides which claim a volume goes to.
    return start_cluster("dev", controllers=[*CONTROLLERS, BINDER])


def _phase(cluster: Cluster, obj: dict[str, Any]) -> str | None:
    answer = cluster.get(obj)
    return answer.body.get("status", {}).get("phase") if answer.allowed else None


def test_each_teams_claim_binds_its_own_volume(dev):
    for team in ("john", "smith"):
        claim = volume_claim(team, "checkpoints")
        wait_until(lambda claim=claim: _phase(dev, claim) == "Bound", f"{team}'s claim bound", timeout=60)
        bound = dev.get(claim).body
        assert bound["spec"]["volumeName"] == volume_name(team, "checkpoints")
        [spec] = [fs for fs in DEV.storage.file_systems if fs.team == team]
        volume = dev.get(lustre_volume(spec, STAND_IN_FILE_SYSTEM_ID, STAND_IN_DNS_NAME, STAND_IN_MOUNT_NAME)).body
        assert volume["spec"]["claimRef"]["namespace"] == f"hyperpod-ns-{team}"
        assert volume["spec"]["claimRef"]["uid"] == bound["metadata"]["uid"]
        assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"


def test_a_claim_elsewhere_naming_a_teams_volume_never_binds_it(dev):
    """Even an administrator's claim in another namespace: the volume is pre-bound to the team's claim."""
    foreign = volume_claim("smith", "stolen")
    foreign["spec"]["volumeName"] = volume_name("john", "checkpoints")
    assert dev.create(foreign, dry_run=False).allowed
    wait_until(lambda: dev.get(foreign).body.get("status", {}).get("phase") == "Pending", "the claim's phase")
    # The binder had its chance: john's claim stays bound to john's volume, the foreign claim gets nothing.
    wait_until(lambda: _phase(dev, volume_claim("john", "checkpoints")) == "Bound", "john's claim bound", timeout=60)
    assert _phase(dev, foreign) == "Pending"
    assert dev.get(volume_claim("john", "checkpoints")).body["spec"]["volumeName"] == volume_name("john", "checkpoints")
    assert dev.delete(foreign, dry_run=False).allowed


@pytest.mark.parametrize("steal", [
    {"volumeName": "hyperpod-kit-hyperpod-ns-smith-checkpoints"},  # another team's volume
    {"storageClassName": "", "volumeName": "hyperpod-kit-hyperpod-ns-john-checkpoints"},  # its own, a second claim
    {"storageClassName": "fsx-sc"},  # a class that would provision a file system
])
def test_the_member_cannot_create_a_claim(dev, steal):
    claim = volume_claim("john", "mine")
    claim["spec"] = {**{k: v for k, v in claim["spec"].items() if k not in steal}, **steal}
    answer = dev.create(claim, user=ALICE, groups=JOHN)
    assert answer.status == 403 and 'cannot create resource "persistentvolumeclaims"' in answer.message, answer.message


def test_the_member_cannot_change_or_delete_its_claim_nor_touch_a_volume(dev):
    claim = dev.get(volume_claim("john", "checkpoints")).body
    changed = copy.deepcopy(claim)
    changed["metadata"]["labels"]["hyperpod-kit/team"] = "smith"
    assert dev.update(changed, user=ALICE, groups=JOHN).status == 403
    assert dev.delete(claim, user=ALICE, groups=JOHN).status == 403
    [spec] = [fs for fs in DEV.storage.file_systems if fs.team == "smith"]
    smiths = lustre_volume(spec, STAND_IN_FILE_SYSTEM_ID, STAND_IN_DNS_NAME, STAND_IN_MOUNT_NAME)
    mine = copy.deepcopy(smiths)
    mine["metadata"]["name"] = "johns-copy"
    mine["spec"]["claimRef"] = {"namespace": "hyperpod-ns-john", "name": "checkpoints"}
    assert dev.create(mine, user=ALICE, groups=JOHN).status == 403
    assert dev.get(smiths).allowed  # it exists; the member may not even read it
    assert not dev.can(ALICE, JOHN, "get", "persistentvolumes", name=smiths["metadata"]["name"])
    assert not dev.can(ALICE, JOHN, "list", "persistentvolumeclaims", namespace="hyperpod-ns-smith")


def _job(*args: str) -> dict[str, Any]:
    done = run("job", "--config", "config/dev.yaml", "--team", "john", "--name", "fsdp", "--image", "repo/train:1",
               *args, "--", "python", "train.py")
    assert done.returncode == 0, done.stderr
    return list(yaml.safe_load_all(done.stdout))[-1]


def _pod_spec(job: dict[str, Any]) -> dict[str, Any]:
    return job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]


def test_the_member_runs_a_job_on_its_own_claim(dev):
    job = _job()
    assert _pod_spec(job)["volumes"] == [{"name": "pvc-0", "persistentVolumeClaim": {"claimName": "checkpoints"}}]
    answer = dev.create(job, user=ALICE, groups=JOHN)
    assert answer.allowed, answer.message


@pytest.mark.parametrize("volume", [
    # The driver's inline (ephemeral) mode, pointed at smith's file system.
    {"name": "x", "csi": {"driver": "fsx.csi.aws.com",
                          "volumeAttributes": {"dnsname": STAND_IN_DNS_NAME, "mountname": STAND_IN_MOUNT_NAME}}},
    # A generic ephemeral claim the controller would create for the pod, naming smith's volume.
    {"name": "x", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": volume_name("smith", "checkpoints"),
        "resources": {"requests": {"storage": "1200Gi"}}}}}},
])
def test_the_guardrails_refuse_a_file_system_reached_around_the_claims(dev, volume):
    job = _job()
    _pod_spec(job)["volumes"].append(volume)
    answer = dev.create(job, user=ALICE, groups=JOHN)
    assert answer.status == 403 and "hyperpod-kit guardrail volumes:" in answer.message, answer.message


def test_a_grown_file_system_updates_its_volume_and_leaves_the_claim(dev):
    """Growing a file system changes its volume's capacity (the storage set re-applies it); the claim's request is
    fixed because the API server refuses to resize a statically provisioned claim."""
    [spec] = [fs for fs in DEV.storage.file_systems if fs.team == "john"]
    grown = lustre_volume(spec.model_copy(update={"storage_capacity_gib": 2400}), STAND_IN_FILE_SYSTEM_ID,
                          STAND_IN_DNS_NAME, STAND_IN_MOUNT_NAME)
    current = dev.get(grown).body
    grown["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    answer = dev.update(grown)
    assert answer.allowed and answer.body["spec"]["capacity"] == {"storage": "2400Gi"}, answer.message
    wait_until(lambda: _phase(dev, volume_claim("john", "checkpoints")) == "Bound", "john's claim bound", timeout=60)
    claim = dev.get(volume_claim("john", "checkpoints")).body
    claim["spec"]["resources"]["requests"]["storage"] = "2400Gi"
    refused = dev.update(claim)
    assert refused.status == 403 and "only dynamically provisioned pvc can be resized" in refused.message, refused.message
