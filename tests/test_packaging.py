"""One installed namespace: the built wheel holds ``synthdp`` alone and works beside a foreign ``datasets``.

The repository keeps the design card's folders (``oracles/``, ``queries/``,
``datasets/``) at its root; they install as ``synthdp.oracles`` and so on.  A
package on the index that owns a top-level ``datasets`` (Hugging Face's) must
not be able to break synthdp, so the test installs the wheel and a stand-in
``datasets`` side by side, away from the checkout, and runs the commands.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: The layers, bottom to top; a module may import only from its own layer or below.
LAYERS = {
    "synthdp.core": 1, "synthdp.datasets": 1,
    "synthdp.queries": 2, "synthdp.oracles": 3,
    "synthdp.mechanisms": 4, "synthdp.methods": 5,
}
DRIVER = 6


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(REPO)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("synthdp-*.whl")
    return path


def test_wheel_installs_one_top_level_package(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert archive.read(top_level).decode().split() == ["synthdp"]
    assert {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")} == {"synthdp"}
    for package in ("oracles", "queries", "datasets", "bench", "core", "mechanisms", "methods"):
        assert f"synthdp/{package}/__init__.py" in names
    assert not any(name.startswith("synthdp/tests") or "adversarial" in name for name in names)


def test_installed_synthdp_works_beside_a_foreign_datasets_package(wheel, tmp_path):
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                           str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # A stand-in for Hugging Face's top-level package of the same name.
    (target / "datasets").mkdir()
    (target / "datasets" / "__init__.py").write_text("OWNER = 'someone else'\n")
    csv = tmp_path / "in.csv"
    csv.write_text("a,b\n" + "".join(f"{'xy'[i % 2]},{'uvw'[i % 3]}\n" for i in range(60)))
    env = {**os.environ, "PYTHONPATH": str(target)}
    work = tmp_path / "elsewhere"
    work.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=work, env=env)

    where = run("-c", "import datasets, synthdp, synthdp.datasets, synthdp.oracles, synthdp.queries; "
                      "print(datasets.OWNER); print(synthdp.__file__); print(synthdp.datasets.__file__)")
    assert where.returncode == 0, where.stderr
    owner, package, loaders = where.stdout.split("\n")[:3]
    assert owner == "someone else"
    assert package.startswith(str(target)) and loaders.startswith(str(target))

    generated = run("-m", "synthdp.cli", "generate", str(csv), "-o", str(tmp_path / "out.csv"), "--epsilon", "1",
                    "--delta", "1e-6", "--queries", "marginals:1", "--rounds", "2", "--seed", "0", "-q")
    assert generated.returncode == 0, generated.stderr
    assert (tmp_path / "out.csv").read_text().startswith("a,b\n")
    bench = run("-m", "synthdp.cli", "bench", "--help")
    assert bench.returncode == 0 and "accuracy" in bench.stdout, bench.stderr
    demo = run("-m", "synthdp.cli", "demo")
    assert demo.returncode == 0, demo.stderr


def _imports(path: Path) -> list[str]:
    """Absolute ``synthdp`` modules imported anywhere in ``path`` (top level or inside functions)."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found


def _layer(module: str) -> int | None:
    for prefix, layer in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return DRIVER if module.startswith("synthdp") else None


def _package_files() -> dict[str, Path]:
    roots = {"synthdp": REPO / "synthdp", "synthdp.oracles": REPO / "oracles", "synthdp.queries": REPO / "queries",
             "synthdp.datasets": REPO / "datasets"}
    files = {}
    for name, root in roots.items():
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join((name, *parts)).removesuffix(".__init__")] = path
    return files


def test_imports_point_down_and_never_at_the_old_top_level_names():
    for module, path in _package_files().items():
        own = _layer(module)
        for imported in _imports(path):
            top = imported.split(".")[0]
            assert top not in ("oracles", "queries", "datasets", "benchmarks"), f"{module} imports {imported}"
            target = _layer(imported)
            if target is not None and own is not None and imported != "synthdp._version":
                assert target <= own, f"{module} (layer {own}) imports {imported} (layer {target}): an arrow up"
