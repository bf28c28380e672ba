"""The objects job writes, checked against the CRD schemas and core validation."""

from __future__ import annotations

import copy

import jsonschema
import kubernetes_validate

from cdk_app.config.loader import load_config
from support.crd_schemas import (
    MPIJOB_SCHEMA,
    PYTORCHJOB_SCHEMA,
    check_metadata,
    core_refusals,
    label_refusals,
    mpi_operator_refusals,
)
from support.paths import ROOT

DEV = load_config(ROOT / "config" / "dev.yaml").config


def validate(objects: list[dict]) -> None:
    """Each object against its schema: the CRDs for the training operators' kinds, Kubernetes for the rest."""
    for obj in objects:
        if obj["kind"] == "PyTorchJob":
            jsonschema.validate(obj, PYTORCHJOB_SCHEMA)
            check_metadata(obj, DEV.eks.kubernetes_version)
        elif obj["kind"] == "MPIJob":
            jsonschema.validate(obj, MPIJOB_SCHEMA)
            check_metadata(obj, DEV.eks.kubernetes_version)
            assert not mpi_operator_refusals(obj), mpi_operator_refusals(obj)
        else:
            kubernetes_validate.validate(copy.deepcopy(obj), DEV.eks.kubernetes_version, strict=True)
        for kind, spec in (pod_specs(obj) if obj["kind"] != "Service" else {}).items():
            assert not core_refusals(spec, job=obj["spec"] if obj["kind"] == "Job" else None), (kind, spec)
        assert not label_refusals(obj["metadata"].get("labels", {})), obj["metadata"]


def pod_specs(obj: dict) -> dict[str, dict]:
    replicas = obj["spec"].get("pytorchReplicaSpecs") or obj["spec"].get("mpiReplicaSpecs")
    if replicas is None:
        return {"": obj["spec"]["template"]["spec"]}
    return {name: spec["template"]["spec"] for name, spec in replicas.items()}
