"""HyperPod instance groups: types, counts, threads, deep health checks, labels and taints, and whether one of
them can give the governance stack a schedulable node in time."""

from __future__ import annotations

import difflib

from cdk_app.config.model import (
    InstanceGroup,
    KitConfig,
)
from cdk_app.config.names import (
    MAX_TAINTS,
    TRAINING_PLAN_NAME,
    label_value_problem,
    qualified_name_problem,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.domain.capacity import group_types
from cdk_app.domain.deep_health_checks import (
    DEEP_HEALTH_CHECK_HOURS,
    INSTANCE_CONNECTIVITY,
    allowed_deep_health_checks,
    connectivity_problem,
    group_deep_health_checks,
)
from cdk_app.domain.instance_types import CATALOGUE, DEVICE_RESOURCE_PREFIXES, ONE_THREAD_PER_CORE_FAMILIES, family
from cdk_app.domain.kueue_mapping import governed_teams
from cdk_app.domain.regions import hyperpod_instance_types
from cdk_app.domain.system_nodes import groups_selected_with, system_group, team_proof_taints
from cdk_app.findings import format_path
from cdk_app.validator.reporter import Reporter, duplicates, report_repeats
from cdk_app.validator.rules.names import is_sagemaker_name
from hyperpod_constructs.private.limits import SCHEDULABLE_NODE_WAIT_MINUTES


def check_instance_groups(config: KitConfig, report: Reporter) -> None:
    hyperpod = config.hyperpod
    if hyperpod.cluster_name is not None and not is_sagemaker_name(hyperpod.cluster_name):
        report.error("HPK207", ("hyperpod", "cluster_name"), f"cluster name {hyperpod.cluster_name!r} is not allowed",
                     "letters, digits and single hyphens, 1-63 characters, no hyphen at either end")
    groups = hyperpod.instance_groups
    offered = hyperpod_instance_types(config.region)
    for i, group in enumerate(groups):
        base: PathKey = ("hyperpod", "instance_groups", i)
        if not is_sagemaker_name(group.name):
            report.error("HPK202", base + ("name",), f"instance group name {group.name!r} is not allowed",
                         "letters, digits and single hyphens, 1-63 characters, no hyphen at either end")
        spec = CATALOGUE.get(group.instance_type)
        if spec is None:
            report_unknown_type(report, base + ("instance_type",), group.instance_type)
        elif offered is not None and group.instance_type not in offered:
            report_not_offered(report, base + ("instance_type",), group.instance_type, config.region, offered)
        elif group.deep_health_checks and (bare := _without_accelerators(group)):
            report.error("HPK204", base + ("deep_health_checks",),
                         f"deep health checks need GPU or Trainium instances; {bare} has neither",
                         "remove deep_health_checks from this group (or set it to [])")
        else:
            _check_connectivity(group, base, report)
        for repeated in duplicates(group.deep_health_checks or ()):
            report.error("HPK206", base + ("deep_health_checks",), f"deep health check {repeated} is listed twice",
                         "list each of InstanceStress, InstanceConnectivity once")
        plan = group.training_plan_arn.partition(":training-plan/")[2] if group.training_plan_arn else None
        if plan is not None and not TRAINING_PLAN_NAME.fullmatch(plan):
            report.error("HPK166", base + ("training_plan_arn",),
                         f"training plan name {plan[:80]!r} in training_plan_arn cannot name a training plan",
                         "a training plan name is 1-64 letters, digits and hyphens, a letter or digit at both ends "
                         "(copy the ARN from `aws sagemaker list-training-plans`)")
        if group.image_id is not None and group.image_release_version is not None:
            # botocore's ClusterInstanceGroupSpecification: ImageId is "a HyperPod public AMI", "your custom AMI" or
            # "default" (the latest system image); ImageReleaseVersion "the version of the HyperPod-managed AMI ...
            # If omitted, the latest available version is used". Neither says which wins when both are given.
            report.warning("HPK246", base + ("image_release_version",),
                           f"instance group '{group.name}' names its AMI twice: image_id {group.image_id} and "
                           f"image_release_version {group.image_release_version}; AWS documents neither which one "
                           "SageMaker uses nor that it accepts both",
                           "keep one: image_release_version to pin a version of HyperPod's AMI, or image_id for an "
                           "AMI of your own (or default)")
        if group.availability_zone_id is not None and group.availability_zone_id not in config.availability_zone_ids:
            report.error("HPK205", base + ("availability_zone_id",),
                         f"{group.availability_zone_id} is not one of the environment's availability zones",
                         f"use one of {', '.join(config.availability_zone_ids)} or add it to availability_zone_ids")
    report_repeats(report, "HPK203", [(("hyperpod", "instance_groups", i, "name"), g.name)
                                       for i, g in enumerate(groups)], "instance group")


def _check_connectivity(group: InstanceGroup, base: PathKey, report: Reporter) -> None:
    checks = group.deep_health_checks or ()
    if INSTANCE_CONNECTIVITY not in checks:
        return
    # A flexible group may come up as any of its types: each must support the check.
    types = group_types(group)
    problem = next((p for t in types if (p := connectivity_problem(t, group.count)) is not None), None)
    if problem is not None:
        allowed = [c for c in allowed_deep_health_checks(types[0], group.count)
                   if all(c in allowed_deep_health_checks(t, group.count) for t in types[1:])]
        report.error("HPK213", base + ("deep_health_checks", checks.index(INSTANCE_CONNECTIVITY)),
                     f"InstanceConnectivity needs an instance type with EFA and a group of at least 2 nodes; {problem}",
                     f"allowed here: [{', '.join(allowed)}] (remove InstanceConnectivity, or leave deep_health_checks "
                     "out for this default)")


def check_schedulable_node(config: KitConfig, report: Reporter) -> None:
    """The governance stack waits a bounded time for a Ready, schedulable HyperPod node before it installs task
    governance; a node is not schedulable until its deep health checks pass, which takes longer than the wait."""
    path: PathKey = ("hyperpod", "instance_groups")
    fails = (f"the governance stack waits at most {SCHEDULABLE_NODE_WAIT_MINUTES} minutes for a schedulable "
             "HyperPod node before it installs task governance, so its first deploy fails after the wait")
    cluster_first = ("deploy the cluster stack first and the governance stack once `kubectl get nodes -L "
                     "sagemaker.amazonaws.com/node-health-status` shows a node Schedulable")
    with_nodes = [g for g in config.hyperpod.instance_groups if g.count > 0]
    if not with_nodes:
        report.warning("HPK214", path, f"no instance group has nodes (every count is 0): {fails}",
                       f"give a group count 1 or more (a small CPU group is schedulable soonest), or {cluster_first}")
    elif all(_closed_to_kueue(g) for g in with_nodes):
        shown = "; ".join(f"{g.name[:63]} {_closed_to_kueue(g)}" for g in with_nodes[:3]) + (
            "; ..." if len(with_nodes) > 3 else "")
        report.warning("HPK214", path,
                       f"no instance group with nodes can take Kueue's controller soon ({shown}): {fails}",
                       f"add a small untainted group without deep health checks (e.g. ml.m5.xlarge, count 1), or "
                       f"{cluster_first}")


def _closed_to_kueue(group: InstanceGroup) -> str | None:
    """Why the group's nodes cannot take a pod without tolerations soon after they join - the node the installer's
    wait looks for (helm_release_handler node_refusal: Schedulable, Ready, untainted) - or None."""
    if group_deep_health_checks(group):
        return f"runs deep health checks, which keep new nodes unschedulable for about {DEEP_HEALTH_CHECK_HOURS} hours"
    repelling = [t for t in group.taints if t.effect in ("NoSchedule", "NoExecute")]
    if repelling:
        return "is tainted " + ", ".join(f"{t.key}={t.value or ''}:{t.effect}" for t in repelling)
    return None


def check_threads(config: KitConfig, report: Reporter) -> None:
    for i, group in enumerate(config.hyperpod.instance_groups):
        # A flexible group may come up as any of its types: each must take the setting.
        single = next((t for t in group_types(group) if family(t) in ONE_THREAD_PER_CORE_FAMILIES), None)
        if group.threads_per_core == 2 and single is not None:
            cpu = "NVIDIA Grace" if family(single) == "p6e-gb200" else "AWS Graviton"
            report.error("HPK212", ("hyperpod", "instance_groups", i, "threads_per_core"),
                         f"{single} runs one thread per core ({cpu}); 2 is not possible",
                         "remove threads_per_core or set it to 1")


def check_kubernetes_labels(config: KitConfig, report: Reporter) -> None:
    for i, group in enumerate(config.hyperpod.instance_groups):
        base: PathKey = ("hyperpod", "instance_groups", i)
        for key, value in group.labels.items():
            why = qualified_name_problem(key)
            if why:
                report.error("HPK211", base + ("labels", key), f"label key {key[:80]!r} is not allowed: {why}",
                             "a Kubernetes label key is [prefix/]name, e.g. example.com/team or workload")
            why = label_value_problem(value)
            if why:
                report.error("HPK211", base + ("labels", key), f"label value {value[:80]!r} of {key[:80]!r} is not allowed",
                             f"a Kubernetes label value is {why}")
        _check_taints(group.taints, base, report)
        _check_taint_teams(config, group.taints, base, report)


def _check_taint_teams(config: KitConfig, taints: tuple, base: PathKey, report: Reporter) -> None:
    """taints[].teams names governed teams (the tolerations guardrail binds no other), and only on taints the
    guardrail keeps: every pod asking for a device tolerates a taint keyed by it (ExtendedResourceToleration)."""
    known = governed_teams(config)
    for j, taint in enumerate(taints):
        if taint.teams and taint.key.startswith(DEVICE_RESOURCE_PREFIXES):
            report.error("HPK168", base + ("taints", j, "teams"), f"taint {taint.key[:80]!r} is keyed by a device "
                         "resource: the API server adds its toleration to every pod that asks for the device, "
                         "so teams cannot narrow it", "remove teams, or taint the group with a key of your own")
        for k, team in enumerate(taint.teams):
            if team not in known:
                hint = difflib.get_close_matches(team, known, n=1)
                report.error("HPK168", base + ("taints", j, "teams", k), f"taint {taint.key[:80]!r} lists team "
                             f"{team[:80]!r}, which the config does not have",
                             f"name one of teams[].name or the shared pool{f' (did you mean {hint[0]!r}?)' if hint else ''}")


def _check_taints(taints: tuple, base: PathKey, report: Reporter) -> None:
    """Each taint as CloudFormation's ClusterKubernetesTaint takes it, and the list as Kubernetes takes it."""
    if len(taints) > MAX_TAINTS:
        report.error("HPK163", base + ("taints", MAX_TAINTS),
                     f"{len(taints)} taints on one instance group; AWS::SageMaker::Cluster takes at most {MAX_TAINTS}",
                     f"keep at most {MAX_TAINTS} taints (one taint can keep every other workload off the group)")
    first: dict[tuple[str, str], int] = {}
    for j, taint in enumerate(taints):
        why = qualified_name_problem(taint.key)
        if why:
            report.error("HPK211", base + ("taints", j, "key"), f"taint key {taint.key[:80]!r} is not allowed: {why}",
                         "a Kubernetes taint key is [prefix/]name, e.g. nvidia.com/gpu")
        if taint.value == "":
            report.error("HPK162", base + ("taints", j, "value"), f"taint {taint.key[:80]!r} has an empty value, "
                         "which AWS::SageMaker::Cluster refuses (Value: at least 1 character)",
                         "leave value out for a taint without a value (Kubernetes reads both the same)")
        why = label_value_problem(taint.value or "")
        if why:
            report.error("HPK211", base + ("taints", j, "value"), f"taint value {taint.value[:80]!r} is not allowed",
                         f"a Kubernetes taint value is {why}")
        pair = (taint.key, taint.effect)
        if pair in first:
            report.error("HPK164", base + ("taints", j), f"taint {taint.key[:80]!r} with effect {taint.effect} is "
                         f"listed twice (first at {format_path(base + ('taints', first[pair]))}); Kubernetes "
                         "refuses a node whose taints repeat a key and effect pair",
                         "keep one taint per key and effect (its value is the one the taint matches)")
        else:
            first[pair] = j


_BY_LOWER_CASE = {name.lower(): name for name in CATALOGUE}


# Distinct unknown types that get a fuzzy did-you-mean; beyond this, suggestions stop, so that a file of many
# thousands of unknown types is still checked in linear time (each fuzzy match compares with the catalogue).
MAX_FUZZY_SUGGESTIONS = 50


def _without_accelerators(group: InstanceGroup) -> str | None:
    """The first known type of the group (a flexible group's fallbacks included) without GPUs or Trainium."""
    return next((t for t in group_types(group) if t in CATALOGUE and not CATALOGUE[t].has_accelerators), None)


def report_not_offered(report: Reporter, path: PathKey, instance_type: str, region: str, offered: frozenset[str]) -> None:
    family = instance_type.rsplit(".", 1)[0] + "."
    alternatives = sorted(t for t in offered if t.startswith(family))
    report.error("HPK210", path, f"{instance_type} is not offered by HyperPod in {region}",
                 f"sizes of this family there: {', '.join(alternatives)}" if alternatives
                 else f"no {family}* sizes in {region}; pick another family or region")


def report_unknown_type(report: Reporter, path: PathKey, instance_type: str) -> None:
    near = _suggestions(report, instance_type)
    lead = f"did you mean {near}? " if near else ""
    report.unreadable.append(path)
    report.error("HPK201", path, f"{instance_type[:80]!r} is not a SageMaker HyperPod instance type",
                 f"{lead}`hyperpod-kit instances` lists the HyperPod types, e.g. ml.p5.48xlarge "
                 "(docs/reference/instance-catalogue.md)")


def _suggestions(report: Reporter, instance_type: str) -> str | None:
    cache = report.suggestions
    if instance_type not in cache:
        exact_case = _BY_LOWER_CASE.get(instance_type.strip().lower())
        if exact_case is not None or len(cache) >= MAX_FUZZY_SUGGESTIONS:
            cache[instance_type] = exact_case
        else:
            near = difflib.get_close_matches(instance_type.lower()[:40], _BY_LOWER_CASE, n=1, cutoff=0.8)
            cache[instance_type] = _BY_LOWER_CASE[near[0]] if near else None
    return cache[instance_type]


# What is at stake when team pods may share the system nodes (ClusterRoles of the pinned chart, a00b22d).
_OPERATOR_RIGHTS = ("the training and MPI operators run there with rights to create pods, exec into pods and list "
                    "Secrets in every namespace, so a team pod that gets root on such a node gets those rights")


def check_system_instance_group(config: KitConfig, report: Reporter) -> None:
    """hyperpod.system_instance_group: a group that exists, that its labels select alone (the operators' node
    selector), that a taint keeps every team off, that has nodes, and whose type the teams do not count on."""
    name = config.hyperpod.system_instance_group
    if name is None:
        return
    path: PathKey = ("hyperpod", "system_instance_group")
    group = system_group(config)
    names = [g.name for g in config.hyperpod.instance_groups]
    if group is None:
        hint = difflib.get_close_matches(name, names, n=1)
        report.error("HPK215", path, f"no instance group is called {name[:80]!r}, so the training and MPI operators "
                     "would wait for nodes that never come and no PyTorchJob or MPIJob would start",
                     f"name one of {', '.join(n[:63] for n in names[:10])}{', ...' if len(names) > 10 else ''}"
                     + (f" (did you mean {hint[0]!r}?)" if hint else ""))
        return
    i = names.index(name)
    base: PathKey = ("hyperpod", "instance_groups", i)
    also = groups_selected_with(config, group)
    if not group.labels or also:
        why = "has no labels" if not group.labels else (
            f"has labels that group(s) {', '.join(a[:63] for a in also[:3])} also carry")
        report.error("HPK216", base + ("labels",), f"system group {name[:63]!r} {why}: the operators' node selector "
                     "is the group's labels, so they could run on other groups' nodes, next to team pods",
                     "give the group a label no other group has, e.g. labels: {node-role: system}")
    kept_off = team_proof_taints(group)
    if not kept_off:
        report.error("HPK217", base + ("taints",), f"system group {name[:63]!r} has no NoSchedule or NoExecute taint "
                     f"that lists no team, so team pods may run on its nodes: {_OPERATOR_RIGHTS}",
                     "add a taint without teams, e.g. taints: [{key: CriticalAddonsOnly, value: \"true\", "
                     "effect: NoSchedule}], and keep an untainted group for Kueue's controller and CoreDNS")
    if group.count == 0:
        report.warning("HPK218", base + ("count",), f"system group {name[:63]!r} has no nodes: the training and "
                       "MPI operators run only there, so no PyTorchJob or MPIJob starts until it has",
                       "give it count 1 or more (2 keeps the operators running while HyperPod replaces a node)")
    if kept_off:  # untainted, team pods may use the nodes anyway (HPK217 says what that costs)
        _check_system_type_quota(config, group, report)


def _check_system_type_quota(config: KitConfig, group: InstanceGroup, report: Reporter) -> None:
    """The kit leaves the system group out of the capacity (cdk_app.domain.capacity.team_groups), so a quota on
    a type only it has is over capacity (HPK501). Where other groups share one of its types, SageMaker still
    counts the system nodes in the type's unallocated capacity that idle sharing lends ("unallocated resources are
    automatically calculated", botocore's IdleResourceSharing): a team pod cannot tolerate their taint, so a
    workload borrowing that share stays Pending. A flexible system group may come up as any of its types."""
    if config.cluster_policy.idle_resource_sharing != "Enabled":
        return
    shared = {t for t in group_types(group)
              if any(g is not group and t in group_types(g) for g in config.hyperpod.instance_groups)}
    for i, team in enumerate(config.teams):
        for j, entry in enumerate(team.quota):
            if entry.instance_type in shared:
                which = "the instance type" if entry.instance_type == group.instance_type else "a fallback type"
                report.warning("HPK219", ("teams", i, "quota", j, "instance_type"),
                               f"team {team.name[:40]!r} has a quota for {entry.instance_type}, {which} of "
                               f"the system group {group.name[:63]!r}: SageMaker counts the system nodes in that "
                               "type's unallocated capacity, which idle sharing lends, but team pods cannot tolerate "
                               "their taint, so a workload borrowing that share stays Pending",
                               "give the system group an instance type no team group has (teams borrow only types "
                               "they have a quota for)")
                break
