"""Catalogue of SageMaker HyperPod instance types: vCPU, memory and accelerators per instance.

The list of types is the one HyperPod accepts (tests/unit/domain/test_instance_types.py checks it against the
enum in cfn-lint's AWS::SageMaker::ComputeQuota schema). Figures are the public EC2 specifications
of the matching EC2 type. The validator needs them to sum quotas given as instances, accelerators
or vCPU/memory on one scale, the way SageMaker fills partial quotas in the instance's ratio.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

AcceleratorKind = Literal["nvidia-gpu", "aws-trainium"]
# The extended resource each kind's device plugin advertises on a node, and the EFA device plugin's.
ACCELERATOR_RESOURCES: dict[str, str] = {"nvidia-gpu": "nvidia.com/gpu", "aws-trainium": "aws.amazon.com/neuron"}
EFA_RESOURCE = "vpc.amazonaws.com/efa"
# Prefixes of every device plugin's extended resources (NVIDIA's MIG and shared names, Neuron's cores and devices).
DEVICE_RESOURCE_PREFIXES = ("nvidia.com/", "aws.amazon.com/neuron", EFA_RESOURCE)
# Instance families whose nodes carry topology.k8s.aws/network-node-layer-* labels (HyperPod task governance's
# topology-aware scheduling list), and how many layers: the network nodes EC2's DescribeInstanceTopology returns
# for the type (EC2 User Guide, "Prerequisites for Amazon EC2 topology": 3 for every one of these; 4 only for
# p6-b200 and p6-b300, which HyperPod does not list). A node carries one label per layer, so no other exists.
TOPOLOGY_LAYERS = {family: 3 for family in ("p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6e-gb200", "trn1", "trn1n",
                                             "trn2", "trn2u")}
TOPOLOGY_FAMILIES = tuple(TOPOLOGY_LAYERS)
MAX_TOPOLOGY_LAYERS = 4  # the deepest EC2 instance topology of any type (p6-b200, p6-b300)
# Maximum EFA interfaces, only where public AWS documentation states it. Other types are checked
# only against the nodes' allocatable (--cluster-nodes), which is the authority when given.
EFA_MAXIMUM = {"ml.p5.48xlarge": 32, "ml.p5e.48xlarge": 32, "ml.g6e.48xlarge": 4,
               "ml.trn1.32xlarge": 8, "ml.trn1n.32xlarge": 16, "ml.p4d.24xlarge": 4, "ml.p4de.24xlarge": 4,
               **{f"ml.g5.{size}xlarge": 1 for size in (8, 12, 16, 24, 48)}}


@dataclass(frozen=True, slots=True)
class InstanceSpec:
    """Resources of one instance of a type."""

    name: str
    vcpu: int
    memory_gib: float
    accelerators: int = 0
    accelerator_kind: AcceleratorKind | None = None
    accelerator_model: str | None = None

    @property
    def has_accelerators(self) -> bool:
        return self.accelerators > 0


# vCPUs of the usual EC2 size names.
_SIZE_VCPU = {
    "medium": 1, "large": 2, "xlarge": 4, "2xlarge": 8, "3xlarge": 12, "4xlarge": 16,
    "6xlarge": 24, "8xlarge": 32, "9xlarge": 36, "12xlarge": 48, "16xlarge": 64,
    "18xlarge": 72, "24xlarge": 96, "32xlarge": 128, "48xlarge": 192,
}

# Size ranges shared by several families.
_GRAVITON = ("medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")
_GRAVITON4 = _GRAVITON + ("24xlarge", "48xlarge")
_GEN6_INTEL = ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge")
_GEN6_AMD = _GEN6_INTEL + ("48xlarge",)
_GEN7_INTEL = ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")

# CPU families whose memory is a fixed GiB-per-vCPU ratio, with the sizes HyperPod offers.
_RATIO_FAMILIES: dict[str, tuple[int, tuple[str, ...]]] = {
    "c5": (2, ("large", "xlarge", "2xlarge", "4xlarge", "9xlarge", "12xlarge", "18xlarge", "24xlarge")),
    "c6a": (2, _GEN6_AMD), "c6g": (2, _GRAVITON), "c6i": (2, _GEN6_INTEL), "c7g": (2, _GRAVITON),
    "c8a": (2, ("16xlarge",)), "c8g": (2, _GRAVITON4),
    "m5": (4, ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge")),
    "m6a": (4, _GEN6_AMD), "m6g": (4, _GRAVITON), "m6i": (4, _GEN6_INTEL), "m7g": (4, _GRAVITON),
    "m7i": (4, _GEN7_INTEL), "m8a": (4, ("16xlarge",)), "m8g": (4, _GRAVITON4),
    "r5d": (8, ("16xlarge",)), "r6i": (8, _GEN6_INTEL), "r7i": (8, _GEN7_INTEL),
    "i3en": (8, ("large", "xlarge", "2xlarge", "3xlarge", "6xlarge", "12xlarge", "24xlarge")),
}

# Types whose figures do not follow a family ratio: (type, vCPU, memory GiB, accelerators, model).
_EXPLICIT: tuple[tuple[str, int, float, int, str | None], ...] = (
    ("c5n.large", 2, 5.25, 0, None), ("c5n.2xlarge", 8, 21, 0, None),
    ("c5n.4xlarge", 16, 42, 0, None), ("c5n.9xlarge", 36, 96, 0, None), ("c5n.18xlarge", 72, 192, 0, None),
    ("t3.medium", 2, 4, 0, None), ("t3.large", 2, 8, 0, None), ("t3.xlarge", 4, 16, 0, None),
    ("t3.2xlarge", 8, 32, 0, None),
    # NVIDIA T4
    ("g4dn.xlarge", 4, 16, 1, "T4"), ("g4dn.2xlarge", 8, 32, 1, "T4"), ("g4dn.4xlarge", 16, 64, 1, "T4"),
    ("g4dn.8xlarge", 32, 128, 1, "T4"), ("g4dn.12xlarge", 48, 192, 4, "T4"),
    ("g4dn.16xlarge", 64, 256, 1, "T4"),
    # NVIDIA A10G
    ("g5.xlarge", 4, 16, 1, "A10G"), ("g5.2xlarge", 8, 32, 1, "A10G"), ("g5.4xlarge", 16, 64, 1, "A10G"),
    ("g5.8xlarge", 32, 128, 1, "A10G"), ("g5.12xlarge", 48, 192, 4, "A10G"),
    ("g5.16xlarge", 64, 256, 1, "A10G"), ("g5.24xlarge", 96, 384, 4, "A10G"),
    ("g5.48xlarge", 192, 768, 8, "A10G"),
    # NVIDIA L4
    ("g6.xlarge", 4, 16, 1, "L4"), ("g6.2xlarge", 8, 32, 1, "L4"), ("g6.4xlarge", 16, 64, 1, "L4"),
    ("g6.8xlarge", 32, 128, 1, "L4"), ("g6.12xlarge", 48, 192, 4, "L4"), ("g6.16xlarge", 64, 256, 1, "L4"),
    ("g6.24xlarge", 96, 384, 4, "L4"), ("g6.48xlarge", 192, 768, 8, "L4"),
    ("gr6.4xlarge", 16, 128, 1, "L4"), ("gr6.8xlarge", 32, 256, 1, "L4"),
    # NVIDIA L40S
    ("g6e.xlarge", 4, 32, 1, "L40S"), ("g6e.2xlarge", 8, 64, 1, "L40S"), ("g6e.4xlarge", 16, 128, 1, "L40S"),
    ("g6e.8xlarge", 32, 256, 1, "L40S"), ("g6e.12xlarge", 48, 384, 4, "L40S"),
    ("g6e.16xlarge", 64, 512, 1, "L40S"), ("g6e.24xlarge", 96, 768, 4, "L40S"),
    ("g6e.48xlarge", 192, 1536, 8, "L40S"),
    # NVIDIA RTX PRO 4500 Blackwell
    ("g7.2xlarge", 8, 32, 1, "RTX PRO 4500"), ("g7.4xlarge", 16, 64, 1, "RTX PRO 4500"),
    ("g7.8xlarge", 32, 128, 2, "RTX PRO 4500"), ("g7.12xlarge", 48, 192, 4, "RTX PRO 4500"),
    ("g7.24xlarge", 96, 384, 4, "RTX PRO 4500"), ("g7.48xlarge", 192, 768, 8, "RTX PRO 4500"),
    # NVIDIA RTX PRO 6000 Blackwell
    ("g7e.2xlarge", 8, 64, 1, "RTX PRO 6000"), ("g7e.4xlarge", 16, 128, 1, "RTX PRO 6000"),
    ("g7e.8xlarge", 32, 256, 1, "RTX PRO 6000"), ("g7e.12xlarge", 48, 512, 2, "RTX PRO 6000"),
    ("g7e.24xlarge", 96, 1024, 4, "RTX PRO 6000"), ("g7e.48xlarge", 192, 2048, 8, "RTX PRO 6000"),
    # NVIDIA data-centre GPUs
    ("p4d.24xlarge", 96, 1152, 8, "A100 40GB"), ("p4de.24xlarge", 96, 1152, 8, "A100 80GB"),
    ("p5.4xlarge", 16, 256, 1, "H100"), ("p5.48xlarge", 192, 2048, 8, "H100"),
    ("p5e.48xlarge", 192, 2048, 8, "H200"), ("p5en.48xlarge", 192, 2048, 8, "H200"),
    ("p6-b200.48xlarge", 192, 2048, 8, "B200"), ("p6-b300.48xlarge", 192, 4096, 8, "B300"),
    ("p6e-gb200.36xlarge", 144, 960, 4, "GB200"),
    # AWS Trainium (accelerators = Neuron devices)
    ("trn1.32xlarge", 128, 512, 16, "Trainium"), ("trn1n.32xlarge", 128, 512, 16, "Trainium"),
    ("trn2.3xlarge", 12, 128, 1, "Trainium2"), ("trn2.48xlarge", 192, 2048, 16, "Trainium2"),
)


def _build() -> dict[str, InstanceSpec]:
    specs: dict[str, InstanceSpec] = {}
    for family, (gib_per_vcpu, sizes) in _RATIO_FAMILIES.items():
        for size in sizes:
            vcpu = _SIZE_VCPU[size]
            name = f"ml.{family}.{size}"
            specs[name] = InstanceSpec(name, vcpu, float(vcpu * gib_per_vcpu))
    for short, vcpu, memory, accelerators, model in _EXPLICIT:
        name = f"ml.{short}"
        kind: AcceleratorKind | None = None
        if accelerators:
            kind = "aws-trainium" if short.startswith("trn") else "nvidia-gpu"
        specs[name] = InstanceSpec(name, vcpu, float(memory), accelerators, kind, model)
    return specs


CATALOGUE: dict[str, InstanceSpec] = _build()

# Families whose vCPUs are whole cores, one thread per core: their threads per core cannot be changed, so
# threads_per_core 2 is impossible (HPK212) and 1 leaves every vCPU. Source: Amazon EC2 User Guide, "CPU options
# for Amazon EC2 instances": "Each vCPU is a thread of a CPU core, except for T2 instances, M7a instances, Apple
# silicon Mac instances, and 64-bit ARM platforms such as instances powered by AWS Graviton processors", and "You
# can't modify the number of threads per core for T2, C7a, M7a, R7a, and Apple silicon Mac instances, and
# instances based on the AWS Graviton processor". Of the catalogue that is the Graviton families and
# p6e-gb200, whose CPUs are NVIDIA Grace (64-bit ARM). Every other family the catalogue holds (Intel, AMD
# before the 7th generation, the GPU and Trainium types) runs two threads per core by default.
ONE_THREAD_PER_CORE_FAMILIES = frozenset(
    {*(f for f in _RATIO_FAMILIES if f[1].isdigit() and f.endswith("g")), "p6e-gb200"})
# 8th-generation AMD (c8a, m8a): the guide's notes name the 7th generation only. The kit does not halve their
# vCPU (UNVERIFIED whether they run one thread per core, as the 7th does): it never claims less than a node has.
UNKNOWN_THREADS_FAMILIES = frozenset({"c8a", "m8a"})


def node_vcpu(instance_type: str, threads_per_core: int) -> int:
    """The vCPUs one node of the type has with the group's threads_per_core - the CPUs its kubelet reports,
    which is all a pod can be given. The catalogue's vCPU is the default's (two threads per core on most
    types): "The number of vCPUs for the instance is the number of CPU cores multiplied by the threads per
    core" (EC2 User Guide, "Rules for specifying CPU options"), so threads_per_core 1 leaves half of them on
    a type with two threads per core ("To disable simultaneous multithreading (SMT) ... specify one thread
    per core"), and all of them on a type with one (ONE_THREAD_PER_CORE_FAMILIES)."""
    vcpu = CATALOGUE[instance_type].vcpu
    if threads_per_core >= 2 or family(instance_type) in ONE_THREAD_PER_CORE_FAMILIES | UNKNOWN_THREADS_FAMILIES:
        return vcpu
    return vcpu // 2


def family(instance_type: str) -> str:
    """ml.p5.48xlarge -> p5; a name without two dots is returned whole."""
    return instance_type.split(".")[1] if instance_type.count(".") >= 2 else instance_type
