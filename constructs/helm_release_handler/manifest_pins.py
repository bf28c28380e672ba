"""Manifest sets whose exact content is fixed in the installer's environment at synth (the admission
guardrails): the SHA-256 of the set's canonical JSON and the identity of each of its objects. The installer
applies such a set only with that content and never deletes one of its objects on behalf of another set.

Standard library only: the installer Lambda ships this file, and the HyperPodHelmRelease construct imports
it to write the pins.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def manifests_sha256(manifests: Any) -> str:
    """SHA-256 of the canonical JSON of a manifest list (keys sorted, no spaces)."""
    canonical = json.dumps(manifests, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def identity(manifest: dict[str, Any]) -> str:
    """apiVersion/kind/namespace/name of an object, as one string."""
    meta = manifest.get("metadata") or {}
    return "/".join((manifest["apiVersion"], manifest["kind"], meta.get("namespace") or "", meta["name"]))


def pin(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    """What the installer's environment holds for a pinned set."""
    return {"Sha256": manifests_sha256(manifests), "Objects": sorted(identity(m) for m in manifests)}
