"""Edits the kit makes to the pinned chart before helm renders it. Each one replaces an exact text that occurs
once in a file of the chart at its pinned content digest (chart_digest.py checks the whole tree first), so a
chart revision that moves the text fails the install with the patch named instead of rendering something
half-patched. Which patches apply is fixed at synth (the release's Patches in INSTALLER_SCOPE); an event
cannot name others."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from installer_tools import HelmReleaseError


@dataclass(frozen=True)
class ChartPatch:
    path: str  # relative to the chart's root folder
    old: str
    new: str


_AGENT_CONTAINER = """        - name: health-monitoring-agent
          image: {{ include "health-monitoring-agent.imageUri" . }}
          resources:
            limits:
              cpu: 500m
              memory: 512Mi
            requests:
              cpu: 500m
              memory: 512Mi
          imagePullPolicy: IfNotPresent
          securityContext:
            runAsUser: 1000
            runAsGroup: 2000
"""

PATCHES: dict[str, ChartPatch] = {
    # With node GPU isolation the NVIDIA toolkit honours NVIDIA_VISIBLE_DEVICES only in containers whose
    # bounding capability set holds CAP_SYS_ADMIN (nvidia-container-toolkit internal/config/image/privileged.go:
    # "allow non-root users to access the privileged NVIDIA capabilities"). The agent's GPU DaemonSet reads the
    # GPUs through its image's variable, as uid 1000 without a GPU request, and node recovery depends on it: it
    # gets SYS_ADMIN in its bounding set. Running as uid 1000 with no ambient capabilities, its processes hold
    # none of it in their effective set; only a set-uid binary of AWS's image could raise it.
    "health-monitoring-agent-gpu-reader": ChartPatch(
        path="charts/health-monitoring-agent/templates/health-monitoring-agent.yaml",
        old=_AGENT_CONTAINER,
        new=_AGENT_CONTAINER + """            capabilities:
              add:
                - SYS_ADMIN
"""),
}


def apply_patches(chart: Path, names: list[str]) -> tuple[str, ...]:
    """Apply the named patches to the chart folder; returns their names, in order."""
    for name in names:
        patch = PATCHES.get(name)
        if patch is None:
            raise HelmReleaseError(f"unknown chart patch {name!r}; the installer knows {sorted(PATCHES)}")
        path = chart / patch.path
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        found = text.count(patch.old)
        if found != 1:
            raise HelmReleaseError(f"chart patch {name}: {patch.path} holds the text it replaces {found} times, not "
                                   "once; the pinned chart differs from what the patch was written for")
        path.write_text(text.replace(patch.old, patch.new), encoding="utf-8")
    return tuple(names)
