"""hyperpod-kit-services: Services a team may create."""

from __future__ import annotations

from typing import Any

from cdk_app.kubernetes.guardrails.bindings import policy_metadata
from cdk_app.kubernetes.guardrails.cel import validation
from cdk_app.kubernetes.guardrails.constants import API_VERSION, SERVICES


def service_policy() -> dict[str, Any]:
    """Services reach past the namespace: NodePort opens a port on every node, LoadBalancer an AWS load balancer,
    ExternalName aliases any DNS name, and externalIPs make every node's kube-proxy hand that IP's traffic to
    the team's pods (CVE-2020-8554). A team's Services are ClusterIP (headless too), as the operators make them."""
    spec = "object.spec"
    return {
        "apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": policy_metadata(SERVICES),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["services"],
                                                    "operations": ["CREATE", "UPDATE"]}]},
            # Metadata-only updates (a finalizer removed while an old load balancer is deleted) stay possible.
            "matchConditions": [{"name": "created-or-spec-changed",
                                 "expression": "request.operation == 'CREATE' || object.spec != oldObject.spec"}],
            "validations": [
                validation("service-type", f"!has({spec}.type) || {spec}.type == 'ClusterIP'",
                            "only ClusterIP Services (headless too) are allowed",
                            f"'spec.type: ' + {spec}.type + ' reaches past the namespace; only ClusterIP is allowed'"),
                validation("service-type", f"!has({spec}.externalIPs) || size({spec}.externalIPs) == 0",
                            "spec.externalIPs is not allowed (every node would send that IP's traffic to the pods)",
                            "'spec.externalIPs: not allowed (every node would send that IP\\'s traffic to the pods)'"),
            ],
        },
    }
