"""An environment's Kubernetes side on the real API server: the CRDs a HyperPod cluster has (the pinned chart's
training and MPI operators, Kueue v0.19.2's own), then what the kit and task governance put there - applied
the way the kit's installer applies its manifests (kubectl apply --server-side --field-manager=hyperpod-kit
--force-conflicts, constructs/helm_release_handler/index.py).

What stays modelled: in a real cluster SageMaker creates the namespaces and the Kueue objects when the compute
allocations are created (cdk_app.domain.kueue_mapping says how, and which readings are unverified); EKS access
entries map the teams' IAM roles to their groups, which here is impersonation of the group.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import yaml

from cdk_app.config.model import KitConfig
from cdk_app.domain.kueue_mapping import governance_objects, team_namespaces
from cdk_app.kubernetes.guardrails import guardrail_manifests
from cdk_app.kubernetes.team_set import team_set
from cdk_app.kubernetes.team_volumes import lustre_volume, team_claims
from support.paths import SUPPORT

CHART = SUPPORT / "data" / "hyperpod-chart" / "HyperPodHelmChart-a00b22d.tar.gz"
# The chart's CRDs of the job kinds the kit writes (the MPI operator's is a template without directives).
CHART_CRDS = ("HyperPodHelmChart/charts/training-operators/crds/",
              "HyperPodHelmChart/charts/mpi-operator/templates/mpijob-crd.yaml")
KUEUE_MODULE = SUPPORT.parent / "k8s" / "kueue"
FIELD_MANAGER = "hyperpod-kit"
# What FSx gives a file system (its id, DNS name and Lustre mount name), in their forms.
STAND_IN_FILE_SYSTEM_ID = "fs-0123456789abcdef0"
STAND_IN_DNS_NAME = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
STAND_IN_MOUNT_NAME = "abcdefgh"


def chart_crds() -> list[dict[str, Any]]:
    found = []
    with tarfile.open(CHART) as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name.endswith(".yaml") and member.name.startswith(CHART_CRDS):
                found.extend(doc for doc in yaml.safe_load_all(archive.extractfile(member)) if doc)
    return [doc for doc in found if doc.get("kind") == "CustomResourceDefinition"]


def kueue_crds(go: str = "go") -> list[dict[str, Any]]:
    """Kueue's CRDs from the module the Kueue build pins (go.mod in tests/k8s/kueue), read from the Go module
    cache: the same release the harness and the controller are built from."""
    done = subprocess.run([go, "mod", "download", "-json", "sigs.k8s.io/kueue"], cwd=KUEUE_MODULE,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"go mod download sigs.k8s.io/kueue failed:\n{done.stderr}{done.stdout}")
    bases = Path(json.loads(done.stdout)["Dir"]) / "config" / "components" / "crd" / "bases"
    docs = [yaml.safe_load(path.read_text()) for path in sorted(bases.glob("kueue.x-k8s.io_*.yaml"))]
    if not docs:
        raise FileNotFoundError(f"no Kueue CRDs in {bases}")
    return docs


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def environment_objects(config: KitConfig) -> list[dict[str, Any]]:
    """Namespaces, the teams' RBAC, NetworkPolicy, ResourceQuota and volume claims, the teams' volumes, the guardrails
    (policies before bindings) and the Kueue objects."""
    teams = [team.name for team in config.teams] + ([config.shared_pool.name] if config.shared_pool else [])
    objects = [namespace(name) for name in team_namespaces(config)]
    for team in teams:
        objects.extend(team_set(team, team_claims(config, team)))
    # The storage stack's volumes, with stand-ins for the file systems' deploy-time names.
    objects.extend(lustre_volume(fs, STAND_IN_FILE_SYSTEM_ID, STAND_IN_DNS_NAME, STAND_IN_MOUNT_NAME)
                   for fs in (config.storage.file_systems if config.storage else ()))
    objects.extend(guardrail_manifests(config))
    objects.extend(governance_objects(config))
    return objects


def kubectl_apply(kubectl: Path, kubeconfig: Path, objects: list[dict[str, Any]]) -> None:
    """Apply as the installer does; fails loudly with kubectl's own message."""
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "apply.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        done = subprocess.run([str(kubectl), f"--kubeconfig={kubeconfig}", "apply", "--server-side",
                               f"--field-manager={FIELD_MANAGER}", "--force-conflicts", "-f", str(path)],
                              capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"kubectl apply failed ({done.returncode}):\n{done.stderr}{done.stdout}")


def wait_established(kubectl: Path, kubeconfig: Path, crds: list[dict[str, Any]]) -> None:
    names = [f"crd/{crd['metadata']['name']}" for crd in crds]
    done = subprocess.run([str(kubectl), f"--kubeconfig={kubeconfig}", "wait", "--for=condition=Established",
                           "--timeout=120s", *names], capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        raise RuntimeError(f"CRDs not established:\n{done.stderr}")


def apply_environment(config: KitConfig, kubectl: Path, kubeconfig: Path, go: str = "go") -> None:
    crds = chart_crds() + kueue_crds(go)
    kubectl_apply(kubectl, kubeconfig, crds)
    wait_established(kubectl, kubeconfig, crds)
    kubectl_apply(kubectl, kubeconfig, environment_objects(config))
