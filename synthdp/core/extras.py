"""Optional dependencies: plotting, the solver backends that no default path uses, Parquet, Dask, scikit-learn.

``pip install synthdp`` brings what the default paths need (the native exact
oracle, CP-SAT, brute force).  Plotting (``matplotlib``), the CBC and
MaxSAT backends (``pulp``, ``python-sat``), Parquet files and the Dask engine
(``pyarrow``, ``dask.distributed``) and the quality report's ML efficacy (``scikit-learn``) are extras:
``synthdp[plot]``, ``synthdp[solvers]``, ``synthdp[dask]``, ``synthdp[quality]``, or ``synthdp[all]``.
:func:`require` imports one of them where it is used, or says which extra to install: the one place an
optional package is imported.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from synthdp.core.errors import InputError

#: Import name -> (distribution, extra that installs it).
OPTIONAL = {
    "matplotlib": ("matplotlib", "plot"),
    "pulp": ("pulp", "solvers"),
    "pysat": ("python-sat", "solvers"),
    "pyarrow": ("pyarrow", "dask"),
    "distributed": ("dask[distributed]", "dask"),
    "sklearn": ("scikit-learn", "quality"),
    "threadpoolctl": ("scikit-learn", "quality"),
}


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module`` (e.g. ``"pysat.examples.rc2"``), or raise :class:`InputError` naming its extra."""
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is None or exc.name.split(".")[0] != top:
            raise
        dist, extra = OPTIONAL[top]
        raise InputError(f"{purpose} needs the optional package {dist!r}, which is not installed: "
                         f"pip install 'synthdp[{extra}]' (or 'synthdp[all]')") from None
