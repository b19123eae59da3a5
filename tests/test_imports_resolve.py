"""Every name imported from the project resolves: in src, tests and benchmarks, including the
imports inside code strings that tests run in subprocesses (an installed-layout test, a CLI
child) and uses through a module alias (``from attune_judge import calibration as cal``;
``cal.X``).

The suite imports most of these anyway, but not the benchmarks (only ruff reads them, and ruff
does not resolve names) nor the strings; a trimmed ``__all__`` or a moved helper broke both
before. The check runs in a subprocess, so that importing every module (Ray, llama.cpp) leaves
the test process as it was.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import REPO_ROOT

CHECK = textwrap.dedent(
    r"""
    import ast, importlib, pathlib, re, sys

    FROM = re.compile(r"from\s+(attune_judge[\w.]*)\s+import\s+(\([^)]*\)|[^\n]*)")
    bad, modules = [], {}


    def module(name):
        if name not in modules:
            try:
                modules[name] = importlib.import_module(name)
            except Exception as exc:  # reported with the place that imports it
                modules[name] = exc
        return modules[name]


    def has(mod_name, attr):
        mod = module(mod_name)
        if isinstance(mod, Exception):
            return False
        return hasattr(mod, attr) or not isinstance(module(f"{mod_name}.{attr}"), Exception)


    n = 0
    for top in ("src", "tests", "benchmarks"):
        for path in sorted(pathlib.Path(top).rglob("*.py")):
            if path.name == "test_private_imports.py":
                continue  # its strings are made-up sources that the private-import rule reads
            text = path.read_text("utf-8")
            for m in FROM.finditer(text):  # also inside strings
                if m.group(1).startswith("attune_judge.sub"):
                    continue  # the made-up package of test_import_cycles.py's own checks
                where = f"{path}:{text[: m.start()].count(chr(10)) + 1}"
                if isinstance(module(m.group(1)), Exception):
                    bad.append(f"{where}: cannot import {m.group(1)}: {module(m.group(1))!r}")
                    continue
                body = re.sub(r"#[^\n]*", "", m.group(2)).strip().strip("()")
                for part in re.split(r"[,\n]", body):
                    found = re.match(r"[\s\"'(]*([A-Za-z_]\w*)", part)  # `a as b`, `a")`
                    if found and not has(m.group(1), found.group(1)):
                        bad.append(f"{where}: {m.group(1)} has no {found.group(1)}")
                n += 1
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            aliases = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "attune_judge"
                ):
                    for a in node.names:
                        full = f"{node.module}.{a.name}"
                        if not isinstance(module(full), Exception):
                            aliases[a.asname or a.name] = full
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        if a.name.startswith("attune_judge") and a.asname:
                            aliases[a.asname] = a.name
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in aliases
                    and not has(aliases[node.value.id], node.attr)
                ):
                    bad.append(f"{path}:{node.lineno}: {aliases[node.value.id]} has no {node.attr}")
    print(n)
    print("\n".join(bad))
    sys.exit(1 if bad else 0)
    """
)


def test_every_project_import_resolves() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    checked, _, bad = out.stdout.partition("\n")
    assert out.returncode == 0, bad or out.stderr[-3000:]
    assert int(checked) > 1000  # the walk found the project's imports
