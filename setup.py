"""Package discovery for the one installed namespace ``synthdp``.

The design card keeps ``oracles/``, ``queries/`` and ``datasets/`` at the
repository root; they install inside ``synthdp`` (``oracles/`` ->
``synthdp.oracles``, its subpackages with it).  Every package is found by
discovery, so a new subpackage ships without editing a list; ``tests/`` is
not installed.  Everything else lives in pyproject.toml.
"""

from setuptools import find_packages, setup

ROOT_FOLDERS = ("oracles", "queries", "datasets")

setup(
    packages=find_packages(include=["synthdp", "synthdp.*"])
    + [f"synthdp.{name}" for name in find_packages(include=[f"{f}{s}" for f in ROOT_FOLDERS for s in ("", ".*")])],
    package_dir={f"synthdp.{folder}": folder for folder in ROOT_FOLDERS},
)
