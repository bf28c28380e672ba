"""Network topology of a HyperPod cluster's nodes, from `kubectl get nodes -o json`.

EC2 labels each node with the network nodes above it: topology.k8s.aws/network-node-layer-1 (farthest)
to -3 (closest; some types also have -4). Nodes that share the deepest layer are the closest; a job
asks for that with kueue.x-k8s.io/podset-required-topology or podset-preferred-topology.

A network node of layer N is known by the values of layers 1 to N, not by its own value alone: Kueue
names a topology domain by every level up to it (v0.19.2 pkg/util/tas DomainID joins the level values,
pkg/cache/scheduler/tas_topology_tree.go builds each parent from the values above), so two nodes with the
same layer-3 value under different layer-2 nodes are in two domains. `domain` is that key, for every
reader here and for `job`'s topology check.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from cdk_app.domain.instance_types import (
    ACCELERATOR_RESOURCES,
    EFA_RESOURCE,
    MAX_TOPOLOGY_LAYERS,
    TOPOLOGY_LAYERS,
    family,
)
from cdk_app.support.text_table import aligned, printable

LAYER_LABEL = "topology.k8s.aws/network-node-layer-{}"
LAYERS = tuple(range(1, MAX_TOPOLOGY_LAYERS + 1))  # the layers of any EC2 instance topology
HEALTH_LABEL = "sagemaker.amazonaws.com/node-health-status"
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ULTRASERVER_LABEL = "topology.k8s.aws/ultraserver-id"
# Device-plugin resources a node advertises in status.allocatable; counts, so always whole numbers.
DEVICE_RESOURCES = (EFA_RESOURCE, *ACCELERATOR_RESOURCES.values())


def type_topology_labels(instance_type: str) -> list[str]:
    """The network-topology labels EC2 puts on every node of the type, layer 1 first ([] for a family without EC2
    instance topology): what a team can know of its nodes' placement without reading the nodes."""
    return [LAYER_LABEL.format(layer) for layer in range(1, TOPOLOGY_LAYERS.get(family(instance_type), 0) + 1)]


class TopologyInputError(Exception):
    """Input that is not a node list; the message says what was expected."""


@dataclass(frozen=True)
class NodeInfo:
    name: str
    instance_type: str
    health: str
    layers: tuple[str, ...]  # network node ids, layer 1 first; empty without topology labels
    ultraserver: str | None = None
    # status.allocatable of DEVICE_RESOURCES; a resource the node does not advertise is absent.
    devices: dict[str, int] = field(default_factory=dict, compare=False, hash=False)

    def domain(self, layer: int) -> tuple[str, ...] | None:
        """The node's topology domain on the layer: the values of layers 1 to `layer` (Kueue's domain id);
        None when the node has no label for the layer."""
        return self.layers[:layer] if len(self.layers) >= layer else None

    def type_is(self, instance_type: str) -> bool:
        """HyperPod labels nodes ml.<type>; plain EC2 names are accepted too."""
        return self.instance_type.removeprefix("ml.") == instance_type.removeprefix("ml.")


_KUBECTL = "give the output of `kubectl get nodes -o json`"
DOMAIN_SEPARATOR = "/"  # not a character of a label value (LABEL_VALUE), so a domain's path reads one way


def domain_name(domain: tuple[str, ...]) -> str:
    """A domain as people read it: its network nodes from layer 1 down, nn-1a/nn-2a/nn-3a."""
    return DOMAIN_SEPARATOR.join(domain)


def domains(nodes: list[NodeInfo], layer: int) -> dict[tuple[str, ...], list[NodeInfo]]:
    """The topology domains of the layer and the nodes in each, keyed as Kueue keys them (the values of
    layers 1 to `layer`); a node without a label for the layer is in none. The one grouping that `topology`
    shows and `job --topology required` counts."""
    found: dict[tuple[str, ...], list[NodeInfo]] = {}
    for node in nodes:
        key = node.domain(layer)
        if key is not None:
            found.setdefault(key, []).append(node)
    return dict(sorted(found.items()))


_COUNT = re.compile(r"[0-9]{1,9}")
# Kubernetes' label syntax (apimachinery validation.IsQualifiedName, IsValidLabelValue): the API server
# stores no other label, so a node list that has one is not what kubectl returned.
_LABEL_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY = re.compile(rf"(?:(?P<prefix>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*)/)?{_LABEL_NAME}")
LABEL_VALUE = re.compile(f"(?:{_LABEL_NAME})?")
LABEL_PREFIX_MAX = 253
_LABEL_RULES = ("a label name is [prefix/]name: name 1-63 letters, digits, '-', '_' and '.', starting and ending "
                "with a letter or digit, prefix a DNS subdomain of at most 253 characters; a value is empty or "
                "1-63 of the same characters")


def _check_label(node: str, key: str, value: str, source: str) -> None:
    # Lengths first: they bound the regular expressions' work on hostile text.
    match = LABEL_KEY.fullmatch(key) if len(key) <= LABEL_PREFIX_MAX + 64 else None
    if match is None or len(match["prefix"] or "") > LABEL_PREFIX_MAX:
        raise TopologyInputError(f"{source}: node {node!r:.60} has label name {key!r:.80}, which Kubernetes "
                                 f"refuses ({_LABEL_RULES}); {_KUBECTL}")
    if len(value) > 63 or not LABEL_VALUE.fullmatch(value):
        raise TopologyInputError(f"{source}: node {node!r:.60} has label {key} = {value!r:.80}, a value Kubernetes "
                                 f"refuses ({_LABEL_RULES}); {_KUBECTL}")


def _mapping(value: Any, what: str, source: str) -> dict[str, Any]:
    """A mapping of text to text (labels) or to anything (metadata, status); absent is empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TopologyInputError(f"{source}: {what} is {type(value).__name__}, not a mapping; {_KUBECTL}")
    return value


def _text(value: Any, what: str, source: str) -> str:
    if not isinstance(value, str):
        raise TopologyInputError(f"{source}: {what} is {json.dumps(value)[:40]}, not text; {_KUBECTL}")
    return value


def _devices(item: dict[str, Any], name: str, source: str) -> dict[str, int]:
    status = _mapping(item.get("status"), f"node {name} status", source)
    allocatable = _mapping(status.get("allocatable"), f"node {name} status.allocatable", source)
    devices = {}
    for resource in DEVICE_RESOURCES:
        value = allocatable.get(resource)
        if value is None:
            continue
        # Kubernetes writes quantities as text; device counts are plain ASCII digits ("²" is a digit to isdigit).
        if not (isinstance(value, str) and _COUNT.fullmatch(value)) and not (
                type(value) is int and 0 <= value < 10**9):
            raise TopologyInputError(f"{source}: node {name} has {resource} allocatable {value!r:.40}; "
                                     "a device count must be a whole number")
        devices[resource] = int(value)
    return devices


def parse_nodes(text: str, source: str) -> list[NodeInfo]:
    def no_constant(name: str) -> None:  # NaN, Infinity: not JSON, though Python's reader takes them
        raise TopologyInputError(f"{source}: {name} is not JSON; {_KUBECTL}")

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(pairs)
        if len(found) != len(pairs):
            twice = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
            raise TopologyInputError(f"{source}: key {twice!r:.40} given twice in one object; {_KUBECTL}")
        return found

    try:
        document = json.loads(text, parse_constant=no_constant, object_pairs_hook=unique)
    except json.JSONDecodeError as err:
        raise TopologyInputError(f"{source}: not JSON ({err.msg} at line {err.lineno}); {_KUBECTL}") from err
    except RecursionError:
        raise TopologyInputError(f"{source}: JSON nested too deeply to be a node list; {_KUBECTL}") from None
    except ValueError:  # a number longer than Python's int-string limit
        raise TopologyInputError(f"{source}: not a node list (a number of more than 4300 digits); {_KUBECTL}") from None
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise TopologyInputError(f"{source}: not a Kubernetes list; {_KUBECTL}")
    nodes = []
    first_seen: dict[str, int] = {}
    for index, item in enumerate(document["items"]):
        if not isinstance(item, dict) or item.get("kind", "Node") != "Node":
            kind = item.get("kind") if isinstance(item, dict) else type(item).__name__
            raise TopologyInputError(f"{source}: item {index} is a {str(kind)[:40]}, not a Node; {_KUBECTL}")
        metadata = _mapping(item.get("metadata"), f"item {index} metadata", source)
        # Kubernetes requires a name of every node: a stand-in could equal a real node's name, and a node
        # without one is not something kubectl returns (a list edited by hand), so it is refused.
        if metadata.get("name") in (None, ""):
            raise TopologyInputError(f"{source}: item {index} has no metadata.name; every node kubectl returns has "
                                     f"one - {_KUBECTL}")
        name = _text(metadata["name"], f"item {index} metadata.name", source)
        if name in first_seen:  # Kubernetes names each node once: a second entry would count its capacity twice
            raise TopologyInputError(f"{source}: node {name!r:.60} is listed twice (items {first_seen[name]} and "
                                     f"{index}); a node list names each node once - {_KUBECTL}, not lists joined")
        first_seen[name] = index
        labels = _mapping(metadata.get("labels"), f"node {name} metadata.labels", source)
        for key, value in labels.items():
            _check_label(name, key, _text(value, f"node {name} label {key}", source), source)
        layers: list[str] = []
        for layer in LAYERS:
            value = labels.get(LAYER_LABEL.format(layer))
            if value is None:
                break
            layers.append(value)
        instance_type = next((labels[k] for k in INSTANCE_TYPE_LABELS if k in labels), "unknown")
        nodes.append(NodeInfo(name=name, instance_type=instance_type, health=labels.get(HEALTH_LABEL, "unknown"),
                              layers=tuple(layers), ultraserver=labels.get(ULTRASERVER_LABEL),
                              devices=_devices(item, name, source)))
    if not nodes:
        raise TopologyInputError(f"{source}: the list has no nodes")
    return nodes


def _mermaid_id(prefix: str, value: str) -> str:
    """An id Mermaid accepts, one per value: ASCII letters and digits stay, every other character
    (including '_') becomes _<hex code point>_, so `a-b`, `a.b` and `a_b` stay three nodes."""
    return prefix + "".join(c if c.isascii() and c.isalnum() else f"_{ord(c):x}_" for c in value)


def _mermaid_text(value: str) -> str:
    """A node label's text: Mermaid's entity codes for the quote that would end it and for characters that
    are not printable (a newline would end the line)."""
    return "".join(f"#{ord(c)};" if c == '"' or c == "#" or not c.isprintable() else c for c in value)


def mermaid(nodes: list[NodeInfo]) -> str:
    """flowchart: layer 1 -> layer 2 -> layer 3 (-> 4) -> node, each edge once. A network node is one box
    per domain: a layer-3 value under two layer-2 nodes is two boxes (the second id ends _x2, a suffix no
    escaped value ends in, since an escape's '_' is followed by a hex digit)."""
    lines = ["flowchart TD"]
    declared: set[str] = set()
    ids: dict[tuple[str, ...], str] = {}  # domain -> its box
    taken: dict[str, int] = {}  # a value's plain id -> the domains that use it so far
    edges: dict[str, None] = {}  # insertion-ordered set: each edge once, in linear time

    def box(domain: tuple[str, ...]) -> str:
        if domain not in ids:
            plain = _mermaid_id(f"L{len(domain)}_", domain[-1])
            taken[plain] = taken.get(plain, 0) + 1
            ids[domain] = plain if taken[plain] == 1 else f"{plain}_x{taken[plain]}"
        return ids[domain]

    for node in sorted(nodes, key=lambda n: (n.layers, n.name)):
        chain = [(box(node.layers[:i + 1]), f"layer {i + 1}: {_mermaid_text(nn)}")
                 for i, nn in enumerate(node.layers)]
        leaf = _mermaid_id("node_", node.name)
        chain.append((leaf, "<br/>".join(_mermaid_text(v) for v in (node.name, node.instance_type, node.health))))
        for ident, label in chain:
            if ident not in declared:
                declared.add(ident)
                lines.append(f'  {ident}["{label}"]')
        for (parent, _), (child, _) in zip(chain, chain[1:]):
            edges.setdefault(f"  {parent} --> {child}")
    unlabeled = [n for n in nodes if not n.layers]
    if unlabeled:
        lines.append(f'  %% {len(unlabeled)} node(s) without topology labels: {", ".join(_mermaid_text(n.name) for n in unlabeled)}')
    return "\n".join([*lines, *edges])


def groups(nodes: list[NodeInfo]) -> list[dict[str, Any]]:
    """Every topology domain of every layer with its nodes (`domains`): the sets a required topology of that
    layer can pack together, as `job --topology required` counts them. Layer 1 first."""
    return [{"layer": layer, "layers": list(key), "network_node": key[-1],
             "nodes": [{"name": n.name, "instance_type": n.instance_type, "health": n.health,
                        **({"ultraserver": n.ultraserver} if n.ultraserver else {})}
                       for n in sorted(members, key=lambda n: n.name)]}
            for layer in LAYERS for key, members in domains(nodes, layer).items()]


def _accelerators(node: NodeInfo) -> int | str:
    counts = [node.devices[r] for r in ACCELERATOR_RESOURCES.values() if r in node.devices]
    return sum(counts) if counts else "-"


NAMES_SHOWN = 10  # a group line names this many nodes, then counts the rest: one readable line per group


def table(nodes: list[NodeInfo]) -> str:
    header = ("layer 1", "layer 2", "layer 3", "layer 4", "node", "instance type", "health", "accelerators", "efa")
    # An empty value is a label Kubernetes allows (and Kueue a domain): shown as "", apart from "-" (no label).
    rows = [tuple([v or '""' for v in n.layers] + ["-"] * (4 - len(n.layers)))
            + (n.name, n.instance_type, n.health, _accelerators(n), n.devices.get(EFA_RESOURCE, "-"))
            for n in sorted(nodes, key=lambda n: (n.layers, n.name))]
    lines = aligned([header, *rows])
    found = groups(nodes)
    # A value that names network nodes of two domains is shown with the network nodes above it.
    values = [(g["layer"], g["network_node"]) for g in found]
    for group in found:
        if len(group["nodes"]) > 1:
            where = group["network_node"]
            if values.count((group["layer"], where)) > 1:
                where = f"{where} (under {domain_name(tuple(group['layers'][:-1]))})"
            names = [n["name"] for n in group["nodes"]]
            shown = ", ".join(names[:NAMES_SHOWN]) + (f" and {len(names) - NAMES_SHOWN} more"
                                                      if len(names) > NAMES_SHOWN else "")
            lines.append(f"{len(names)} nodes share layer-{group['layer']} network node {where}: {shown}")
    unlabeled = [n.name for n in nodes if not n.layers]
    if unlabeled:
        lines.append(f"without topology labels (type not supported, or labels not yet set): {', '.join(unlabeled)}")
    return "\n".join(printable(line) for line in lines)


def as_json(nodes: list[NodeInfo]) -> dict[str, Any]:
    return {"nodes": [{"name": n.name, "instance_type": n.instance_type, "health": n.health,
                       "layers": list(n.layers), "ultraserver": n.ultraserver, "allocatable": n.devices}
                      for n in nodes],
            "groups": groups(nodes)}
