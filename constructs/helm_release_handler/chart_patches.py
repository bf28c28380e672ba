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


# The agent's GPU container, from its name to its pod's volumes (a00b22d,
# charts/health-monitoring-agent/templates/health-monitoring-agent.yaml); its CPU twin has another name.
_AGENT_MOUNTS = """        - name: health-monitoring-agent
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
          env:
            - name: NODE_NAME
              valueFrom:
                fieldRef:
                  fieldPath: spec.nodeName
            - name: NODE_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.hostIP
          volumeMounts:
            - name: log
              mountPath: /var/log
            - name: kmsg
              mountPath: /dev/kmsg
              readOnly: true
            # Make sure node problem detector is in the same timezone
            # with the host.
            - name: localtime
              mountPath: /etc/localtime
              readOnly: true
      serviceAccountName: health-monitoring-agent
      volumes:
"""
# The device list the isolated toolkit reads: a mount of the host's /dev/null under
# /var/run/nvidia-container-devices/, the rest of the path naming the devices ("all"), exactly as the device
# plugin's volume-mounts strategy hands a pod its GPUs (nvidia-container-toolkit
# internal/config/image/cuda_image.go requestsFromMounts; k8s-device-plugin internal/plugin/server.go).
GPU_LIST_VOLUME = "nvidia-gpus-for-health-checks"
GPU_LIST_MOUNT = "/var/run/nvidia-container-devices/all"

# The training operator's pod spec ends with its service account (a00b22d,
# charts/training-operators/templates/Deployment/training-operator-kubeflow-Deployment.yaml).
_TRAINING_OPERATOR_SPEC_END = """          allowPrivilegeEscalation: false
      serviceAccountName: training-operator
"""

PATCHES: dict[str, ChartPatch] = {
    # The training operator (pods, pods/exec, Secrets of every namespace) on the administrators' system nodes:
    # its template reads no placement values, unlike the MPI operator's sub-chart; it reads the same two now.
    "training-operator-placement": ChartPatch(
        path="charts/training-operators/templates/Deployment/training-operator-kubeflow-Deployment.yaml",
        old=_TRAINING_OPERATOR_SPEC_END,
        new=_TRAINING_OPERATOR_SPEC_END + """{{- with .Values.nodeSelector }}
      nodeSelector:
{{ toYaml . | indent 8 }}
{{- end }}
{{- with .Values.tolerations }}
      tolerations:
{{ toYaml . | indent 8 }}
{{- end }}
"""),
    # With node GPU isolation the NVIDIA toolkit ignores NVIDIA_VISIBLE_DEVICES in unprivileged containers, and
    # the agent's GPU DaemonSet reads the GPUs through its image's variable, as uid 1000 without a GPU request;
    # node recovery depends on it. It gets the device-list mount instead: no capability, no change to its
    # seccomp profile (CAP_SYS_ADMIN would have widened the runtime's default profile). Team pods may not carry
    # such a mount (the guardrail device-annotations).
    "health-monitoring-agent-gpu-reader": ChartPatch(
        path="charts/health-monitoring-agent/templates/health-monitoring-agent.yaml",
        old=_AGENT_MOUNTS,
        new=_AGENT_MOUNTS.replace("      serviceAccountName:", f"""            - name: {GPU_LIST_VOLUME}
              mountPath: {GPU_LIST_MOUNT}
              readOnly: true
      serviceAccountName:""") + f"""        - name: {GPU_LIST_VOLUME}
          hostPath:
            path: /dev/null
            type: CharDevice
"""),
}


def apply_patches(chart: Path, names: list[str]) -> tuple[str, ...]:
    """Apply the named patches to the chart folder; returns their names, in order."""
    for name in names:
        patch = PATCHES.get(name)
        if patch is None:
            raise HelmReleaseError(f"unknown chart patch {name!r}; the installer knows {sorted(PATCHES)}")
        path = chart / patch.path
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
        except (OSError, UnicodeDecodeError) as err:
            raise HelmReleaseError(f"chart patch {name}: cannot read {patch.path}: {err}") from err
        found = text.count(patch.old)
        if found != 1:
            raise HelmReleaseError(f"chart patch {name}: {patch.path} holds the text it replaces {found} times, not "
                                   "once; the pinned chart differs from what the patch was written for")
        path.write_text(text.replace(patch.old, patch.new), encoding="utf-8")
    return tuple(names)
