"""Public names a package imports on first use (PEP 562), so that importing it loads nothing else."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module

__all__ = ["lazy_names"]


def lazy_names(package: str, public: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module hooks ``__getattr__`` and ``__dir__`` of ``package`` whose public names are ``public`` (a name to
    the module it lives in): a name is imported the first time it is asked for, then kept in the package."""

    def __getattr__(name: str) -> object:
        if name not in public:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(public[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__
