"""The shape of the code, checked so that it stays that way.

* the driver and the methods have no function over :data:`MAX_LINES` lines;
* no ``isinstance`` on a concrete query class outside the queries package (behaviour lives on the classes);
* at most :data:`MAX_INNER_IMPORTS` imports of synthdp's own modules inside a function, each with its reason in a
  comment on its line (an optional extra: ``# optional extra (...)``);
* no cycle among synthdp's modules, counting every import (inside functions and ``TYPE_CHECKING`` too);
* every test file sits beside the part of the package it tests (``tests/<part>/`` for ``synthdp/<part>/``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 60
#: The driver (the top of the layers) and the generation methods.
SHORT = [*(REPO / "synthdp").glob("*.py"), *(REPO / "synthdp" / "methods").rglob("*.py")]
#: Every installed source folder except the queries package itself.
OUTSIDE_QUERIES = [p for folder in ("synthdp", "oracles", "datasets") for p in (REPO / folder).rglob("*.py")]
OWN = ("synthdp", "oracles", "queries", "datasets")
#: Imports of the package's own modules inside a function, at most (each says why on its line).
MAX_INNER_IMPORTS = 10
#: A reason: a comment of two words or more after the import (``# optional extra (pyarrow)``, ``# cycle: ...``).
REASON = re.compile(r"#\s*\S+\s+\S+")


def _functions(tree: ast.AST):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _name(path: Path) -> str:
    return str(path.relative_to(REPO) if path.is_relative_to(REPO) else path)


def test_no_long_function_in_the_driver_or_the_methods():
    long = [f"{_name(p)}:{f.lineno} {f.name} ({f.end_lineno - f.lineno + 1} lines)"
            for p in SHORT for f in _functions(ast.parse(p.read_text()))
            if f.end_lineno - f.lineno + 1 > MAX_LINES]
    assert not long, f"functions over {MAX_LINES} lines (split them into named steps):\n" + "\n".join(long)


def _query_classes() -> set[str]:
    """Every class the queries package defines, except the abstract base every caller may test for."""
    names = {n.name for p in (REPO / "queries").rglob("*.py") for n in ast.walk(ast.parse(p.read_text()))
             if isinstance(n, ast.ClassDef)}
    return names - {"QueryClass"}


def _tested_names(call: ast.Call) -> set[str]:
    target = call.args[1] if len(call.args) > 1 else None
    elements = target.elts if isinstance(target, ast.Tuple) else [target]
    return {e.id if isinstance(e, ast.Name) else e.attr for e in elements if isinstance(e, (ast.Name, ast.Attribute))}


def test_no_isinstance_on_a_concrete_query_class_outside_the_queries_package():
    concrete = _query_classes()
    assert {"Conjunctions", "Workload", "Halfspace"} <= concrete  # the scan sees the classes
    found = [f"{_name(p)}:{n.lineno} isinstance(..., {sorted(_tested_names(n) & concrete)})"
             for p in OUTSIDE_QUERIES for n in ast.walk(ast.parse(p.read_text()))
             if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "isinstance" and _tested_names(n) & concrete]
    assert not found, "move this behaviour onto the query classes:\n" + "\n".join(found)


def _imports_inside_functions(path: Path) -> list[tuple[str, bool]]:
    """Each import of the package's own modules (relative ones too) inside a function of ``path``, once even in a
    nested function: ``("path:line statement", whether its line gives a reason)``."""
    lines = path.read_text().splitlines()
    found = {}
    for f in _functions(ast.parse(path.read_text())):
        for node in ast.walk(f):
            if isinstance(node, ast.ImportFrom):
                own = node.level > 0 or (node.module or "").split(".")[0] in OWN
            elif isinstance(node, ast.Import):
                own = any(a.name.split(".")[0] in OWN for a in node.names)
            else:
                continue
            line = lines[node.lineno - 1]
            if own:
                found[node.lineno] = (f"{_name(path)}:{node.lineno} {line.strip()}", bool(REASON.search(line)))
    return [found[n] for n in sorted(found)]


def test_own_modules_are_imported_at_the_top():
    """An import inside a function hides a dependency from the module's top (and from a reader); a few are
    needed (an optional extra, a heavy module only one path uses): at most MAX_INNER_IMPORTS, each saying why."""
    sources = [p for folder in (*OWN,) for p in (REPO / folder).rglob("*.py")]
    found = [hit for p in sources for hit in _imports_inside_functions(p)]
    unexplained = [where for where, reason in found if not reason]
    assert not unexplained, ("import these at the top of the module, or say why on the import's line (an optional "
                             "extra: '# optional extra (...)'):\n" + "\n".join(unexplained))
    assert len(found) <= MAX_INNER_IMPORTS, (f"{len(found)} imports of the package's own modules inside functions, "
                                             f"over {MAX_INNER_IMPORTS}: import them at the top of the module:\n"
                                             + "\n".join(where for where, _ in found))


def test_the_inner_import_count_sees_what_there_is(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import json\n\ndef f():\n    from synthdp.core import schema\n"
                      "    import oracles.base  # optional extra (ortools)\n    from . import sibling\n"
                      "    import json\n\n    def g():\n        from queries.base import QueryClass  # noqa\n")
    found = _imports_inside_functions(source)
    assert [(where.split(" ", 1)[0].rsplit(":", 1)[1], reason) for where, reason in found] == [
        ("4", False), ("5", True), ("6", False), ("10", False)]


def _module_files() -> dict[str, Path]:
    """Every installed module by its dotted name (``synthdp.oracles.base`` for ``oracles/base.py``)."""
    files = {}
    for folder in OWN:
        package = ("synthdp",) if folder == "synthdp" else ("synthdp", folder)
        for path in (REPO / folder).rglob("*.py"):
            parts = (*package, *path.relative_to(REPO / folder).with_suffix("").parts)
            files[".".join(parts).removesuffix(".__init__")] = path
    return files


def _imported(node: ast.Import | ast.ImportFrom, module: str, files: dict[str, Path]) -> set[str]:
    """The modules of ``files`` an import statement in ``module`` names: ``from P import M`` names ``P.M`` when
    that is a module, else ``P``."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & set(files)
    base = node.module or ""
    if node.level:  # relative: from the package of ``module``
        package = module.split(".")[:len(module.split(".")) - node.level + (files[module].name == "__init__.py")]
        base = ".".join([*package, *([node.module] if node.module else [])])
    named = {f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base for alias in node.names}
    return named & set(files)


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of the others, wherever the statement is (top, function, ``TYPE_CHECKING`` block).

    A package's ``__init__`` that importing one of its modules runs is no edge of its own, nor is an
    ``import_module`` by name.
    """
    return {module: {m for node in ast.walk(ast.parse(path.read_text()))
                     if isinstance(node, (ast.Import, ast.ImportFrom))
                     for m in _imported(node, module, files)} - {module}
            for module, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or ``[]`` when it has none (depth-first search)."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = "done"
        path.pop()
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_the_modules_import_each_other_without_a_cycle():
    """A cycle, even through an import inside a function or for type checkers only, ties two modules together: one
    cannot be read, tested or loaded without the other.  Give it a direction (what both need in a module below
    both, or passed in)."""
    graph = import_graph(_module_files())
    assert {"synthdp.api", "synthdp.core.schema", "synthdp.oracles.base"} <= set(graph)
    assert "synthdp.core.schema" in graph["synthdp.api"]  # the scan sees the imports
    cycle = find_cycle(graph)
    assert not cycle, "these modules import each other: " + " -> ".join(cycle)


def test_imports_inside_functions_and_for_type_checkers_are_edges(tmp_path):
    sources = {"synthdp.a": "def f():\n    from synthdp.b import g\n",
               "synthdp.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from synthdp import a\n",
               "synthdp.c": "import synthdp.b\nfrom synthdp.b import f\n"}
    files = {}
    for module, text in sources.items():
        files[module] = tmp_path / f"{module}.py"
        files[module].write_text(text)
    graph = import_graph(files)
    assert graph == {"synthdp.a": {"synthdp.b"}, "synthdp.b": {"synthdp.a"}, "synthdp.c": {"synthdp.b"}}
    assert find_cycle(graph) == ["synthdp.a", "synthdp.b", "synthdp.a"]


@pytest.mark.parametrize("source, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, []),
])
def test_the_cycle_search_finds_what_there_is(source, expected):
    assert find_cycle(source) == expected


@pytest.mark.parametrize("source, expected", [
    ("def f():\n" + "    x = 1\n" * 60, 1),
    ("def f():\n" + "    x = 1\n" * 59, 0),
])
def test_the_length_rule_counts_what_it_says(source, expected, tmp_path):
    long = [f for f in _functions(ast.parse(source)) if f.end_lineno - f.lineno + 1 > MAX_LINES]
    assert len(long) == expected


#: Test folders that hold no one package part: audits that run several mechanisms and methods against their
#: privacy claims (privacy/), and checks of the repository itself (docs, citations, packaging, this file, pins).
CROSS_CUTTING = {"privacy", "repository"}


def test_tests_are_laid_out_like_the_package():
    """Each test file sits where the part it tests sits: ``tests/<part>/`` for ``synthdp/<part>/`` (or the root
    packages ``queries/``, ``oracles/``, ``datasets/``), the top of ``tests/`` for a top module of ``synthdp/``
    (``test_<module>...``), or a cross-cutting folder; so a new flat or misplaced file is caught."""
    top_modules = {p.stem for p in (REPO / "synthdp").glob("*.py")} - {"__init__", "_version"}
    misplaced = []
    for path in (REPO / "tests").rglob("test_*.py"):
        folder = path.parent.relative_to(REPO / "tests")
        if folder == Path("."):
            ok = any(path.stem == f"test_{m}" or path.stem.startswith(f"test_{m}_") for m in top_modules)
        else:
            ok = (folder.parts[0] in CROSS_CUTTING or (REPO / "synthdp" / folder).is_dir()
                  or (len(folder.parts) == 1 and folder.parts[0] in OWN and (REPO / folder).is_dir()))
        if not ok:
            misplaced.append(str(path.relative_to(REPO)))
    assert not misplaced, ("test files outside the package's layout (put each beside the part it tests, "
                           f"tests/<part>/ for synthdp/<part>/): {misplaced}")
