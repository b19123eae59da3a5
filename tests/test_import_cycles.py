"""No import cycles in attune_judge: neither between modules nor between its packages.

The imports are read from the source with ``ast`` (nothing is imported): every ``import`` and
``from ... import`` anywhere in a module counts, also those inside functions (lazy imports
still make a loop a reader has to follow) and under ``TYPE_CHECKING``. ``from pkg import
name`` points at the submodule ``pkg.name`` when that is a module, otherwise at ``pkg``
(its ``__init__``). Importing a submodule runs its parents' ``__init__``; that implicit edge is
not counted (a package re-exporting its own private modules is the project's layout).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "attune_judge"


def _modules(src: Path = SRC) -> dict[str, tuple[Path, bool]]:
    out: dict[str, tuple[Path, bool]] = {}
    for path in sorted((src / ROOT).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        out[".".join(parts)] = (path, is_pkg)
    return out


def _targets(name: str, path: Path, is_pkg: bool, modules: Mapping[str, object]) -> set[str]:
    package = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            subs = [f"{base}.{a.name}" for a in node.names]
            if all(s in modules for s in subs):
                found.update(subs)
            else:
                found.add(base)
                found.update(s for s in subs if s in modules)
    return {t for t in found if t in modules and t != name}


@functools.cache
def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module → the attune_judge modules it imports."""
    modules = _modules(src)
    return {m: _targets(m, p, pkg, modules) for m, (p, pkg) in modules.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def package_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The module graph collapsed to the top-level packages (``attune_judge.report`` ...)."""
    out: dict[str, set[str]] = {}
    for mod, targets in graph.items():
        src = _package_of(mod)
        out.setdefault(src, set()).update(
            t for t in map(_package_of, targets) if t != src and t != ROOT
        )
    return out


def _edges(graph: Mapping[str, set[str]], comp: list[str]) -> Iterator[str]:
    members = set(comp)
    for v in comp:
        for w in sorted(graph[v] & members):
            yield f"{v} -> {w}"


def test_the_checker_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_checker_reads_lazy_and_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / ROOT / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / ROOT / "__init__.py").write_text("")
    # private unit: the import-graph reader, on fake private modules it writes
    (pkg / "__init__.py").write_text("from attune_judge.sub._a import f\n")
    (pkg / "_a.py").write_text("def f():\n    from . import _b\n")
    (pkg / "_b.py").write_text("from attune_judge.sub import _a\n")
    graph = import_graph(tmp_path)
    assert graph["attune_judge.sub._a"] == {"attune_judge.sub._b"}
    assert graph["attune_judge.sub._b"] == {"attune_judge.sub._a"}
    assert cycles(graph) == [["attune_judge.sub._a", "attune_judge.sub._b"]]


def test_no_import_cycle_between_modules() -> None:
    graph = import_graph()
    assert len(graph) > 100  # the whole package was read
    found = cycles(graph)
    assert found == [], "\n".join(e for comp in found for e in _edges(graph, comp))


def test_no_import_cycle_between_packages() -> None:
    graph = package_graph(import_graph())
    assert {"attune_judge.calibration", "attune_judge.report"} <= set(graph)
    found = cycles(graph)
    assert found == [], "\n".join(e for comp in found for e in _edges(graph, comp))


def test_calibration_is_a_bottom_layer() -> None:
    # the statistics import no other attune_judge package except data records, errors and
    # the bottom module holding the one default bootstrap count
    graph = package_graph(import_graph())
    allowed = {"attune_judge.data", "attune_judge.errors", "attune_judge._bootstrap"}
    assert graph["attune_judge.calibration"] <= allowed


STATISTICS = ("agreement", "ppi", "preference", "probability", "ranking", "resampling")
"""calibration's statistics families (its other sub-package, ``render``, draws them)."""


def renderers_imported_by_statistics(graph: Mapping[str, set[str]]) -> dict[str, list[str]]:
    """Statistics module → the renderers it imports (``calibration.render``, ``report``)."""
    stats = tuple(f"{ROOT}.calibration.{f}" for f in STATISTICS)
    render = (f"{ROOT}.calibration.render", f"{ROOT}.report")
    return {
        m: sorted(t for t in targets if t.startswith(render))
        for m, targets in graph.items()
        if m.startswith(stats) and any(t.startswith(render) for t in targets)
    }


def test_statistics_never_import_a_renderer() -> None:
    graph = import_graph()
    families = {m.split(".")[2] for m in graph if m.startswith(f"{ROOT}.calibration.")}
    assert families == {*STATISTICS, "render", "_results", "_sensitivity_results"}
    assert renderers_imported_by_statistics(graph) == {}


def test_the_renderer_check_finds_one() -> None:
    cal = f"{ROOT}.calibration"
    graph = {
        f"{cal}.ppi._ppi_plus": {f"{cal}.render._markdown", f"{cal}.resampling._bootstrap"},
        f"{cal}.ranking._leaderboard": {f"{cal}.resampling._bootstrap"},
        f"{cal}.render._markdown": {f"{cal}.ranking._leaderboard"},
        f"{cal}.agreement._report": {f"{ROOT}.report._calibration"},
    }
    assert renderers_imported_by_statistics(graph) == {
        f"{cal}.ppi._ppi_plus": [f"{cal}.render._markdown"],
        f"{cal}.agreement._report": [f"{ROOT}.report._calibration"],
    }


def test_validate_sits_below_demo_and_cli() -> None:
    # validating a judge is a library the demo and the commands use, never the other way round
    graph = package_graph(import_graph())
    assert "attune_judge.validate" in graph["attune_judge.demo"]
    assert "attune_judge.validate" in graph["attune_judge.cli"]
    above = {"attune_judge.demo", "attune_judge.cli", "attune_judge.align"}
    assert graph["attune_judge.validate"].isdisjoint(above)


ARCHITECTURE = SRC.parent / "ARCHITECTURE.md"


def declared_graph(text: str) -> dict[str, set[str]]:
    """The package → imports table of ARCHITECTURE.md (``—``: none; parentheses are notes)."""
    out: dict[str, set[str]] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if line.startswith("| package | imports |"):
            break
    for line in lines:
        if not line.startswith("|"):
            break
        if line.startswith("|---"):
            continue
        left, right = (cell.strip() for cell in line.strip().strip("|").split("|"))
        right = re.sub(r"\([^)]*\)", "", right)
        targets = set() if right.strip() == "—" else {t.strip() for t in right.split(",")}
        for name in re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", left)):
            out[ROOT if name == ROOT else f"{ROOT}.{name}"] = {f"{ROOT}.{t}" for t in targets}
    return out


def test_the_architecture_table_is_the_package_graph() -> None:
    declared = declared_graph(ARCHITECTURE.read_text(encoding="utf-8"))
    actual = package_graph(import_graph())
    assert set(declared) == set(actual), "packages missing from or unknown to the table"
    wrong = {
        p: {"undeclared": sorted(actual[p] - declared[p]), "gone": sorted(declared[p] - actual[p])}
        for p in actual
        if actual[p] != declared[p]
    }
    assert wrong == {}, "update ARCHITECTURE.md's table (or the imports)"


def test_the_table_reader() -> None:
    text = "| package | imports |\n|---|---|\n| `a`, `b` | — |\n| `c` (x) | a, b (why) |\n\nafter"
    assert declared_graph(text) == {
        f"{ROOT}.a": set(),
        f"{ROOT}.b": set(),
        f"{ROOT}.c": {f"{ROOT}.a", f"{ROOT}.b"},
    }
