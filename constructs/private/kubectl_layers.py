"""Which kubectl/helm Lambda layer (aws-cdk.lambda-layer-kubectl-vNN) serves a Kubernetes version.

kubectl supports API servers one minor version older or newer than itself, so a cluster at 1.N gets
the layer of 1.N, else of 1.N+1, else of 1.N-1. The validator uses layer_minor (this module imports no
aws_cdk at load time); the installer construct uses kubectl_layer.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

# The layer packages pinned in pyproject.toml and requirements.lock.
LAYER_MINORS = (33, 34, 35)


def layer_minor(kubernetes_version: str) -> int | None:
    """The layer's minor version for a "1.NN" cluster, or None when no pinned layer is within one minor."""
    match = re.fullmatch(r"1\.([0-9]+)", kubernetes_version)
    if match is None:
        return None
    minor = int(match.group(1))
    return next((m for m in (minor, minor + 1, minor - 1) if m in LAYER_MINORS), None)


def kubectl_layer(scope: Any, construct_id: str, kubernetes_version: str) -> Any:
    """The layer construct for the cluster's version; ValueError when no pinned layer fits."""
    minor = layer_minor(kubernetes_version)
    if minor is None:
        raise ValueError(f"no kubectl layer within one minor version of Kubernetes {kubernetes_version}; "
                         f"the kit ships layers for 1.{', 1.'.join(map(str, LAYER_MINORS))}")
    module = importlib.import_module(f"aws_cdk.lambda_layer_kubectl_v{minor}")
    return getattr(module, f"KubectlV{minor}Layer")(scope, construct_id)
