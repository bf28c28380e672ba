"""GPU partitions (NVIDIA Multi-Instance GPU, MIG): the profiles each HyperPod instance type's GPU offers, how
many of a profile fit one GPU, which mixes of profiles one GPU takes, and the geometry an instance group's
`nvidia.com/mig.config` label gives its nodes.

Sources, row by row in `GPU_PROFILES` and `INSTANCE_GPUS`:
- Which instance types take MIG on HyperPod: AWS's "Using GPU partitions in Amazon SageMaker HyperPod" (Supported
  Instance Types: "ml.p4d.24xlarge - 8 NVIDIA A100 GPUs", "ml.p5.48xlarge - 8 NVIDIA H100 GPUs (80GB HBM3 per
  GPU)", "ml.p5e.48xlarge - 8 NVIDIA H200 GPUs (141GB HBM3e per GPU)", "ml.p5en.48xlarge - 8 NVIDIA H200 GPUs
  (141GB HBM3e per GPU)", then the Blackwell types), and the profiles per type of AWS's own HyperPod CLI
  (aws/sagemaker-hyperpod-cli 011ca92, src/sagemaker/hyperpod/inference/constant.py, INSTANCE_MIG_PROFILES:
  p4d/p4de, p5, p5e, p5en, p6-b200, p6e-gb200). Every profile named is in the API's MIGProfileType enum.
- Sizes: NVIDIA's MIG User Guide, "Supported MIG Profiles": a GPU has 7 compute slices and 8 memory slices; a
  profile "Ng.Mgb" takes N compute slices and the memory slices its memory needs (1, 2, 4 or all 8); the most
  instances per GPU are 7 (1g, one memory slice), 4 (1g, two memory slices), 3 (2g), 2 (3g), 1 (4g), 1 (7g).
- Placement (which mixes one GPU takes): the same guide's placements (`nvidia-smi mig -lgipp`): a profile of
  one memory slice starts at slice 0-6, of two at 0, 2, 4 or 6, a 3g at 0 or 4, a 4g and a 7g at 0 only; the
  placed profiles never overlap and take at most the 7 compute slices. tests/unit/domain/test_mig_profiles.py
  checks this rule against every geometry of the HyperPod chart's own MIG manager configuration
  (charts/gpu-operator/config/default-mig-config.yaml at the kit's pinned chart revision).
- Geometry: AWS's "Node lifecycle and labels" page of the same guide sets it with the instance group's
  KubernetesConfig label `nvidia.com/mig.config` (e.g. "all-2g.10gb"), which the GPU operator's MIG manager
  applies to every GPU of the node. Names follow the MIG manager configuration's pattern: `all-<profile>` (as
  many of the profile as fit the GPU the name was made for), `mixed-<n>-<profile>-<n>-<profile>...`,
  `all-disabled`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from cdk_app.config.model import InstanceGroup

MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DISABLED = "all-disabled"
# The extended resource the NVIDIA device plugin advertises for a profile under migStrategy "mixed"
# (NVIDIA k8s-device-plugin documentation, "MIG strategies": nvidia.com/mig-<profile>); the API's profile names
# already carry the "mig-" prefix.
RESOURCE_PREFIX = "nvidia.com/"
COMPUTE_SLICES, MEMORY_SLICES = 7, 8
# Memory slices -> the slices a profile may start at (NVIDIA MIG User Guide, placements).
_STARTS = {1: tuple(range(7)), 2: (0, 2, 4, 6), 8: (0,)}
_STARTS_4 = {3: (0, 4), 4: (0,)}


@dataclass(frozen=True, slots=True)
class MigProfile:
    name: str  # the API's MIGProfileType, e.g. mig-1g.10gb
    compute: int  # compute slices of the GPU's 7
    memory: int  # memory slices of the GPU's 8

    @property
    def resource(self) -> str:
        return RESOURCE_PREFIX + self.name

    def starts(self) -> tuple[int, ...]:
        return _STARTS_4[self.compute] if self.memory == 4 else _STARTS[self.memory]


def _family(one: str, two: str, half: str, whole: str) -> tuple[MigProfile, ...]:
    """A GPU's six profiles, by their memory sizes: 1g of one memory slice, 1g and 2g of two, 3g and 4g of
    half the memory, 7g of all of it (the MIG User Guide's table has this shape for every GPU below)."""
    return (MigProfile(f"mig-1g.{one}gb", 1, 1), MigProfile(f"mig-1g.{two}gb", 1, 2),
            MigProfile(f"mig-2g.{two}gb", 2, 2), MigProfile(f"mig-3g.{half}gb", 3, 4),
            MigProfile(f"mig-4g.{half}gb", 4, 4), MigProfile(f"mig-7g.{whole}gb", 7, 8))


# Per GPU model (the catalogue's accelerator_model), its profiles (NVIDIA MIG User Guide, "Supported MIG
# Profiles": A100-SXM4-40GB, A100-SXM4-80GB, H100-SXM5-80GB, H200-SXM5-141GB, B200, GB200).
GPU_PROFILES: dict[str, tuple[MigProfile, ...]] = {
    "A100 40GB": _family("5", "10", "20", "40"),
    "A100 80GB": _family("10", "20", "40", "80"),
    "H100": _family("10", "20", "40", "80"),
    "H200": _family("18", "35", "71", "141"),
    "B200": _family("23", "45", "90", "180"),
    "GB200": _family("23", "47", "93", "186"),
}
# Instance types that take MIG on HyperPod (AWS's doc and HyperPod CLI above) -> GPU model. ml.p4de.24xlarge:
# AWS's CLI gives it the A100 40GB profiles, but its GPUs are A100 80GB (EC2 P4de), whose profiles NVIDIA
# lists as the 80GB ones; the kit follows the GPU (UNVERIFIED which ones the service accepts). ml.p5.4xlarge
# (one H100) and ml.p6-b300.48xlarge (profiles outside the API's enum) are in neither list.
INSTANCE_GPUS: dict[str, str] = {
    "ml.p4d.24xlarge": "A100 40GB", "ml.p4de.24xlarge": "A100 80GB", "ml.p5.48xlarge": "H100",
    "ml.p5e.48xlarge": "H200", "ml.p5en.48xlarge": "H200", "ml.p6-b200.48xlarge": "B200",
    "ml.p6e-gb200.36xlarge": "GB200",
}


def profiles_of(instance_type: str) -> dict[str, MigProfile]:
    """The MIG profiles the instance type's GPU offers, by name; none for a type without MIG on HyperPod."""
    model = INSTANCE_GPUS.get(instance_type)
    return {p.name: p for p in GPU_PROFILES[model]} if model else {}


def fits_one_gpu(mix: dict[MigProfile, int]) -> bool:
    """Whether one GPU takes these profiles together: a placement of each at one of its starts, none
    overlapping another's memory slices, within the 7 compute slices."""
    if sum(p.compute * n for p, n in mix.items()) > COMPUTE_SLICES:
        return False
    # Largest first: few choices each, so the search stays tiny (at most 7 profiles on 8 slices).
    pending = sorted((p for p, n in mix.items() for _ in range(n)), key=lambda p: -p.memory)
    return _place(pending, [False] * MEMORY_SLICES)


def _place(pending: list[MigProfile], used: list[bool]) -> bool:
    if not pending:
        return True
    profile, rest = pending[0], pending[1:]
    for start in profile.starts():
        span = range(start, start + profile.memory)
        if not any(used[i] for i in span):
            for i in span:
                used[i] = True
            if _place(rest, used):
                return True
            for i in span:
                used[i] = False
    return False


@cache
def most_per_gpu(profile: MigProfile) -> int:
    """How many of one profile one GPU takes."""
    return max(n for n in range(1, MEMORY_SLICES + 1) if fits_one_gpu({profile: n}))


_MIXED_PART = re.compile(r"([1-9][0-9]?)-([1-7]g\.[0-9]+gb)")


def geometry_problem(instance_type: str, name: str) -> str | None:
    """Why `name` is no MIG geometry of the instance type's GPU; None when it is one (or all-disabled)."""
    if name == DISABLED:
        return None
    offered = profiles_of(instance_type)
    if not offered:
        return f"{instance_type} has no GPU that HyperPod partitions with MIG"
    parts = _parts(name)
    if parts is None:
        return f"{name!r} is not a MIG geometry name (all-<profile>, mixed-<n>-<profile>-..., or all-disabled)"
    unknown = [p for p in parts if f"mig-{p}" not in offered]
    if unknown:
        return (f"{instance_type}'s GPU has no MIG profile {', '.join(unknown)} "
                f"(it offers {', '.join(p.removeprefix('mig-') for p in offered)})")
    mix = {offered[f"mig-{p}"]: n or _all_count(f"mig-{p}") for p, n in parts.items()}
    if not fits_one_gpu(mix):
        held = ", ".join(f"{n} x {p.name.removeprefix('mig-')}" for p, n in mix.items())
        return f"one {INSTANCE_GPUS[instance_type]} GPU cannot hold {held} (NVIDIA's MIG placements)"
    return None


@cache
def geometry_with(instance_type: str, profile: str) -> str:
    """A geometry name of the type's GPU holding `profile` (with or without "mig-"), for hints: all-<profile>
    where the GPU takes it (the MIG manager's "as many as fit" may be more than this GPU holds: an A100 40GB
    takes 4 two-slice 1g.10gb, not the 7 of all-1g.10gb), else mixed-<the most one GPU holds>-<profile>."""
    bare = profile.removeprefix("mig-")
    if geometry_problem(instance_type, f"all-{bare}") is None:
        return f"all-{bare}"
    return f"mixed-{most_per_gpu(profiles_of(instance_type)[f'mig-{bare}'])}-{bare}"


def _all_count(profile: str) -> int:
    """Partitions per GPU of all-<profile>: as many as fit the GPU the name was made for. A name can stand for
    two profiles (1g.10gb is an A100 40GB's two-slice 1g and an H100's one-slice 1g): the MIG manager
    configuration's all-1g.10gb holds 7 (the chart's default-mig-config), which an A100 40GB cannot."""
    return max(most_per_gpu(p) for profiles in GPU_PROFILES.values() for p in profiles if p.name == profile)


def _parts(name: str) -> dict[str, int] | None:
    """Profile (without "mig-") -> partitions per GPU, 0 standing for "as many as fit" (all-<profile>)."""
    if name.startswith("all-"):
        profile = name.removeprefix("all-")
        return {profile: 0} if re.fullmatch(r"[1-7]g\.[0-9]+gb", profile) else None
    body = name.removeprefix("mixed-")
    if body == name:
        return None
    parts: dict[str, int] = {}
    for piece in re.split(r"-(?=[1-9][0-9]?-[1-7]g\.)", body):
        matched = _MIXED_PART.fullmatch(piece)
        if matched is None or matched.group(2) in parts:
            return None
        parts[matched.group(2)] = int(matched.group(1))
    return parts


def per_gpu(instance_type: str, name: str) -> dict[str, int]:
    """Profile name -> partitions one GPU holds in the geometry `name`; empty for all-disabled or a name that
    is no geometry of the type (geometry_problem says why)."""
    if name == DISABLED or geometry_problem(instance_type, name) is not None:
        return {}
    parts = _parts(name) or {}
    return {f"mig-{p}": n or _all_count(f"mig-{p}") for p, n in parts.items()}


def group_geometry(group: InstanceGroup) -> str | None:
    """The geometry the group's label names, if it names one."""
    return group.labels.get(MIG_CONFIG_LABEL)


def group_partitions(group: InstanceGroup, gpus_per_instance: int, instances: int,
                     instance_type: str | None = None) -> dict[str, int]:
    """Profile name -> partitions `instances` nodes of the group hold together as `instance_type` (default: its
    first type; every GPU of a node takes the geometry). The label is the group's, so a flexible group's nodes
    take it whichever of its types they come up as. The caller says how many nodes count: the capacity
    arithmetic's most a group holds, or one node."""
    name = group_geometry(group)
    if name is None:
        return {}
    itype = instance_type or group.instance_type
    return {p: n * gpus_per_instance * instances for p, n in per_gpu(itype, name).items()}
