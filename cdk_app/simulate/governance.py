"""An environment's task governance as a Kueue scheduler sees it: the setup document (the Kueue objects the
kit's mapping makes, and Kueue's fair-sharing configuration) that both the in-process scheduler and the real
Kueue (kueue-oracle) are built from, and the quota figures reports compare usage with."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from cdk_app.config.model import KitConfig
from cdk_app.config.names import team_cluster_queue
from cdk_app.domain.instance_types import ACCELERATOR_RESOURCES, EFA_RESOURCE
from cdk_app.domain.kueue_mapping import (
    Choices,
    governance_objects,
    governed_teams,
    kueue_configuration,
    team_namespaces,
)
from cdk_app.kubernetes.quantity import parse_quantity

LISTS = {"ResourceFlavor": "resourceFlavors", "ClusterQueue": "clusterQueues", "LocalQueue": "localQueues",
         "WorkloadPriorityClass": "workloadPriorityClasses", "Cohort": "cohorts"}
GIB = 1024 ** 3
DEFAULT_CHOICES = Choices()
# Kueue resource name -> the config's term for it (reports speak the config's language).
TERMS = {"cpu": "vcpu", "memory": "memory_gib", EFA_RESOURCE: "efa",
         **{name: "accelerators" for name in ACCELERATOR_RESOURCES.values()}}


def setup_document(config: KitConfig, choices: Choices = DEFAULT_CHOICES) -> dict[str, Any]:
    """The scheduler's setup: namespaces, the mapping's Kueue objects by kind, and fair sharing when the
    cluster policy enables it (Kueue's default preemption strategies)."""
    doc: dict[str, Any] = {"namespaces": [{"metadata": {"name": n}} for n in team_namespaces(config)]}
    for kind in LISTS.values():
        doc[kind] = []
    for obj in governance_objects(config, choices):
        doc[LISTS[obj["kind"]]].append(obj)
    fair = kueue_configuration(config)["fairSharing"]
    if fair["enable"]:
        doc["fairSharing"] = {"preemptionStrategies": fair["preemptionStrategies"]}
    return doc


def kueue_units(resource: str, quantity: str) -> int:
    """A quantity in Kueue's units (pkg/resources: cpu in millicores, everything else in its base unit,
    rounded up as resource.Quantity.Value does)."""
    value = parse_quantity(quantity)
    if value is None:
        raise ValueError(f"bad quantity {quantity!r} for {resource}")
    if resource == "cpu":
        value *= 1000
    return -(-value.numerator // value.denominator)


def in_terms(resource: str, amount: int) -> Fraction | int:
    """A Kueue amount in the config's unit: vCPU, GiB, accelerators, EFA interfaces."""
    if resource == "cpu":
        value = Fraction(amount, 1000)
    elif resource == "memory":
        value = Fraction(amount, GIB)
    else:
        return amount
    return int(value) if value.denominator == 1 else value


@dataclass(frozen=True, slots=True)
class QueueQuota:
    team: str
    cluster_queue: str
    lends: bool  # its idle nominal quota can be borrowed by others (no lendingLimit 0)
    # flavor -> Kueue resource -> amount
    nominal: dict[str, dict[str, int]]
    borrowing_limit: dict[str, dict[str, int]]


def queue_quotas(config: KitConfig, doc: dict[str, Any]) -> dict[str, QueueQuota]:
    """Per governed team (and the shared pool), its ClusterQueue's quota as the setup document holds it."""
    queues = {cq["metadata"]["name"]: cq for cq in doc["clusterQueues"]}
    out = {}
    for team in governed_teams(config):
        cq = queues.get(team_cluster_queue(team))
        if cq is None:  # a disabled allocation: no queue
            continue
        nominal: dict[str, dict[str, int]] = {}
        limits: dict[str, dict[str, int]] = {}
        lends = True
        for group in cq["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                for res in flavor["resources"]:
                    nominal.setdefault(flavor["name"], {})[res["name"]] = kueue_units(res["name"], res["nominalQuota"])
                    if "borrowingLimit" in res:
                        limits.setdefault(flavor["name"], {})[res["name"]] = kueue_units(res["name"],
                                                                                        res["borrowingLimit"])
                    lends = lends and res.get("lendingLimit") != "0"
        out[team] = QueueQuota(team, cq["metadata"]["name"], lends, nominal, limits)
    return out


def pool_quota(doc: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The idle pool (the Cohort's own nominal quota) per flavor and resource; empty without one."""
    pool: dict[str, dict[str, int]] = {}
    for cohort in doc.get("cohorts") or []:
        for group in cohort["spec"].get("resourceGroups") or []:
            for flavor in group["flavors"]:
                for res in flavor["resources"]:
                    amount = kueue_units(res["name"], res["nominalQuota"])
                    slot = pool.setdefault(flavor["name"], {})
                    slot[res["name"]] = slot.get(res["name"], 0) + amount
    return pool
