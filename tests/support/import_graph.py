"""The kit's import graph, read from the source with ast (imports inside functions included)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Import name -> folder, as pyproject.toml's package-dir maps them.
PACKAGES = {"cdk_app": ROOT / "cdk_app", "hyperpod_constructs": ROOT / "constructs"}
# Lambda handler folders are deployed as assets and import their siblings by bare name; they are not
# part of the importable library.
HANDLER_SUFFIX = "_handler"


def module_files() -> dict[str, Path]:
    found = {}
    for name, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if any(part.endswith(HANDLER_SUFFIX) for part in parts) or "__pycache__" in parts:
                continue
            dotted = ".".join((name, *parts))
            found[dotted.removesuffix(".__init__")] = path
    return found


def _resolve(target: str, modules: set[str]) -> str | None:
    """The kit module an imported name lives in (a from-import may name a module or a name in one)."""
    while target:
        if target in modules:
            return target
        target = target.rpartition(".")[0]
    return None


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Each kit module -> the kit modules and the top-level outside packages it imports."""
    files = module_files()
    modules = set(files)
    graph = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base]) if base else ".".join(anchor)
                names = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for name in names:
                inside = _resolve(name, modules)
                if inside is not None and inside != module:
                    edges.add(inside)
                elif name.split(".")[0] not in PACKAGES:
                    edges.add(name.split(".")[0])
        graph[module] = frozenset(edges)
    return graph


def reachable(start: str) -> set[str]:
    """Every module and outside package `start` imports, directly or through other kit modules."""
    graph = import_graph()
    seen, todo = set(), [start]
    while todo:
        for edge in graph.get(todo.pop(), ()):
            if edge not in seen:
                seen.add(edge)
                todo.append(edge)
    return seen


def cycles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for edge in graph[node]:
            if edge not in graph:
                continue
            if edge not in index:
                visit(edge)
                low[node] = min(low[node], low[edge])
            elif edge in on_stack:
                low[node] = min(low[node], index[edge])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
