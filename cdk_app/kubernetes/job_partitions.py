"""A job on GPU partitions (`hyperpod-kit job --mig PROFILE[:COUNT]`): the option, the checks against the team's
partition quota and reach, and what the pods ask for. Problems come back as text; job_templates raises them as
its JobOptionError (the option) and JobSpecError (the request against the config)."""

from __future__ import annotations

from cdk_app.config.model import KitConfig
from cdk_app.domain.capacity import cluster_capacity, group_types, node_partitions
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.domain.mig_profiles import MIG_CONFIG_LABEL, RESOURCE_PREFIX, profiles_of
from cdk_app.domain.reach import SHARING_DISABLED, partition_reach

# The MIG manager labels a node with its geometry's state; AWS's HyperPod CLI selects nodes whose state is
# "success" for a job on partitions (aws/sagemaker-hyperpod-cli, hyperpod-pytorch-job-template v1_1 model.py:
# {"nvidia.com/mig.config.state": "success"} if accelerator_partition_type), so no pod lands on a node whose
# GPUs are still being partitioned.
MIG_STATE_LABEL, MIG_STATE_READY = "nvidia.com/mig.config.state", "success"
# One pod's partitions come from one node: at most 7 per GPU (1g profiles) on at most 8 GPUs per instance.
MAX_PER_POD = 56


def parse_mig(text: str, given_as: str = "--mig") -> tuple[str, int]:
    """PROFILE[:COUNT], e.g. mig-1g.10gb or mig-1g.10gb:2 (partitions per pod, default 1); ValueError says what
    is wrong with the text, naming it as `given_as` (job's option, or the field of a simulated workload)."""
    profile, sep, count = text.partition(":")
    profile = profile.removeprefix(RESOURCE_PREFIX)
    if not profile.startswith("mig-"):
        raise ValueError(f"{given_as} {text!r}: give a MIG profile such as mig-1g.10gb, optionally :COUNT per pod")
    if sep and not (count.isdigit() and 1 <= int(count) <= MAX_PER_POD):
        raise ValueError(f"{given_as} {text!r}: COUNT is partitions per pod, a whole number from 1 to {MAX_PER_POD}")
    return profile, int(count) if sep else 1


def partition_request_problem(config: KitConfig, team: str, instance_type: str, mig: tuple[str, int],
                              nodes: int) -> str | None:
    """Why Kueue would never admit the job: a profile the type's GPU lacks, a team without partitions of it, or
    more partitions than the team's quota plus all it may borrow (cdk_app.domain.reach.partition_reach)."""
    profile, per_pod = mig
    offered = profiles_of(instance_type)
    if profile not in offered:
        return (f"--mig {profile}: {instance_type}'s GPU has no such MIG profile"
                + (f"; it offers {', '.join(offered)}" if offered else "; it takes no MIG partitions"))
    row = next((r for r in partition_reach(config) if r.team == team and (r.instance_type, r.profile)
                == (instance_type, profile)), None)
    if row is None or row.reach == 0:
        given = [g.name for g in config.hyperpod.instance_groups if instance_type in group_types(g)
                 and MIG_CONFIG_LABEL in g.labels]
        return (f"--mig {profile}: team {team!r} has no quota of {profile} partitions on {instance_type}, "
                "and a team borrows only what it has a quota for, so Kueue would never admit the job; "
                f"give the team an accelerator_partition entry of {profile} on {instance_type}"
                + ("" if given else f" and an {instance_type} group a {MIG_CONFIG_LABEL} geometry with it"))
    per_node = node_partitions(config, instance_type).get(profile, 0)
    if per_pod > per_node:
        return (f"--mig {profile}:{per_pod}: a pod takes its partitions from one node, and no {instance_type} node "
                f"holds more than {per_node} {profile} (its group's {MIG_CONFIG_LABEL} geometry)")
    need = nodes * per_pod
    if need > row.reach:
        why = ("no team borrows while cluster_policy.idle_resource_sharing is Disabled"
               if row.capped_by == SHARING_DISABLED else f"it may borrow {row.reach - row.quota} more")
        return (f"--nodes {nodes} x {per_pod} {profile} per pod = {need} partitions of {instance_type}, more "
                f"than team {team!r} can ever get: its quota is {row.quota} and {why}; Kueue would keep "
                "the job pending forever")
    return None


def whole_gpu_problem(config: KitConfig, instance_type: str) -> str | None:
    """Why a job on whole GPUs of the type would never start: every group that may run it partitions its GPUs
    (capacity.cluster_capacity counts no partitioned GPU as a whole one, whichever type a flexible group comes
    up as), and the device plugin offers a partitioned GPU only as its partitions."""
    capacity = cluster_capacity(config)
    if not CATALOGUE[instance_type].accelerators or capacity.get(instance_type) is None \
            or capacity[instance_type].accelerators:
        return None
    offered = node_partitions(config, instance_type)
    whole = sorted(t for t, amount in capacity.items() if amount.accelerators)
    return (f"--instance-type {instance_type}: every instance group that may run it partitions its GPUs "
            f"({MIG_CONFIG_LABEL}), so its nodes offer no whole GPU and the job's pods would never start; ask for "
            f"partitions (--mig with {', '.join(offered) or 'a profile of its geometry'})"
            + (f", or whole GPUs on {', '.join(whole)}" if whole else ", or give the type unpartitioned instances"))


def partition_limits(mig: tuple[str, int] | None) -> dict[str, int]:
    """The pod's MIG resource, as the device plugin advertises it under migStrategy mixed."""
    return {} if mig is None else {RESOURCE_PREFIX + mig[0]: mig[1]}
