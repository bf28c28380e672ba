"""How a manifest set travels from the synth to the installer: its canonical JSON (the bytes the KubernetesManifests
construct writes to an S3 asset, and whose SHA-256 the event carries), and the identity of an object.

Standard library only: the installer Lambda ships this file, and the KubernetesManifests construct imports it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(manifests: Any) -> bytes:
    """The manifest list as JSON with keys sorted and no spaces: the same bytes for the same objects."""
    return json.dumps(manifests, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sha256_hex(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def identity(manifest: dict[str, Any]) -> str:
    """apiVersion/kind/namespace/name of an object, as one string."""
    meta = manifest.get("metadata") or {}
    return "/".join((manifest["apiVersion"], manifest["kind"], meta.get("namespace") or "", meta["name"]))
