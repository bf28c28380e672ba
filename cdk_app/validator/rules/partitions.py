"""GPU partitions and absolute borrow limits: the MIG geometry each instance group's label sets, the MIG
profiles of the teams' quotas against it, and the teams' absolute borrow limits."""

from __future__ import annotations

from cdk_app.config.model import KitConfig, QuotaEntry
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.capacity import (
    cluster_capacity,
    config_shares,
    group_types,
    partition_capacity,
    partition_reservations,
    partitioned_gpus,
    reservations,
)
from cdk_app.domain.instance_types import CATALOGUE
from cdk_app.domain.mig_profiles import (
    DISABLED,
    INSTANCE_GPUS,
    MIG_CONFIG_LABEL,
    geometry_problem,
    geometry_with,
    profiles_of,
)
from cdk_app.domain.reach import sharing_enabled
from cdk_app.validator.reporter import Reporter


def check_partitions(config: KitConfig, report: Reporter) -> None:
    _check_geometries(config, report)
    _check_profiles(config, report)
    _check_partition_capacity(config, report)
    _check_absolute_limits(config, report)


def _check_geometries(config: KitConfig, report: Reporter) -> None:
    partitioned = []
    for i, group in enumerate(config.hyperpod.instance_groups):
        name = group.labels.get(MIG_CONFIG_LABEL)
        if name is None:
            continue
        path: PathKey = ("hyperpod", "instance_groups", i, "labels", MIG_CONFIG_LABEL)
        # A flexible group may come up as any of its types, and the label is on every node: it must be a
        # geometry of each type's GPU.
        types = group_types(group)
        failing = next(((t, why) for t in types if (why := geometry_problem(t, name)) is not None), None)
        if failing is not None:
            itype, why = failing
            whose = f"its {itype} GPUs" if len(types) > 1 else "its GPUs"
            report.error("HPK224", path, f"{MIG_CONFIG_LABEL} {name[:80]!r} of group '{group.name}' is no MIG "
                                         f"geometry of {whose}: {why}", _geometry_hint(types))
        elif name != DISABLED:
            partitioned.append(path)
    if partitioned:
        # AWS's "Node lifecycle and labels" page: the GPU operator (its MIG manager) applies the label's
        # geometry. The HyperPod chart's gpu-operator component needs NVIDIA's gpu-operator chart, a remote
        # chart the kit does not pin, so the kit cannot install it (HPK222's matter).
        report.warning("HPK225", partitioned[0],
                       f"the kit installs no MIG manager: {MIG_CONFIG_LABEL} partitions the GPUs only where the "
                       "NVIDIA GPU operator runs on the cluster",
                       "install the NVIDIA GPU operator - the HyperPod chart's gpu-operator component - before "
                       "teams use the partitions; until then the nodes offer whole GPUs")


def _geometry_hint(types: tuple[str, ...]) -> str:
    """A geometry every type of the group takes, else how to get there."""
    for profile in profiles_of(types[0]):
        example = geometry_with(types[0], profile)
        if all(geometry_problem(t, example) is None for t in types):
            return f"name one, e.g. {example} or all-disabled"
    if len(types) > 1:
        return ("no one geometry suits every type of this flexible group: use all-disabled, or give the MIG "
                "type a group of its own")
    return f"remove the label: MIG needs one of the types {', '.join(_mig_types())}"


def _mig_types() -> list[str]:
    return sorted(INSTANCE_GPUS)


def _partition_entries(config: KitConfig):
    """(path of the entry, entry) of every quota and absolute-limit entry with an accelerator_partition."""
    for i, team in enumerate(config.teams):
        for field in ("quota", "absolute_borrow_limits"):
            for j, entry in enumerate(getattr(team, field)):
                if entry.accelerator_partition is not None:
                    yield ("teams", i, field, j), entry


def _check_profiles(config: KitConfig, report: Reporter) -> None:
    for path, entry in _partition_entries(config):
        offered = profiles_of(entry.instance_type)
        profile = entry.accelerator_partition.type
        if profile not in offered:
            report.error("HPK430", path + ("accelerator_partition", "type"),
                         f"{entry.instance_type}'s GPU has no MIG profile {profile}" if offered
                         else f"{entry.instance_type} has no GPU that HyperPod partitions with MIG",
                         f"use one of: {', '.join(offered)}" if offered
                         else f"MIG partitions exist on {', '.join(_mig_types())}")


def _check_partition_capacity(config: KitConfig, report: Reporter) -> None:
    """Cumulative partition quota against what the partitioned groups give, per instance type and profile."""
    capacity = partition_capacity(config)
    shares: dict[tuple[str, str], list[tuple[str, int, PathKey]]] = {}
    for i, team in enumerate(config.teams):
        for j, entry in enumerate(team.quota):
            if entry.accelerator_partition is not None:
                key = (entry.instance_type, entry.accelerator_partition.type)
                if key[1] in profiles_of(key[0]):  # else HPK430
                    count = partition_reservations((entry,))[key]
                    shares.setdefault(key, []).append((team.name, count, ("teams", i, "quota", j)))
    for (itype, profile), entries in shares.items():
        total, has = sum(n for _, n, _ in entries), capacity.get((itype, profile), 0)
        if total <= has:
            continue
        given = (f"the cluster's {itype} groups give {has}" if has
                 else f"no {itype} instance group's {MIG_CONFIG_LABEL} label partitions its GPUs into {profile}")
        listed = ", ".join(f"{name} {n}" for name, n, _ in entries)
        for _, n, path in entries:
            if n:
                report.error("HPK533", path + ("accelerator_partition", "count"),
                             f"teams reserve {total} {profile} partitions of {itype} but {given} "
                             f"(shares: {listed}; this entry {n})",
                             f"lower the partition quotas by {total - has}, or give more {itype} GPUs a geometry "
                             f"with {profile} ({MIG_CONFIG_LABEL}, e.g. {geometry_with(itype, profile)})")


def _check_absolute_limits(config: KitConfig, report: Reporter) -> None:
    for i, team in enumerate(config.teams):
        if not team.absolute_borrow_limits:
            continue
        base: PathKey = ("teams", i, "absolute_borrow_limits")
        if team.sharing_strategy != "LendAndBorrow":
            report.error("HPK431", base, f"absolute_borrow_limits have no effect with sharing_strategy "
                                         f"{team.sharing_strategy}: such a team never borrows",
                         "remove absolute_borrow_limits, or set sharing_strategy: LendAndBorrow")
            continue
        held = {entry.instance_type for entry in team.quota}
        for j, entry in enumerate(team.absolute_borrow_limits):
            if entry.instance_type not in held and entry.instance_type in CATALOGUE:  # an unknown type: HPK201
                report.warning("HPK432", base + (j, "instance_type"),
                               f"team '{team.name}' has no quota on {entry.instance_type}, so it borrows none of it "
                               "whatever this limit says: a team borrows only on instance types it has a quota for",
                               f"give the team a quota on {entry.instance_type}, or remove the entry")
        _check_limits_against_capacity(config, team.absolute_borrow_limits, base, report)
        if not sharing_enabled(config):
            report.warning("HPK433", base, "no team borrows while cluster_policy.idle_resource_sharing is "
                                           "Disabled, so these limits have no effect",
                           "enable idle_resource_sharing, or remove absolute_borrow_limits")


def _check_limits_against_capacity(config: KitConfig, limits: tuple[QuotaEntry, ...], base: PathKey, report: Reporter) -> None:
    """A limit held to what quotas are held to: whole GPUs only where the type has unpartitioned ones (HPK501's
    capacity, cluster_capacity), partitions only of a profile some group's geometry gives (HPK533's)."""
    capacity, partitions = cluster_capacity(config), partition_capacity(config)
    partitioned = partitioned_gpus(config.hyperpod.instance_groups)
    for j, entry in enumerate(limits):
        itype, partition = entry.instance_type, entry.accelerator_partition
        whole = reservations((entry,), config_shares(config)).get(itype)
        if (whole is not None and whole.accelerators and itype in partitioned
                and capacity.get(itype) is not None and capacity[itype].accelerators == 0):
            report.error("HPK434", base + (j, "count" if entry.count is not None else "accelerators"),
                         f"every {itype} GPU is partitioned by its group's {MIG_CONFIG_LABEL} label, so there is no "
                         f"whole GPU to borrow and this limit of {whole.accelerators} whole GPU(s) cannot apply",
                         "limit the partitions instead (accelerator_partition), or leave some of the type's GPUs "
                         "unpartitioned")
        if (partition is not None and partition.count and partition.type in profiles_of(itype)  # else HPK430
                and not partitions.get((itype, partition.type))):
            report.error("HPK435", base + (j, "accelerator_partition", "type"),
                         f"no {itype} instance group's {MIG_CONFIG_LABEL} label partitions its GPUs into "
                         f"{partition.type}, so there is none of it to borrow",
                         f"give a group of {itype} a geometry with {partition.type}, or remove the entry")
