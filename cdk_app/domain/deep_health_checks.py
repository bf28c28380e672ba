"""Which deep health checks an instance group may run, and which it runs when its config leaves them out: one
answer for the cluster stack (OnStartDeepHealthChecks) and the validator.

New GPU instances run them for about two hours (SageMaker, "recommended resiliency configurations"), and a node is
not schedulable until they pass."""

from __future__ import annotations

from cdk_app.config.model import InstanceGroup
from cdk_app.domain.efa_support import has_efa
from cdk_app.domain.instance_types import CATALOGUE
from hyperpod_constructs.private.limits import DEEP_HEALTH_CHECKS

INSTANCE_STRESS, INSTANCE_CONNECTIVITY = DEEP_HEALTH_CHECKS
CONNECTIVITY_MIN_NODES = 2
DEEP_HEALTH_CHECK_HOURS = 2


def connectivity_problem(instance_type: str, count: int) -> str | None:
    """Why a group of `count` instances of `instance_type` cannot run InstanceConnectivity; None when it can.

    HyperPod's deep health check docs: InstanceConnectivity "requires at least 2 nodes and is only supported on
    instances with multi-node GPU communication capabilities". The kit reads the latter as a type with EFA
    interfaces (cdk_app/domain/efa_support.py); both checks need GPU or Trainium instances (see
    allowed_deep_health_checks).

    Count 0 passes: no node joins, so no check runs, and the group's nodes come with a later scale-up. Refusing
    it would make every scale-to-zero of a group that names InstanceConnectivity an edit of its checks as well."""
    if not has_efa(instance_type):
        return f"{instance_type} has no EFA interfaces"
    if 0 < count < CONNECTIVITY_MIN_NODES:
        return f"the group has {count} node"
    return None


def allowed_deep_health_checks(instance_type: str, count: int) -> tuple[str, ...]:
    """The checks a group may run: none on types without GPUs or Trainium (or unknown ones), InstanceStress on
    the others, and InstanceConnectivity where connectivity_problem finds nothing."""
    spec = CATALOGUE.get(instance_type)
    if spec is None or not spec.has_accelerators:
        return ()
    return DEEP_HEALTH_CHECKS if connectivity_problem(instance_type, count) is None else (INSTANCE_STRESS,)


def default_deep_health_checks(instance_type: str, count: int) -> tuple[str, ...]:
    """The allowed checks, except InstanceConnectivity at count 0: the default names only what the docs promise for
    the nodes the config asks for now; the edit that scales the group up brings it in the same update."""
    checks = allowed_deep_health_checks(instance_type, count)
    return checks if count else tuple(c for c in checks if c != INSTANCE_CONNECTIVITY)


def group_deep_health_checks(group: InstanceGroup) -> tuple[str, ...]:
    """What the group runs: its config's list when given (an empty one turns them off), else the default."""
    if group.deep_health_checks is not None:
        return tuple(group.deep_health_checks)
    if group.max_count is not None:
        # HyperPod autoscaling docs, "Create a NodeClass": "Instance groups with DeepHealthChecks (DHC) are not
        # supported" (pods would wait 60-90 minutes on each new node).
        return ()
    # A flexible group may come up as any of its types: only the checks every one of them allows.
    defaults = [default_deep_health_checks(itype, group.count)
                for itype in (group.instance_type, *group.fallback_instance_types)]
    return tuple(check for check in defaults[0] if all(check in other for other in defaults[1:]))
