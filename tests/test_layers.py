"""The package's layers (docs/design.md, "Layers"): every import runs downward, none in a circle.

A small AST walk over ``src/forestrank``: each ``import`` and ``from ... import`` (inside
functions too) is resolved to the module it loads, and checked against the order of
the layers below. The test fails on an upward import or an import cycle, and so do
the planted ones of the last two tests.
"""

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "forestrank"

# Bottom first: a module may import its own layer and the layers below it, nothing above.
LAYERS = [
    ["forestrank._version"],
    ["forestrank._numba"],
    ["forestrank._input"],
    ["forestrank._ranking"],
    ["forestrank.parallel"],
    ["forestrank._tree"],
    ["forestrank.objectives"],
    ["forestrank.metrics"],
    ["forestrank.datasets"],
    ["forestrank.model_selection", "forestrank.stats", "forestrank.preprocessing"],
    ["forestrank.ensemble"],
    ["forestrank.dummy", "forestrank.diagnostics", "forestrank.transfer", "forestrank.calibration"],
    ["forestrank.estimator_checks"],
    ["forestrank.serving"],
    ["forestrank.plotting"],
    ["forestrank", "forestrank.export", "forestrank.explain", "forestrank.persistence", "forestrank.cli", "forestrank.__main__"],
]


def layer_of(module: str) -> int:
    """The layer of ``module``: that of the longest listed name it equals or lies under
    (the package itself, ``forestrank``, only by equality: it is its ``__init__``)."""
    matches = [
        (len(name), rank)
        for rank, names in enumerate(LAYERS)
        for name in names
        if module == name or (name != "forestrank" and module.startswith(name + "."))
    ]
    if not matches:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and to docs/design.md")
    return max(matches)[1]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path, modules: set) -> set:
    """The package modules that ``path`` imports."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "forestrank"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "forestrank":
                target = node.module
            else:
                continue
            for alias in node.names:  # "from . import _criteria" loads a module
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
    return found - {name}


def import_graph(root: Path) -> dict:
    paths = sorted(root.rglob("*.py"))
    modules = {module_name(path, root) for path in paths}
    return {module_name(path, root): imports(path, root, modules) for path in paths}


def upward_imports(graph: dict) -> list:
    return sorted(
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    )


def cycles(graph: dict) -> list:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_every_import_runs_down_the_layers():
    assert upward_imports(import_graph(SOURCE)) == []


def test_no_import_cycle():
    assert cycles(import_graph(SOURCE)) == []


def test_a_planted_upward_import_and_cycle_are_caught(tmp_path):
    """The checks above can fail: an engine module importing an estimator is upward,
    and two modules importing each other are a cycle."""
    package = tmp_path / "forestrank"
    (package / "_tree").mkdir(parents=True)
    (package / "ensemble").mkdir()
    for folder in (package, package / "_tree", package / "ensemble"):
        (folder / "__init__.py").write_text("")
    (package / "_tree" / "_grow.py").write_text("from ..ensemble._forest import RFPointRanker\n")
    (package / "ensemble" / "_forest.py").write_text("from . import _partitioned\n")
    (package / "ensemble" / "_partitioned.py").write_text("def f():\n    from ._forest import RFPointRanker\n")
    graph = import_graph(package)
    assert upward_imports(graph) == [
        "forestrank._tree._grow (layer 5) imports forestrank.ensemble._forest (layer 10)"
    ]
    assert cycles(graph) == [["forestrank.ensemble._forest", "forestrank.ensemble._partitioned"]]


@pytest.mark.parametrize("module", ["forestrank.widgets", "forestrank._helpers.x"])
def test_a_module_outside_the_layers_is_named(module):
    with pytest.raises(AssertionError, match=f"{module} is in no layer"):
        layer_of(module)
