"""What the guardrails allow and refuse: names, labels, capabilities, volume types, devices and taints."""

from __future__ import annotations

from typing import Literal, get_args

from cdk_app.config.model import ExtraCapability, KitConfig
from cdk_app.domain import instance_types

API_VERSION = "admissionregistration.k8s.io/v1"


NAME_PREFIX = "hyperpod-kit-"


POD_SECURITY = f"{NAME_PREFIX}pod-security"


WORKLOAD_QUEUE = f"{NAME_PREFIX}workload-queue"


DEPENDENTS = f"{NAME_PREFIX}dependents"


SERVICES = f"{NAME_PREFIX}services"


NETWORK_POLICIES = f"{NAME_PREFIX}network-policies"
TOLERATIONS = f"{NAME_PREFIX}tolerations"


QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


# Kueue's keys on a queued object that only shape how its own quota is used (max run time, partial
# admission); every other Kueue label or annotation changes how Kueue accounts the object (v0.19: e.g.
# prebuilt-workload-name hands it an existing Workload, multikueue-origin, pod-group-*), so a team may not set it.
KUEUE_KEY = "kueue.x-k8s.io/"


TEAM_KUEUE_LABELS = (QUEUE_LABEL, PRIORITY_LABEL, "kueue.x-k8s.io/max-exec-time-seconds")


TEAM_KUEUE_ANNOTATIONS = ("kueue.x-k8s.io/job-min-parallelism", "kueue.x-k8s.io/job-completions-equal-parallelism")


# Kueue suspends, starts and (topology-aware) ungates what it admits; its service account in kueue-system.
KUEUE_CONTROLLER = "system:serviceaccount:kueue-system:kueue-controller-manager"


# spec field that hands a queued kind to another controller (e.g. Kueue's MultiKueue) and the value of
# the controller that normally runs it. MPIJob's is in mpi-operator 0.6+ (the pinned chart's 0.5 CRD
# prunes it): checked so that a chart update does not open it.
MANAGED_BY = {"batch/Job": ("managedBy", "kubernetes.io/job-controller"),
              "kubeflow.org/PyTorchJob": ("runPolicy.managedBy", "kubeflow.org/training-operator"),
              "kubeflow.org/MPIJob": ("runPolicy.managedBy", "kubeflow.org/mpi-operator")}


# When a PyTorchJob's Master or an MPIJob's launcher succeeds the job is done and Kueue frees its whole quota;
# with the operators' default cleanPodPolicy None its other pods (Workers) keep running on their GPUs. A team's
# job must name a policy that deletes them (job writes Running).
CLEAN_POD_POLICIES = ("Running", "All")


CLEAN_POD_KINDS = ("kubeflow.org/PyTorchJob", "kubeflow.org/MPIJob")


# Set by the API server on every namespace and not editable: binding by it cannot be dodged by relabelling.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


# Namespace of the HyperPod chart's release (HyperPodHelmReleaseProps' default, which the cluster stack keeps).
HELM_RELEASE_NAMESPACE = "kube-system"


# Pod Security Standards "baseline": the capabilities any container may add.
BASELINE_CAPABILITIES = ("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                         "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT")


# What a team may be given on top through teams[].allowed_capabilities (the config model says why).
EXTRA_CAPABILITIES = get_args(ExtraCapability)


# Variables that make the NVIDIA container toolkit or the Neuron runtime hook hand devices to a container:
# set by hand they give devices no resource request, and so no quota, counts. The device plugins set them
# themselves for what a pod asks. CUDA_VISIBLE_DEVICES and NVIDIA_DRIVER_CAPABILITIES stay allowed: they
# only narrow or describe the devices the container already has. Each maps to the values that give no device:
# "" and "void" select none (the MPI operator sets NVIDIA_VISIBLE_DEVICES empty on launchers); "none" is not
# one of them, it is a device list of one empty name to the toolkit, which then applies the feature variables.
GPU_ENV_VAR = "NVIDIA_VISIBLE_DEVICES"


# What a container that asks for no GPU sets (the rule gpu-visibility); `job` writes it.
HIDE_GPUS_ENV = {"name": GPU_ENV_VAR, "value": "void"}


def gpus_hidden_by_manifest(config: KitConfig) -> bool:
    """Whether the manifest must hide the image's GPUs (gpu-visibility, and `job` writing HIDE_GPUS_ENV):
    only without node-level isolation. With it the toolkit ignores NVIDIA_VISIBLE_DEVICES in every container
    without CAP_SYS_ADMIN (nvidia-container-toolkit internal/config/image/cuda_image.go VisibleDevices,
    privileged.go), which no team container may add, legacy CUDA images included."""
    return config.hyperpod is None or not config.hyperpod.lifecycle.gpu_device_isolation


# Once a container has any GPU, the toolkit adds every host device node of each feature its env (the image's
# included) sets to "enabled" - all EFAs (/dev/infiniband, MOFED), NVSwitch, GDRCopy, GDS (nvidia-container-toolkit
# internal/modifier/gated.go and cdi.go); only its CDI mode ignores them, and no other setting does. No rule
# demands these in manifests any more: that refused every GPU example of AWS's and NVIDIA's docs (the README
# says what stays open and why). device-env still refuses a pod that switches one on itself, and `job` writes
# them off so that the kit's own jobs get only what they ask for. IMEX channels are the node's to refuse
# (lifecycle_scripts/steps/gpu_device_isolation.sh: ignore-imex-channel-requests).
GPU_FEATURES_OFF_ENV = ({"name": "NVIDIA_MOFED", "value": "disabled"}, {"name": "NVIDIA_NVSWITCH", "value": "disabled"},
                        {"name": "NVIDIA_GDRCOPY", "value": "disabled"}, {"name": "NVIDIA_GDS", "value": "disabled"},
                        {"name": "NVIDIA_IMEX_CHANNELS", "value": "void"})


DEVICE_ENV_OFF: dict[str, tuple[str, ...]] = {
    **{name: ("", "void") for name in (GPU_ENV_VAR, "NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_MIG_MONITOR_DEVICES",
                                       "AWS_NEURON_VISIBLE_DEVICES", "NEURON_RT_VISIBLE_CORES")},
    **{v["name"]: ("", v["value"]) for v in GPU_FEATURES_OFF_ENV},
    # Read instead of NVIDIA_VISIBLE_DEVICES when a node's toolkit sets swarm-resource (config.toml).
    "DOCKER_RESOURCE_GPU": ("",)}


# The toolkit also takes devices from CDI annotations (when containerd passes pod annotations on) and, in
# its volume-mounts mode before v1.15, from any mount under /var/run/nvidia-container-devices: refused on
# pods and templates (any mount path naming that folder, so no spelling of the path gets around it).
# Any key holding it: runtimes also read vendor prefixes (the NVIDIA device plugin's nvidia.cdi.k8s.io/).
CDI_ANNOTATION_PREFIX = "cdi.k8s.io/"


DEVICE_LIST_FOLDER = "nvidia-container-devices"


# The chart's training operator (kubeflow/training-operator v1-855e096, tests/unit/kubernetes/guardrails/test_policies.py reads the pin)
# adds an init container of this image to every Worker of a PyTorchJob with a Master (it waits for the
# Master's DNS name), with no env at all. gpu-visibility exempts exactly that: an init container of this image
# with no env and no envFrom - never by name (a team names its containers as it likes), and never with env:
# CUDA_VERSION alone makes the toolkit treat a container as a "legacy" CUDA image and give it every GPU of the
# node. The image itself sets no NVIDIA or CUDA variable.
OPERATOR_INIT_IMAGES = ("alpine:3.10",)


# Pods keep their devices until they end, Kueue frees the quota when their job stops: a long grace period
# with SIGTERM ignored would hold GPUs past an eviction or delete, outside the quota.
MAX_GRACE_SECONDS = 300

# Unqueued kinds (Deployment, StatefulSet, ReplicaSet) are outside every Kueue quota: an elastic job's etcd
# rendezvous is one replica (three for an etcd cluster that survives a member's loss), so more is refused, and
# no priority class lets their pods preempt queued ones.
MAX_UNQUEUED_REPLICAS = 3


# A Deployment's rollout runs up to replicas + maxSurge pods, old and new together, and a rollout that never
# becomes ready stays there (red team round 2, F2: maxSurge 1000 doubled the pods). Allowed: at most 1 pod, or a
# percentage up to 25 (Kubernetes' default; it rounds up to 1 pod at 1-3 replicas). The pattern is what the API
# server accepts as a percentage (digits then %, leading zeros allowed) with the value 0-25.
MAX_UNQUEUED_SURGE = 1
MAX_UNQUEUED_SURGE_PERCENT = 25
UNQUEUED_SURGE_PERCENT_PATTERN = "^0*([0-9]|1[0-9]|2[0-5])%$"


DEVICE_ENV_VARS = tuple(DEVICE_ENV_OFF)


# Extended resources that only a queued workload may ask for (Kueue counts them against the quota).
DEVICE_RESOURCE_PREFIXES = instance_types.DEVICE_RESOURCE_PREFIXES


# The rest of Pod Security "baseline": the sysctls it calls safe and the SELinux types it allows.
BASELINE_SYSCTLS = ("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                    "net.ipv4.tcp_keepalive_probes")


BASELINE_SELINUX_TYPES = ("container_t", "container_init_t", "container_kvm_t", "container_engine_t")


CONTAINER_FIELDS = ("containers", "initContainers", "ephemeralContainers")


# Volume types a pod may use (Pod Security "restricted"'s list). Every other type of the Volume schema
# reaches the node or storage outside the namespace: hostPath, awsElasticBlockStore (any EBS volume id,
# attached by the CSI driver's role), nfs/iscsi/rbd/cephfs/glusterfs/fc (mounted by the kubelet as root),
# flexVolume (a node binary), inline csi (whatever a driver's Ephemeral mode does), image, gitRepo ...
# REFUSED_VOLUME_TYPES is the rest of the schema (tests/unit/kubernetes/guardrails/test_policies.py compares both with it): has()
# on each named field is the only test Kubernetes' typed CEL allows on a Volume object.
ALLOWED_VOLUME_TYPES = ("configMap", "secret", "emptyDir", "projected", "downwardAPI", "persistentVolumeClaim",
                        "ephemeral")


REFUSED_VOLUME_TYPES = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc",
                        "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath", "image",
                        "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO",
                        "storageos", "vsphereVolume")


# A generic ephemeral volume's claim is provisioned from its StorageClass; these fields would instead bind
# an existing PersistentVolume (another team's data) or clone a volume or snapshot. Without a StorageClass
# name (or with "") the PV controller binds the claim to any Available PersistentVolume that fits, and a
# selector picks one by its labels: a claim must name a StorageClass and no selector.
EPHEMERAL_CLAIM_SOURCES = ("volumeName", "dataSource", "dataSourceRef", "selector")


# Taints that keep work off a node: HyperPod's (node-health-status=Unschedulable while a node fails its
# checks) and Kubernetes' node.kubernetes.io/* (cordoned, out of service, under pressure ...).
GUARDED_TAINT_PREFIXES = ("sagemaker.amazonaws.com/", "node.kubernetes.io/")


# Except the two NoExecute tolerations the DefaultTolerationSeconds admission plugin adds to every pod.
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


HOSTNAME_LABEL = "kubernetes.io/hostname"


DEFAULT_SCHEDULER = "default-scheduler"


# The AppArmor annotation Kubernetes copies into securityContext.appArmorProfile on pod creation.
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


HOST_NAMESPACES = ("hostPID", "hostIPC", "hostNetwork")


Role = Literal["pod", "queued", "unqueued"]
