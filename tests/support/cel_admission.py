"""The guardrails' CEL evaluated by cel-python as the API server would run a ValidatingAdmissionPolicy: the kit's own
model (cdk_app/kubernetes/guardrails/admission.py, what `hyperpod-kit check` runs), plus the tests' label helper."""

from __future__ import annotations

from typing import Any

from cdk_app.kubernetes.guardrails import admission
from cdk_app.kubernetes.guardrails.admission import Verdict

__all__ = ["Verdict", "admit", "labels"]


def admit(manifests: list[dict[str, Any]], request: dict[str, Any], obj: dict[str, Any],
          old: dict[str, Any] | None) -> Verdict:
    """The kit's verdict, and every refusal's messageExpression evaluated (a failing one would fall back to the
    static message on the API server: a weaker message the tests do not accept)."""
    verdict = admission.admit(manifests, request, obj, old)
    assert verdict.message_failures == [], verdict.message_failures
    return verdict


def labels(namespace: str, queue: str | None = "own", priority: str | None = "training-priority") -> dict[str, str]:
    out = {}
    if queue is not None:
        out["kueue.x-k8s.io/queue-name"] = f"{namespace}-localqueue" if queue == "own" else queue
    if priority is not None:
        out["kueue.x-k8s.io/priority-class"] = priority
    return out
