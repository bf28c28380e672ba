"""Which connections a set of NetworkPolicies allows, by the Kubernetes NetworkPolicy semantics: a pod selected by
no policy of a direction is open in it; a selected pod allows what any selecting policy's rules allow (they only
add). A connection needs the source's egress and the destination's ingress. Label selectors here know matchLabels
and matchExpressions In/NotIn/Exists/DoesNotExist. ipBlock matches by address, as the VPC CNI's agent does (pod IPs
are VPC addresses). Node-local traffic (the kubelet's probes) is not modelled: the agent always allows it."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Endpoint:
    ip: str
    namespace: str | None = None  # None: not a pod (an address outside the cluster, IMDS, the API server)
    labels: dict[str, str] = field(default_factory=dict)
    namespace_labels: dict[str, str] = field(default_factory=dict)


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expr in selector.get("matchExpressions", []):
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        ok = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return True


def _peer_matches(peer: dict[str, Any], policy_ns: str, other: Endpoint) -> bool:
    if "ipBlock" in peer:
        address = ipaddress.ip_address(other.ip)
        block = peer["ipBlock"]
        return (address in ipaddress.ip_network(block["cidr"])
                and not any(address in ipaddress.ip_network(e) for e in block.get("except", [])))
    if other.namespace is None:
        return False
    if "namespaceSelector" in peer:
        if not selects(peer["namespaceSelector"], other.namespace_labels):
            return False
    elif other.namespace != policy_ns:
        return False
    return selects(peer.get("podSelector", {}), other.labels)


def _port_matches(ports: list[dict[str, Any]] | None, port: int, protocol: str) -> bool:
    return not ports or any(p.get("protocol", "TCP") == protocol and p.get("port") in (None, port) for p in ports)


def _direction_allows(policies: list[dict[str, Any]], pod: Endpoint, other: Endpoint, kind: str, port: int,
                      protocol: str) -> bool:
    rules_key, peers_key = ("ingress", "from") if kind == "Ingress" else ("egress", "to")
    selecting = [p for p in policies if p["metadata"]["namespace"] == pod.namespace
                 and kind in p["spec"].get("policyTypes", ["Ingress"]) and selects(p["spec"]["podSelector"], pod.labels)]
    if not selecting:
        return True
    return any(_port_matches(rule.get("ports"), port, protocol)
               and (peers_key not in rule or any(_peer_matches(peer, p["metadata"]["namespace"], other)
                                                 for peer in rule[peers_key]))
               for p in selecting for rule in p["spec"].get(rules_key, []))


def allowed(policies: list[dict[str, Any]], source: Endpoint, destination: Endpoint, port: int,
            protocol: str = "TCP") -> bool:
    egress = source.namespace is None or _direction_allows(policies, source, destination, "Egress", port, protocol)
    ingress = (destination.namespace is None
               or _direction_allows(policies, destination, source, "Ingress", port, protocol))
    return egress and ingress
