"""`hyperpod-kit team CONFIG NAME`: what a data scientist of one team needs to submit work - its namespace and
queue, the priority classes it may name, its quota and how far borrowing takes it, and its AWS Batch queues.

Every figure comes from the functions `validate` and `job` use: the reach rule (cdk_app.domain.reach), the
Kueue names (cdk_app.config.names), the priority classes the guardrails admit (team_scope) and the Batch
shares (cdk_app.domain.batch_shares); nothing is computed here."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from cdk_app.cli.report_table import fractional_reach_note, limited_by, resource_amount
from cdk_app.config.model import KitConfig
from cdk_app.config.names import local_queue, team_cluster_queue, team_namespace
from cdk_app.domain.batch_shares import (
    DEFAULT_WEIGHT_FACTOR,
    percent_text,
    queue_fair_shares,
    quota_share_reach,
    team_named,
    team_queues,
)
from cdk_app.domain.capacity import quota_backing
from cdk_app.domain.reach import LENDING, TeamReach, team_reach
from cdk_app.kubernetes.guardrails.team_scope import allowed_priority_classes, priority_label
from cdk_app.kubernetes.topology import type_topology_labels
from cdk_app.support.text_table import aligned, printable


def hyperpod_part(config: KitConfig, name: str, rows: list[TeamReach]) -> dict[str, Any] | None:
    """The HyperPod side of team `name`, with its rows of the reach table (none for a disabled team)."""
    team = next((t for t in config.teams if t.name == name), None)
    if team is None or config.hyperpod is None:
        return None
    backing = quota_backing(config)
    classes = allowed_priority_classes(config, name)
    return {
        "enabled": team.enabled,
        "namespace": team_namespace(name),
        "local_queue": local_queue(name),
        "cluster_queue": team_cluster_queue(name),
        "priority_classes": classes,
        "priority_class_weights": {c.name: c.weight for c in config.cluster_policy.priority_classes
                                   if c.name in classes},
        "preempt_team_tasks": team.preempt_team_tasks,
        "default_priority_class": team.default_priority_class,
        "priority_class_required": config.cluster_policy.require_priority_class,
        "sharing_strategy": team.sharing_strategy,
        "lends_idle_quota": team.sharing_strategy in LENDING,
        "fair_share_weight": team.fair_share_weight,
        "quota": [{"instance_type": row.instance_type, "quota": row.quota.to_json(), "reach": row.reach.to_json(),
                   "borrow_limit": row.borrow_limit, "capped_by": row.capped_by,
                   "guaranteed": backing.get(row.instance_type, True),
                   "topology_labels": type_topology_labels(row.instance_type)} for row in rows],
    }


def batch_part(config: KitConfig, name: str) -> dict[str, Any] | None:
    team = team_named(config.batch, name) if config.batch is not None else None
    if team is None:
        return None
    queues = team_queues(config.batch, team)
    reach = [r for r in quota_share_reach(config.batch, queues.quota_share) if r.team == name] \
        if queues.quota_share else []
    return {
        "fair_share_queues": list(queues.fair_share),
        "share_identifier": team.share_identifier if queues.fair_share else None,
        "weight_factor": (team.weight_factor or DEFAULT_WEIGHT_FACTOR) if queues.fair_share else None,
        # Per fair-share queue, the share identifier's part while every identifier on it has jobs waiting.
        "fair_share_percent": {queue: round(float(queue_fair_shares(config.batch, queue)[team.share_identifier]) * 100, 2)
                               for queue in queues.fair_share if team.share_identifier is not None},
        "quota_share_queue": queues.quota_share,
        "quota": [{"instance_type": r.unit, "quota": r.quota, "reach": r.reach} for r in reach],
        "fifo_queues": list(queues.fifo),
        "execution_role_arn": team.execution_role_arn,
        "max_priority": team.max_priority,
    }


def fair_share_weight_note(weight: int, fair_share: bool) -> str:
    """What the weight does, as the kit maps it: FairShareWeight becomes the team's Kueue fairSharing.weight
    unchanged (cdk_app.domain.kueue_mapping), and Kueue reads a weight of 0 as an infinite share value (its
    FairSharing API: "always at disadvantage"). Its own quota is not affected either way."""
    if not fair_share:
        return "(unused: cluster_policy.fair_share is Disabled, idle compute goes first come, first served)"
    if weight == 0:
        return ("(the default and the lowest: the kit gives Kueue the weight as it is, and Kueue puts a team of "
                "weight 0 last whenever teams compete for idle compute - it borrows last and what it borrows is "
                "preempted first; its own quota is not affected)")
    return "(0-100: a higher weight gets idle compute sooner when teams compete; its own quota is not affected)"


def priority_weight_note(preempt_team_tasks: str) -> str:
    """What a class's weight does for the team, as the kit maps it: the weight is the Kueue WorkloadPriorityClass
    value, which orders the team's ClusterQueue, and preempt_team_tasks is its withinClusterQueue preemption
    (cdk_app.domain.kueue_mapping)."""
    preempts = ("a waiting job may preempt the team's own running jobs of a lower weight to fit its quota"
                if preempt_team_tasks == "LowerPriority" else
                "it never preempts the team's own running jobs (preempt_team_tasks: Never)")
    return f"a higher weight is admitted first from the team's queue, and {preempts}"


def render(config: KitConfig, name: str, hyperpod: dict[str, Any] | None, rows: list[TeamReach],
           batch: dict[str, Any] | None) -> str:
    lines = [f"team {printable(name)} of environment {config.environment}"]
    if hyperpod is not None:
        default = hyperpod["default_priority_class"]
        weights = hyperpod["priority_class_weights"]
        classes = ", ".join(f"{c} {weights[c]}" for c in hyperpod["priority_classes"]) or "none (first come, first served)"
        lines += [
            "  HyperPod (hyperpod-kit job --team " + printable(name) + ")",
            f"    namespace {hyperpod['namespace']}, queue {hyperpod['local_queue']} "
            f"(label kueue.x-k8s.io/queue-name; hyperpod-kit job writes it)",
            f"    priority classes (weight): {classes}; default: "
            + (f"{default} (label {priority_label(default)})" if default else
               "none - " + ("--priority is required" if hyperpod["priority_class_required"] else
                            "without --priority a job runs at the lowest priority")),
            *([f"    {priority_weight_note(hyperpod['preempt_team_tasks'])}"] if weights else []),
            f"    sharing: {hyperpod['sharing_strategy']} - "
            + ("lends its idle quota to other teams" if hyperpod["lends_idle_quota"] else "lends nothing")
            + f"; fair-share weight {hyperpod['fair_share_weight']} "
            + fair_share_weight_note(hyperpod["fair_share_weight"], config.cluster_policy.fair_share == "Enabled"),
        ]
        if not hyperpod["enabled"]:
            lines.append("    disabled (enabled: false): task governance makes no queue for it, so no job runs")
        elif rows:
            lines.append("    quota, and the most a job of the team can use by borrowing, in instances (accelerators):")
            backing = {q["instance_type"]: q["guaranteed"] for q in hyperpod["quota"]}
            # Where the cluster has best-effort capacity (autoscaled, flexible or Spot groups), say which quotas
            # rest on it: the teams' quotas on that type are more than the guaranteed capacity holds.
            split = bool(quota_backing(config))
            cells = [(row.instance_type, resource_amount(row.quota), resource_amount(row.reach), limited_by(row),
                      *(("guaranteed" if backing[row.instance_type] else "best-effort",) if split else ()))
                     for row in rows]
            lines += aligned([("instance type", "quota", "reach", "limited by", *(("capacity",) if split else ())),
                              *cells], indent="      ")
            lines += fractional_reach_note(rows, indent="      ")
            # A team's role cannot list nodes: what the config says of their placement is all it can know offline.
            lines.append("    topology labels of the nodes (job --topology; the team's role cannot read nodes): "
                         + "; ".join(f"{q['instance_type']} " + (f"{q['topology_labels'][0]} to -{len(q['topology_labels'])}"
                                                              if q["topology_labels"] else "none")
                                     for q in hyperpod["quota"]))
        else:
            lines.append("    no quota: the team borrows nothing, so a job that asks for compute never runs")
    if batch is not None:
        lines.append("  AWS Batch (hyperpod-kit batch-job --team " + printable(name) + ")")
        if batch["fair_share_queues"]:
            lines.append(f"    fair-share queues {', '.join(batch['fair_share_queues'])}: share identifier "
                         f"{batch['share_identifier']}, weight factor {batch['weight_factor']:g} (lower = larger share)")
            parts = "; ".join(f"{percent_text(queue_fair_shares(config.batch, queue)[batch['share_identifier']])} of {queue}"
                              for queue in batch["fair_share_percent"])
            if parts:
                lines.append(f"    its part: {parts} - while every share identifier on the queue has jobs waiting "
                             "(an idle one's part goes to the others)")
        if batch["quota_share_queue"]:
            held = "; ".join(f"{q['instance_type']} {q['quota']}, up to {q['reach']} by borrowing" for q in batch["quota"])
            lines.append(f"    quota-share queue {batch['quota_share_queue']}: {held or 'no quota'}")
        if batch["fifo_queues"]:
            lines.append(f"    FIFO queues {', '.join(batch['fifo_queues'])}")
    return "\n".join(lines)


@click.command("team")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("name", metavar="NAME")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def team(config_path: Path, name: str, output_format: str) -> None:
    """What team NAME of CONFIG gets: namespace and queue, the priority classes it may name and its default,
    its quota per instance type and how far borrowing takes it, whether it lends, and its AWS Batch queues.

    Exit status: 0 shown, 1 the config has errors (shown as validate shows them), 2 the file cannot be read,
    NAME is no team of it, or bad usage.
    """
    from cdk_app.cli.report_table import render_table
    from cdk_app.validator.report import check_file

    report = check_file(config_path, str(config_path))
    if report.loaded is None or report.errors:
        click.echo(render_table(report), err=True)
        sys.exit(report.exit_code)
    config = report.loaded.config
    rows = [row for row in team_reach(config) if row.team == name]
    hyperpod, batch = hyperpod_part(config, name, rows), batch_part(config, name)
    if hyperpod is None and batch is None:
        known = sorted({t.name for t in config.teams} | {t.name for t in (config.batch.teams if config.batch else ())})
        raise click.BadParameter(f"{name!r} is not a team of {config_path} (teams: {', '.join(known) or 'none'})",
                                 param_hint="NAME")
    if output_format == "json":
        click.echo(json.dumps({"environment": config.environment, "team": name, "hyperpod": hyperpod, "batch": batch},
                              indent=2))
    else:
        click.echo(render(config, name, hyperpod, rows, batch))
