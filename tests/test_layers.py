"""Layers point one way: no module imports a layer above its own.

    lexpipe/     entry points: CLI, API app, runner, Prefect flows
    assets/      Dagster bindings
    pipelines/   steps: answers > benchmarks > subscriptions > tools > retrieval > resolver > reads > citations > case_law >
                 statutes > shared
    connectors/  sources and clients (HTTP, landing zone, ELI, Open Legal Data, LLM)
    schemas/     contracts: act registry, Arrow schemas, GX suites, ES mappings
    core/        storage layout, atomic writes, settings

Every import counts, also one inside a function (a lazy import is still a dependency). Run
``python tests/test_layers.py [ROOT]`` to list the upward imports of any checkout.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("core", "schemas", "connectors", "pipelines", "assets", "lexpipe")
# inside pipelines/: a package may import those of its rank or below
PIPELINE_RANK = {"pdf_lines": 0, "chunking": 0, "validation": 0, "linear_model": 0, "statutes": 1,
                 "case_law": 2, "citations": 3, "reads": 3.5, "resolver": 3.7, "retrieval": 4, "tools": 4.2,
                 "subscriptions": 4.5,
                 "benchmarks": 5, "answers": 6}


def _rank(module: str) -> tuple[int, float] | None:
    parts = module.split(".")
    if parts[0] not in LAYERS:
        return None
    sub = PIPELINE_RANK.get(parts[1], -1) if parts[0] == "pipelines" and len(parts) > 1 else -1
    return LAYERS.index(parts[0]), sub


def imports_of(path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # "from pipelines.retrieval import a" may import the submodule pipelines.retrieval.a:
            # keep the name; callers walk up the dotted path to the module it lives in
            out += [target if a.name == "*" else f"{target}.{a.name}" for a in node.names]
    return out


def module_of(target: str, root: Path) -> str:
    """``core.layout.Layout`` → ``core.layout``: the longest prefix that is a module or package."""
    parts = target.split(".")
    for n in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:n])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return ".".join(parts[:n])
    return target


def upward_imports(root: Path = REPO) -> list[str]:
    """``importer -> imported`` for every import of a higher layer (or a higher pipelines package)."""
    found = []
    for top in LAYERS:
        for path in sorted((root / top).rglob("*.py")) if (root / top).is_dir() else ():
            module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            own = _rank(module)
            for target in imports_of(path, module):
                target = module_of(target, root)
                theirs = _rank(target)
                if own is None or theirs is None:
                    continue
                upward = theirs[0] > own[0] or (theirs[0] == own[0] == LAYERS.index("pipelines")
                                                 and own[1] >= 0 and theirs[1] > own[1])
                if upward:
                    found.append(f"{module} -> {target}")
    return sorted(set(found))


def test_no_module_imports_a_higher_layer() -> None:
    upward = upward_imports()
    assert not upward, "imports that point up a layer:\n" + "\n".join(upward)


def import_cycles(root: Path = REPO) -> list[list[str]]:
    """Groups of modules that import each other in a circle (strongly connected components)."""
    modules = {}
    for top in LAYERS:
        for path in sorted((root / top).rglob("*.py")) if (root / top).is_dir() else ():
            modules[".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for target in imports_of(path, module):
            while target and target not in modules:
                target = target.rsplit(".", 1)[0] if "." in target else ""
            # a package's __init__ is imported by its submodules' import: not a dependency of theirs
            if target and target != module and not module.startswith(target + "."):
                targets.add(target)
        graph[module] = targets
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycles() -> None:
    cycles = import_cycles()
    assert not cycles, "modules importing each other in a circle:\n" + "\n".join(" ⇄ ".join(c) for c in cycles)


def test_every_pipelines_package_has_a_rank() -> None:
    packages = {p.name if p.is_dir() else p.stem for p in (REPO / "pipelines").iterdir()
                if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")}
    assert packages <= set(PIPELINE_RANK), f"rank these in PIPELINE_RANK: {sorted(packages - set(PIPELINE_RANK))}"


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The rule can fail: a connector importing a pipeline, and retrieval importing answers."""
    for rel, text in {"connectors/x.py": "from pipelines.statutes.store import CorpusStore\n",
                      "pipelines/retrieval/y.py": "def f():\n    from pipelines.answers import types\n",
                      "pipelines/answers/z.py": "from pipelines.retrieval import y\n",
                      "core/ok.py": "import json\n", "pipelines/statutes/store.py": "",
                      "pipelines/answers/types.py": ""}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert upward_imports(tmp_path) == ["connectors.x -> pipelines.statutes.store",
                                        "pipelines.retrieval.y -> pipelines.answers.types"]


def test_the_check_sees_a_cycle(tmp_path: Path) -> None:
    for rel, text in {"pipelines/retrieval/a.py": "from pipelines.retrieval.b import x\n",
                      "pipelines/retrieval/b.py": "def x():\n    from pipelines.retrieval import a\n",
                      "pipelines/retrieval/c.py": "from pipelines.retrieval import a\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert import_cycles(tmp_path) == [["pipelines.retrieval.a", "pipelines.retrieval.b"]]


if __name__ == "__main__":
    found = upward_imports(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else REPO)
    print("\n".join(found))
    print(f"{len(found)} upward imports")
