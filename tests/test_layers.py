"""`mrtasks` is built in layers: a module imports its own layer or lower ones, and no files import
each other in a circle.

Layers, bottom to top (README, "Architecture"):

0. leaf modules: `mrtasks` (the package), `text`, `trajectory`, `jsonl`, `logs`, `prompts`
1. `mrtasks.mathcheck`: the answer checker
2. `mrtasks.tasks`: task constructors
3. `mrtasks.rewards`: reward functions, their registry, the audit and bench tools
4. `mrtasks.curate`: curation; it orchestrates tasks and checks references with rewards
5. `mrtasks.build`, `mrtasks.demo`: command lines over everything

Every import counts: at module level, inside functions and under `if TYPE_CHECKING:`. Outside
`mrtasks`, the package imports none of `training` and `eval`, and `builders` only from the
module that drives the dataset builder.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO_ROOT

PACKAGE = "mrtasks"
LAYERS: tuple[tuple[str, ...], ...] = (
    ("mrtasks", "mrtasks.text", "mrtasks.trajectory", "mrtasks.jsonl", "mrtasks.logs", "mrtasks.prompts", "mrtasks.output"),
    ("mrtasks.mathcheck",),
    ("mrtasks.tasks",),
    ("mrtasks.rewards",),
    ("mrtasks.curate",),
    ("mrtasks.build", "mrtasks.demo"),
)
FORBIDDEN_OUTSIDE = ("training", "eval")
BUILDER_DRIVERS = {"mrtasks.curate.write"}
"""The only modules that may import `builders` (they run its GeneratorBasedBuilder at build time)."""


def module_files(root: Path = REPO_ROOT / PACKAGE) -> dict[str, Path]:
    """Every module under the package: dotted name -> file (a package is its `__init__.py`)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the file, anywhere in it. `from pkg import x`
    names the submodule `pkg.x` when there is one, else `pkg` itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((sub if sub in modules else base, node.lineno))
    return found


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer): the longest prefix wins
    for layer, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (module.startswith(prefix + ".") and prefix != PACKAGE):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), layer)
    return None if best is None else best[1]


def import_graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """module -> {imported mrtasks module: first line}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges: dict[str, int] = {}
        for target, line in imports_of(module, path, modules):
            if target in modules and target != module:
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def upward_imports(graph: dict[str, dict[str, int]], modules: dict[str, Path]) -> list[str]:
    out = []
    for module, edges in sorted(graph.items()):
        for target, line in sorted(edges.items()):
            if layer_of(target) > layer_of(module):  # type: ignore[operator]
                out.append(f"{_rel(modules[module])}:{line}: {module} (layer {layer_of(module)}) "
                           f"imports {target} (layer {layer_of(target)})")  # fmt: skip
    return out


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) per strongly connected group of files."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph has ~100 nodes, recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_in(group, graph) for group in groups]


def _cycle_in(group: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest path from the group's first member back to itself, inside the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    return [*paths[v], start]
                if w in members and w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    return group  # pragma: no cover - a strongly connected group always has a cycle


def outside_imports(modules: dict[str, Path]) -> list[str]:
    out = []
    for module, path in sorted(modules.items()):
        for target, line in imports_of(module, path, modules):
            top = target.split(".")[0]
            if top in FORBIDDEN_OUTSIDE or (top == "builders" and module not in BUILDER_DRIVERS):
                out.append(f"{_rel(path)}:{line}: {module} imports {target}")
    return out


def test_every_module_has_a_layer():
    missing = [m for m in module_files() if layer_of(m) is None]
    assert not missing, f"modules without a layer (add them to LAYERS here and to the README): {missing}"


def test_no_module_imports_a_higher_layer():
    modules = module_files()
    bad = upward_imports(import_graph(modules), modules)
    assert not bad, "imports of a higher layer:\n" + "\n".join(bad)


def test_no_import_cycles_between_files():
    found = cycles(import_graph(module_files()))
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_mrtasks_imports_no_outside_layer():
    bad = outside_imports(module_files())
    assert not bad, "mrtasks imports training/eval, or builders outside the dataset writer:\n" + "\n".join(bad)


def test_the_checks_can_fail(tmp_path):
    """The walker sees function-level and TYPE_CHECKING imports, relative imports and
    `from pkg import submodule`, and reports both an upward import and a cycle."""
    root = tmp_path / PACKAGE
    for sub in ("mathcheck", "rewards"):
        (root / sub).mkdir(parents=True)
        (root / sub / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "mathcheck" / "a.py").write_text("def f():\n    from mrtasks.rewards import b\n")
    (root / "rewards" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n")
    (root / "rewards" / "c.py").write_text("import mrtasks.rewards.b\n")
    modules = module_files(root)
    graph = import_graph(modules)
    assert graph["mrtasks.mathcheck.a"] == {"mrtasks.rewards.b": 2}
    assert graph["mrtasks.rewards.b"] == {"mrtasks.rewards.c": 3}
    assert cycles(graph) == [["mrtasks.rewards.b", "mrtasks.rewards.c", "mrtasks.rewards.b"]]
    (upward,) = upward_imports(graph, modules)
    assert upward.endswith("mrtasks.mathcheck.a (layer 1) imports mrtasks.rewards.b (layer 3)")
    assert layer_of("mrtasks.mathcheck.a") == 1 and layer_of("mrtasks.rewards.b") == 3 and layer_of("mrtasks") == 0
