"""The teams' volume objects as the installer's policy (constructs/helm_release_handler/manifest_policy.py and its
set rules) accepts them: exactly as the kit writes them, and nothing that would hand a volume to another claim.
The real API server's verdicts on them are tests/realk8s/test_team_volumes.py's."""

from __future__ import annotations

import copy

import pytest
from support.handlers import load_handler
from support.paths import ROOT

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.team_set import team_set
from cdk_app.kubernetes.team_volumes import lustre_volume, team_claims, volume_claim, volume_name
from hyperpod_constructs.helm_release_handler.manifest_policy import manifest_refusal

handler = load_handler("helm_release_handler")
DEV = load_config(ROOT / "config" / "dev.yaml").config
[JOHNS] = [fs for fs in DEV.storage.file_systems if fs.team == "john"]
VOLUME = lustre_volume(JOHNS, "fs-0123456789abcdef0", "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com", "abcdefgh")
CLAIM = volume_claim("john", "checkpoints")


def test_the_volume_and_claim_name_each_other():
    assert VOLUME["spec"]["claimRef"] == {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                          "namespace": "hyperpod-ns-john", "name": "checkpoints"}
    assert CLAIM["spec"]["volumeName"] == VOLUME["metadata"]["name"] == volume_name("john", "checkpoints")
    assert VOLUME["spec"]["csi"]["driver"] == "fsx.csi.aws.com" and VOLUME["spec"]["capacity"] == {"storage": "1200Gi"}
    assert (manifest_refusal(VOLUME), manifest_refusal(CLAIM)) == (None, None)


def test_the_team_set_holds_a_claim_per_file_system_of_the_team():
    assert team_claims(DEV, "john") == ("checkpoints",)
    assert team_set("john", team_claims(DEV, "john"))[-1] == CLAIM
    assert all(m["kind"] != "PersistentVolumeClaim" for m in team_set("john"))


def _edited(manifest: dict, path: str, value) -> dict:
    edited = copy.deepcopy(manifest)
    *parents, last = path.split(".")
    target = edited
    for key in parents:
        target = target[key]
    if value is None:
        del target[last]
    else:
        target[last] = value
    return edited


@pytest.mark.parametrize("path, value", [
    ("spec.claimRef.namespace", "kube-system"),  # a claim outside the team namespaces
    ("spec.claimRef.name", "other"),  # another claim than the one it is named after
    ("spec.claimRef", None),  # unbound: any claim could take it
    ("spec.persistentVolumeReclaimPolicy", "Delete"),
    ("spec.storageClassName", "fsx-sc"),
    ("spec.csi.driver", "efs.csi.aws.com"),
    ("spec.csi.volumeAttributes.dnsname", "a b"),
    ("spec.capacity.storage", "1.2Ti"),
    ("spec.accessModes", ["ReadWriteOnce"]),
    ("metadata.namespace", "hyperpod-ns-john"),
    ("metadata.name", "hyperpod-kit-hyperpod-ns-smith-checkpoints"),
])
def test_a_volume_other_than_the_kits_is_refused(path, value):
    assert manifest_refusal(_edited(VOLUME, path, value)) is not None


@pytest.mark.parametrize("path, value", [
    ("spec.volumeName", volume_name("smith", "checkpoints")),  # another team's volume
    ("spec.volumeName", None),
    ("spec.storageClassName", "fsx-sc"),
    ("spec.storageClassName", None),  # the default class would provision one
    ("metadata.namespace", "default"),
    ("spec.resources.requests.storage", "2400Gi"),
])
def test_a_claim_other_than_the_kits_is_refused(path, value):
    assert manifest_refusal(_edited(CLAIM, path, value)) is not None


def test_volumes_go_in_the_storage_set_and_claims_in_their_teams():
    assert handler.set_refusal("storage", [VOLUME], False) is None
    assert "do not belong to the storage volumes" in handler.set_refusal("storage", [VOLUME, CLAIM], False)
    assert handler.set_refusal("team-john", team_set("john", ("checkpoints",)), False) is None
    assert "does not belong to the set of team john" in handler.set_refusal("team-john", [CLAIM, VOLUME], False)
    assert "does not belong to the set of team smith" in handler.set_refusal("team-smith", [CLAIM], False)
