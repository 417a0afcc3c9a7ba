"""The wheel: built from a clean copy of the committed tree, it installs, imports and runs on its own.

The repository keeps the design card's folders (``oracles/``, ``queries/``,
``datasets/``) at its root; they install as ``synthdp.oracles`` and so on,
and every package is found by discovery (setup.py), so a new subpackage
cannot be left out of the wheel.  The wheel is built from ``git archive
HEAD`` (no stale ``build/`` or untracked file can hide a missing module),
installed without ``-e`` into a fresh virtual environment whose only other
packages are the test environment's installed dependencies, and run there
from a folder away from the checkout.  A package on the index that owns a
top-level ``datasets`` (Hugging Face's) must not be able to break synthdp,
so one test installs the wheel beside a stand-in ``datasets``.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from synthdp.core.machine import proc_bytes

#: Builds, installs and imports the package in fresh processes: ``-m 'not packaging'`` leaves them out.
pytestmark = pytest.mark.packaging

REPO = Path(__file__).resolve().parents[2]
#: The layers, bottom to top; a module may import only from its own layer or below.
LAYERS = {
    "synthdp.core": 1, "synthdp.files": 1, "synthdp.datasets": 1, "synthdp.accounting": 2,
    "synthdp.queries": 3, "synthdp.oracles": 4,
    "synthdp.mechanisms": 5, "synthdp.methods": 6,
}
DRIVER = 7


#: Source folder of each installed package root.
ROOTS = {"synthdp": "synthdp", "synthdp.oracles": "oracles", "synthdp.queries": "queries",
         "synthdp.datasets": "datasets"}


def _modules(root: Path) -> set[str]:
    """Installed module paths (``synthdp/oracles/base.py``, ...) of every ``.py`` file of a source tree."""
    found = set()
    for package, folder in ROOTS.items():
        for path in (root / folder).rglob("*.py"):
            found.add("/".join((*package.split("."), *path.relative_to(root / folder).parts)))
    return found


@pytest.fixture(scope="module")
def committed(tmp_path_factory) -> Path:
    """A copy of the committed tree (``git archive HEAD``), away from the working tree's leftovers."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    out = tmp_path_factory.mktemp("committed")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", "HEAD"], capture_output=True)
    assert archive.returncode == 0, archive.stderr
    unpacked = subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, capture_output=True)
    assert unpacked.returncode == 0, unpacked.stderr
    return out


@pytest.fixture(scope="module")
def wheel(committed, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-q", "-w", str(out), str(committed)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("synthdp-*.whl")
    return path


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> Path:
    """A new virtual environment holding the wheel (not editable); dependencies seen through a ``.pth`` line.

    The line adds the test environment's site-packages as a plain folder, so
    its ``.pth`` files (the editable install of this checkout) are not run
    and ``import synthdp`` can only find the wheel.  Offline: no index.
    """
    venv = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = sysconfig.get_path("purelib")
    Path(site, "test-dependencies.pth").write_text(ours + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-index", str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return venv


def test_every_module_of_the_committed_tree_is_in_the_wheel(committed, wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.endswith(".py")}
    source = _modules(committed)
    assert "synthdp/tuning/__init__.py" in source
    assert source - shipped == set(), "modules missing from the wheel"
    assert shipped - source == set(), "files in the wheel that are not in the committed tree"


def test_the_wheel_imports_and_runs_in_a_fresh_virtual_environment(committed, fresh_venv, tmp_path):
    bin_ = fresh_venv / "bin"
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*args], capture_output=True, text=True, cwd=work, env=env)

    modules = sorted(path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
                     for path in _modules(committed))
    where = run(str(bin_ / "python"), "-c", "import importlib, sys, synthdp; "
                f"[importlib.import_module(m) for m in {modules!r}]; print(synthdp.__file__)")
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip().startswith(str(fresh_venv)), where.stdout
    helped = run(str(bin_ / "synthdp"), "--help")
    assert helped.returncode == 0 and "generate" in helped.stdout, helped.stderr
    csv = tmp_path / "in.csv"
    # enough rows for the learned categories' threshold (a smaller table is refused: nothing would be kept)
    csv.write_text("a,b\n" + "".join(f"{'xy'[i % 2]},{'uvw'[i % 3]}\n" for i in range(2000)))
    out = tmp_path / "out.csv"
    generated = run(str(bin_ / "synthdp"), "generate", str(csv), "-o", str(out), "--epsilon", "1", "--delta", "1e-6",
                    "--queries", "marginals:1", "--rounds", "2", "--seed", "0", "-q")
    assert generated.returncode == 0, generated.stderr
    assert out.read_text().startswith("a,b\n")


def test_wheel_installs_one_top_level_package(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert archive.read(top_level).decode().split() == ["synthdp"]
    assert {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")} == {"synthdp"}
    for package in ("oracles", "queries", "datasets", "bench", "core", "mechanisms", "methods"):
        assert f"synthdp/{package}/__init__.py" in names
    assert not any(name.startswith("synthdp/tests") or "adversarial" in name for name in names)


@pytest.mark.slow  # a second install and a real release from it (44 s on 2 cores); the wheel test stays in the suite
def test_installed_synthdp_works_beside_a_foreign_datasets_package(wheel, tmp_path):
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                           str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # A stand-in for Hugging Face's top-level package of the same name.
    (target / "datasets").mkdir()
    (target / "datasets" / "__init__.py").write_text("OWNER = 'someone else'\n")
    csv = tmp_path / "in.csv"
    # enough rows for the learned categories' threshold (a smaller table is refused: nothing would be kept)
    csv.write_text("a,b\n" + "".join(f"{'xy'[i % 2]},{'uvw'[i % 3]}\n" for i in range(2000)))
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
    files = {}
    for name, folder in ROOTS.items():
        root = REPO / folder
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


def _fresh_interpreter(code: str) -> None:
    """Run ``code`` in a new Python process (a clean ``sys.modules``); its assertions fail the test."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_importing_the_package_loads_no_driver_and_no_solver():
    """``import synthdp.core...`` stays light; the public names still resolve on first use."""
    code = ("import sys, synthdp, synthdp.core.domain, synthdp.accounting.ledger\n"
            "heavy = [m for m in ('synthdp.api', 'synthdp.plan', 'mbi', 'ortools', 'jax') if m in sys.modules]\n"
            "assert not heavy, heavy\n"
            "assert synthdp.generate_synthetic.__module__ == 'synthdp.api'\n"
            "assert 'synthdp.api' in sys.modules\n"
            "assert set(synthdp.__all__) <= set(dir(synthdp))\n")
    _fresh_interpreter(code)


#: The libraries ``synthdp --help`` must not load (each costs tenths of a second to import).
HEAVY = ("pandas", "numpy", "numba", "ortools", "scipy")


@pytest.mark.parametrize("module", ["synthdp.cli", "synthdp.cli.parser"])
def test_importing_the_command_line_loads_no_numerical_library(module):
    """The dispatcher and the parser load none of :data:`HEAVY`: only the module of the command that runs does."""
    code = (f"import {module}, sys; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("argv, status", [(["--help"], 0), (["generate", "--help"], 0), (["evaluate", "--help"], 0),
                                          (["--version"], 0), (["generate", "--bad-flag"], 2),
                                          (["generate", "in.csv", "-o", "out.csv", "--epsilon", "1", "--bad-flag"], 2)])
def test_help_version_and_usage_errors_answer_without_the_library(argv, status):
    """The parser is built from light modules: ``--help``, ``--version`` and a mistyped flag load none of
    :data:`HEAVY`; a usage error exits 2 with the usage line and what was wrong."""
    code = ("import sys, synthdp.cli\n"
            "try:\n"
            f"    synthdp.cli.main({argv!r})\n"
            "except SystemExit as exc:\n"
            "    code = exc.code\n"
            f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r})\n"
            "print(code, heavy, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stderr.splitlines()[-1] == f"{status} []", done.stderr
    if status == 2:
        wrong = ("unrecognized arguments: --bad-flag" if "in.csv" in argv and "--bad-flag" in argv
                 else "the following arguments are required")
        assert done.stderr.startswith("usage: synthdp ") and f"error: {wrong}" in done.stderr
    else:
        assert done.stdout.startswith("synthdp " if argv == ["--version"] else "usage: synthdp")


def test_an_unknown_method_is_refused_with_the_registry_names_before_reading(tmp_path, capsys):
    """The registry is the one list of methods: ``--method`` is checked against it when the run is configured
    (loading the methods), before the input is read (it does not exist here) and with status 2."""
    from synthdp.cli import main

    out = tmp_path / "out.csv"
    assert main(["generate", str(tmp_path / "in.csv"), "-o", str(out), "--epsilon", "1", "--method", "best"]) == 2
    assert "method 'best' is not available; choose one of ['auto', 'measure', 'game']" in capsys.readouterr().err
    assert not out.exists()


def test_a_model_is_fitted_without_private_pgms_library():
    """The junction tree is synthdp's own: fitting a graphical model loads neither ``mbi`` nor JAX, and neither is
    a dependency (together they were a third of an install)."""
    code = ("import sys\n"
            "import numpy as np\n"
            "from synthdp.core.domain import Domain\n"
            "from synthdp.methods.measure.estimators import NoisyMarginal, fit\n"
            "model = fit(Domain(('a', 'b', 'c'), (2, 3, 2)), [NoisyMarginal((0, 1), np.arange(6.0), 1.0),\n"
            "                                             NoisyMarginal((1, 2), np.arange(6.0), 1.0)], iters=5)\n"
            "assert model.cliques == [(0, 1), (1, 2)]\n"
            "loaded = [m for m in ('mbi', 'jax', 'jaxlib', 'networkx') if m in sys.modules]\n"
            "assert not loaded, loaded\n")
    _fresh_interpreter(code)
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    assert not [r for r in required if re.match(r"(mbi|jax|jaxlib)\b", r)]


def test_proc_bytes_reads_a_kibibyte_field_and_says_none_when_missing(tmp_path):
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nVmPeak:\t  2048 kB\nVmHWM:\t  1536 kB\n")
    assert proc_bytes(status, "VmHWM") == 1536 * 1024
    assert proc_bytes(status, "VmSwap") is None
    assert proc_bytes(tmp_path / "absent", "MemTotal") is None


def test_the_test_lock_pins_every_package_by_version_and_not_synthdp_itself():
    """requirements/test.lock is a pip constraints file of ``name==version`` lines (make lock writes it): a line
    naming synthdp (a ``synthdp @ file://...`` from the machine that made it) makes every fresh install fail."""
    lines = [line for line in (REPO / "requirements" / "test.lock").read_text().splitlines() if line.strip()]
    assert len(lines) > 20
    bad = [line for line in lines if not re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.+!-]*", line)
           or line.lower().startswith(("synthdp", "pip==", "setuptools==", "wheel=="))]
    assert not bad, bad
    names = {line.split("==")[0].lower() for line in lines}
    assert {"numpy", "pandas", "numba", "scipy", "ortools", "pytest"} <= names and not names & {"mbi", "jax"}
