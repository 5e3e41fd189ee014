"""The layering rules, checked over the source: no import cycles, the core never imports the shell."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("envpipeline", "assets", "resources")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules() -> dict[str, Path]:
    """Every first-party module by dotted name."""
    return {module_name(p): p for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """First-party modules one file imports, anywhere in it (lazy imports inside functions count)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            # `from a.b import c` depends on a.b.c when c is a module, else on a.b
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = source_modules()
    known = set(modules)
    graph = {name: imports_of(path, known) - {name} for name, path in modules.items()}
    for name in graph:  # a package's __init__ is not an edge to itself through its children
        graph[name] = {dep for dep in graph[name] if not name.startswith(dep + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_module_graph_has_no_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_core_never_imports_the_shell_or_dagster():
    offenders = []
    for name, path in source_modules().items():
        if not name.startswith("envpipeline"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                roots = [node.module.split(".")[0]]
            else:
                continue
            offenders += [f"{name} imports {r}" for r in roots if r in ("dagster", "assets", "resources")]
    assert offenders == []


def test_resources_never_import_assets():
    graph = import_graph()
    offenders = [
        f"{m} -> {d}"
        for m, deps in graph.items()
        if m.startswith("resources")
        for d in deps
        if d.startswith("assets")
    ]
    assert offenders == []


#: The CompoWorld core: services below compose, agents and rewards, and no package cycle among them.
COMPOWORLD_PACKAGES = (
    "envpipeline.services",
    "envpipeline.compose",
    "envpipeline.agents",
    "envpipeline.rewards",
)


def package_of(module: str) -> str:
    """The package of a module: its first two dotted parts (``envpipeline.compose``)."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]], packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Package -> the other packages of `packages` its modules import (lazy imports count)."""
    edges: dict[str, set[str]] = {p: set() for p in packages}
    for module, deps in graph.items():
        source = package_of(module)
        if source not in edges:
            continue
        edges[source] |= {package_of(d) for d in deps if package_of(d) in edges and package_of(d) != source}
    return edges


def test_the_compoworld_packages_have_no_cycles():
    edges = package_graph(import_graph(), COMPOWORLD_PACKAGES)
    assert cycles(edges) == [], edges


def test_the_package_graph_finds_a_package_cycle():
    graph = {
        "envpipeline.a.x": {"envpipeline.b.y"},
        "envpipeline.b.y": {"envpipeline.a.z"},
        "envpipeline.a.z": set(),
    }
    edges = package_graph(graph, ("envpipeline.a", "envpipeline.b"))
    assert cycles(edges) == [["envpipeline.a", "envpipeline.b"]]
