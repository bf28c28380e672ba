"""The layering of the kit, checked on its import graph (every import, module level or not)."""

from __future__ import annotations

import pytest
from support.import_graph import cycles, import_graph, reachable

# Lowest first: a module may import its own layer and those below it, never one above.
LAYERS = ("cdk_app.support", "cdk_app.findings", "cdk_app.config", "cdk_app.domain", "cdk_app.validator",
          "cdk_app.kubernetes", "cdk_app.stacks", "cdk_app.cli")
# The one import upwards: the validator checks each stack's size on the placement the app itself builds
# (cdk_app.stacks.layout is pure Python and imports no aws_cdk), so the two cannot disagree.
ALLOWED_UPWARDS = {("cdk_app.validator.rules.stack_limits", "cdk_app.stacks.layout")}
CDK = {"aws_cdk", "constructs", "jsii", "cdk_nag"}
GRAPH = import_graph()


def _layer(module: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if module == layer or module.startswith(layer + ".")), None)


def _under(prefix: str) -> list[str]:
    return sorted(m for m in GRAPH if m == prefix or m.startswith(prefix + "."))


def test_no_import_cycle():
    assert cycles() == []


def test_no_module_imports_a_layer_above_its_own():
    upwards = {(module, edge) for module, edges in GRAPH.items() for edge in edges
               if _layer(module) is not None and _layer(edge) is not None and _layer(edge) > _layer(module)}
    assert upwards == ALLOWED_UPWARDS


def test_constructs_never_import_the_app():
    assert {(m, e) for m in _under("hyperpod_constructs") for e in GRAPH[m] if e.startswith("cdk_app")} == set()


@pytest.mark.parametrize("package", ["cdk_app.config", "cdk_app.validator", "cdk_app.domain", "cdk_app.findings",
                                     "cdk_app.support", "hyperpod_constructs.private"])
def test_model_validator_and_domain_never_reach_aws_cdk(package):
    assert {m: sorted(reachable(m) & CDK) for m in _under(package) if reachable(m) & CDK} == {}


@pytest.mark.parametrize("package", ["cdk_app.config", "cdk_app.validator", "cdk_app.domain"])
def test_config_validator_and_domain_never_reach_the_kubernetes_package(package):
    reached = {m: sorted(e for e in reachable(m) if e.startswith("cdk_app.kubernetes")) for m in _under(package)}
    assert {m: found for m, found in reached.items() if found} == {}


def test_stacks_never_import_the_command_line():
    assert {(m, e) for m in _under("cdk_app.stacks") for e in GRAPH[m] if e.startswith("cdk_app.cli")} == set()


def test_the_graph_sees_every_package_and_its_imports():
    """A guard on the checks above: the reader found the modules, their kit imports and outside ones."""
    assert {"cdk_app.config.model", "cdk_app.validator.report", "cdk_app.cli.main", "cdk_app.cli.plan",
            "hyperpod_constructs.hyperpod_cluster", "hyperpod_constructs.private.limits"} <= set(GRAPH)
    assert "aws_cdk" in GRAPH["hyperpod_constructs.hyperpod_cluster"]
    assert "hyperpod_constructs.private.limits" in GRAPH["cdk_app.config.model"]
    assert "cdk_app.cli.plan.compare" in GRAPH["cdk_app.cli.plan"]


def test_an_import_through_another_module_is_seen(monkeypatch):
    """The checks can fail: a module that reaches the Kubernetes package through another one is found."""
    import support.import_graph as graph_module

    leaky = {**GRAPH, "cdk_app.domain.versions": GRAPH["cdk_app.domain.versions"] | {"cdk_app.stacks.layout"},
             "cdk_app.stacks.layout": GRAPH["cdk_app.stacks.layout"] | {"cdk_app.kubernetes.team_rbac"}}
    monkeypatch.setattr(graph_module, "import_graph", lambda: leaky)
    assert "cdk_app.kubernetes.team_rbac" in graph_module.reachable("cdk_app.validator.report")


def test_a_cycle_and_an_upward_import_would_be_seen(monkeypatch):
    """The checks can fail: a graph with a two-module loop has a cycle."""
    import support.import_graph as graph_module

    looped = {**GRAPH, "cdk_app.domain.capacity": GRAPH["cdk_app.domain.capacity"] | {"cdk_app.domain.reach"}}
    monkeypatch.setattr(graph_module, "import_graph", lambda: looped)
    assert ["cdk_app.domain.capacity", "cdk_app.domain.reach"] in graph_module.cycles()
