"""`hyperpod-kit show CONFIG`: what an environment is, or would be once deployed, in one view - its stacks, the
EKS and HyperPod cluster names, the instance groups with the labels and taints their nodes carry, the file
systems, the teams (namespace, queue, stack, quota and reach), the priority classes and the AWS Batch queues.

Nothing is computed here: stack names and descriptions come from the stack layout the app builds
(cdk_app.stacks.layout), names from cdk_app.config.names, topology labels from the instance catalogue, and the
capacity, reach and Batch tables are validate's own (the report and its table)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from cdk_app.cli.report_table import fractional_reach_text, render_table
from cdk_app.config.model import KitConfig
from cdk_app.config.names import hyperpod_cluster_name, local_queue, team_cluster_queue, team_namespace
from cdk_app.domain.instance_types import family
from cdk_app.kubernetes.guardrails.team_scope import allowed_priority_classes
from cdk_app.kubernetes.team_volumes import volume_name
from cdk_app.kubernetes.topology import HEALTH_LABEL, INSTANCE_TYPE_LABELS, type_topology_labels
from cdk_app.stacks.layout import CLUSTER, GOVERNANCE, stack_description, stack_name, stack_suffixes, team_layout
from cdk_app.support.text_table import aligned, printable
from cdk_app.validator.report import Report, check_file

# The EKS cluster's name is CloudFormation's to choose at the first deploy (the kit gives none, so a replacement
# never collides with the old cluster's name); the cluster stack prints it.
EKS_NAME_OUTPUT = "EksClusterName"


def stacks(config: KitConfig) -> list[dict[str, Any]]:
    layout = team_layout(config)
    out = []
    for suffix in stack_suffixes(config, layout):
        teams = [t.name for t in layout.stacks.get(suffix, ())]
        out.append({"name": stack_name(config, suffix), "holds": stack_description(config, suffix, layout)
                    .removeprefix(f"hyperpod-kit {config.environment}: "), "teams": teams})
    return out


def instance_groups(config: KitConfig) -> list[dict[str, Any]]:
    # Every field that says what capacity a group is (flexible, Spot, autoscaled) and which AMI it runs:
    # capacity_type null is none written (On-Demand, as HyperPod had before CapacityRequirements).
    return [{"name": g.name, "instance_type": g.instance_type, "fallback_instance_types": list(g.fallback_instance_types),
             "count": g.count, "min_count": g.min_count, "max_count": g.max_count, "capacity_type": g.capacity_type,
             "image_id": g.image_id, "image_release_version": g.image_release_version,
             "scheduled_update": g.scheduled_update.schedule_expression if g.scheduled_update else None,
             "auto_patch": g.auto_patch.patching_strategy if g.auto_patch else None,
             "availability_zone_id": g.availability_zone_id, "labels": dict(g.labels),
             "taints": [{"key": t.key, "value": t.value, "effect": t.effect, "teams": list(t.teams)} for t in g.taints],
             "topology_labels": type_topology_labels(g.instance_type)} for g in config.hyperpod.instance_groups]


def file_systems(config: KitConfig) -> list[dict[str, Any]]:
    if config.storage is None:
        return []
    return [{"name": fs.name, "team": fs.team, "deployment_type": fs.deployment_type,
             "storage_capacity_gib": fs.storage_capacity_gib, "availability_zone_id": fs.availability_zone_id,
             "claim": fs.name, "volume": volume_name(fs.team, fs.name), "mount_path": fs.mount_path,
             "kept_when_removed": True} for fs in config.storage.file_systems]


def teams(config: KitConfig, report: Report) -> list[dict[str, Any]]:
    layout = team_layout(config)
    return [{"name": t.name, "enabled": t.enabled, "namespace": team_namespace(t.name),
             "local_queue": local_queue(t.name), "cluster_queue": team_cluster_queue(t.name),
             "stack": stack_name(config, layout.stack_of(t.name)), "sharing_strategy": t.sharing_strategy,
             "fair_share_weight": t.fair_share_weight, "priority_classes": allowed_priority_classes(config, t.name),
             "default_priority_class": t.default_priority_class, "has_role": bool(t.principals),
             "reach": [row.to_json() for row in report.reach if row.team == t.name]} for t in config.teams]


def shared_pool(config: KitConfig) -> dict[str, Any] | None:
    """The shared pool: an allocation with a namespace and queue of its own, not a team of the config."""
    pool = config.shared_pool
    if pool is None:
        return None
    return {"name": pool.name, "namespace": team_namespace(pool.name), "local_queue": local_queue(pool.name),
            "stack": stack_name(config, GOVERNANCE), "sharing_strategy": pool.sharing_strategy, "fair_share_weight": pool.fair_share_weight}


def environment_view(config: KitConfig, report: Report) -> dict[str, Any]:
    """The environment as JSON: every part `show` prints, and validate's tables and findings."""
    view: dict[str, Any] = {
        "environment": config.environment, "file": report.file, "account": config.account, "region": config.region,
        "availability_zone_ids": list(config.availability_zone_ids), "stacks": stacks(config),
        "eks_cluster": None, "hyperpod_cluster": None, "instance_groups": [], "file_systems": [], "teams": [],
        "shared_pool": None,
        "priority_classes": [], "capacity": [row.to_json() for row in report.capacity],
        "reach_note": fractional_reach_text(report.reach),
        "batch_queues": [row.to_json() for row in report.batch_queues],
        "warnings": [f.to_json() for f in report.warnings]}
    if config.hyperpod is not None:
        view |= {
            "eks_cluster": {"name": None, "named_at_deploy_by": "CloudFormation",
                            "output": f"{stack_name(config, CLUSTER)}.{EKS_NAME_OUTPUT}",
                            "kubernetes_version": config.eks.kubernetes_version,
                            "endpoint_access": config.eks.endpoint_access},
            "hyperpod_cluster": {"name": hyperpod_cluster_name(config), "node_recovery": config.hyperpod.node_recovery},
            "instance_groups": instance_groups(config), "file_systems": file_systems(config),
            "teams": teams(config, report), "shared_pool": shared_pool(config),
            "priority_classes": [{"name": c.name, "weight": c.weight} for c in config.cluster_policy.priority_classes]}
    return view


def _types(group: dict[str, Any]) -> str:
    """The type, then the fallback types in HyperPod's order of preference."""
    return ", then ".join([group["instance_type"], *group["fallback_instance_types"]])


def _count(group: dict[str, Any]) -> str:
    if group["max_count"] is not None:
        return f"{group['count']} (autoscaled up to max_count {group['max_count']})"
    if group["min_count"] is not None:
        return f"{group['count']} (InService from min_count {group['min_count']})"
    return str(group["count"])


def _ami(group: dict[str, Any]) -> str:
    parts = [group["image_id"] or "SageMaker's default"]
    if group["image_release_version"]:
        parts.append(f"release {group['image_release_version']}")
    if group["scheduled_update"]:
        parts.append(f"updates {group['scheduled_update']}")
    if group["auto_patch"]:
        parts.append(f"patches {group['auto_patch']}")
    return ", ".join(parts)


def _labels(group: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in group["labels"].items()) or "-"


def _taints(group: dict[str, Any]) -> str:
    return ", ".join(f"{t['key']}{'=' + t['value'] if t['value'] else ''}:{t['effect']}" for t in group["taints"]) or "-"


def _topology(group: dict[str, Any]) -> str:
    labels = group["topology_labels"]
    if not labels:
        return f"none ({family(group['instance_type'])} has no EC2 instance topology)"
    return f"{labels[0]} to -{len(labels)}"


def render(view: dict[str, Any], report: Report) -> str:
    env = view["environment"]
    lines = [f"environment {env} ({printable(view['file'])}): account {view['account']}, region {view['region']}, "
             f"zones {', '.join(view['availability_zone_ids']) or 'none listed'}",
             f"stacks, in deploy order (npx cdk deploy -c env={env} --all):"]
    lines += aligned([(s["name"], s["holds"]) for s in view["stacks"]], indent="  ")
    if view["hyperpod_cluster"] is not None:
        eks, hyperpod = view["eks_cluster"], view["hyperpod_cluster"]
        lines += ["clusters:",
                  f"  EKS       named by CloudFormation at the first deploy (output {eks['output']}); Kubernetes "
                  f"{eks['kubernetes_version']}, endpoint {eks['endpoint_access']}",
                  f"  HyperPod  {hyperpod['name']} (hyperpod.cluster_name, else hyperpod-<environment>); node recovery "
                  f"{hyperpod['node_recovery']}",
                  f"instance groups (each node also carries {INSTANCE_TYPE_LABELS[0]} and {HEALTH_LABEL}):"]
        lines += aligned([("name", "instance types", "count", "capacity", "zone", "AMI", "labels", "taints",
                           "topology labels"),
                          *((g["name"], _types(g), _count(g), g["capacity_type"] or "OnDemand",
                             g["availability_zone_id"] or "-", _ami(g), _labels(g), _taints(g), _topology(g))
                            for g in view["instance_groups"])], indent="  ")
        if view["file_systems"]:
            lines.append("file systems (FSx for Lustre; each is a claim of its team's namespace, kept in the account "
                         "when it leaves the config):")
            lines += aligned([("name", "team", "type", "GiB", "zone", "mount path"),
                              *((f["name"], f["team"], f["deployment_type"], f["storage_capacity_gib"],
                                 f["availability_zone_id"] or "-", f["mount_path"] or "-") for f in view["file_systems"])],
                             indent="  ")
        lines.append("teams (hyperpod-kit team CONFIG NAME shows one as its members see it):")
        lines += aligned([("team", "namespace", "queue", "stack", "priority classes", "IAM role"),
                          *((t["name"] + ("" if t["enabled"] else " (disabled)"), t["namespace"], t["local_queue"],
                             t["stack"], ", ".join(t["priority_classes"]) or "-", "yes" if t["has_role"] else "no")
                            for t in view["teams"]),
                          *((f"{p['name']} (shared pool)", p["namespace"], p["local_queue"], p["stack"], "-", "no")
                            for p in [view["shared_pool"]] if p is not None)], indent="  ")
        classes = view["priority_classes"]
        lines.append("priority classes: " + (", ".join(f"{c['name']} (weight {c['weight']})" for c in classes)
                     if classes else "none - first come, first served"))
    # validate's tables, findings and verdict, under the file line this view has already printed
    # validate's tables, under a heading of their own (issue 30: they ran on from the priority classes line)
    lines.append("capacity and team reach (as validate prints them):")
    lines += render_table(report).split("\n")[1:]
    return "\n".join(lines)


@click.command("show")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def show(config_path: Path, output_format: str) -> None:
    """What environment CONFIG is, or would create, before anything is deployed: its stacks in deploy order,
    the EKS and HyperPod cluster names, the instance groups (types, count, capacity, zone, AMI, labels, taints, topology labels),
    the file systems, the teams (namespace, queue, stack, priority classes), the priority classes, and validate's
    capacity, team reach and AWS Batch tables. Needs no AWS account.

    Exit status: 0 shown, 1 the config has errors (shown as validate shows them), 2 the file cannot be read or
    bad usage.
    """
    report = check_file(config_path, str(config_path))
    if report.loaded is None or report.errors:
        click.echo(render_table(report), err=True)
        sys.exit(report.exit_code)
    view = environment_view(report.loaded.config, report)
    click.echo(json.dumps(view, indent=2) if output_format == "json" else render(view, report))
