"""synthdp: differentially private synthetic tables with certified solver oracles.

Public entry points: :func:`generate_synthetic` and :class:`Synthesizer`
(imported lazily, so that ``queries`` and ``oracles`` can import the small
core modules of this package without a cycle).
"""

from synthdp._version import __version__

__all__ = ["Synthesizer", "SyntheticResult", "__version__", "generate_synthetic"]


def __getattr__(name: str):
    if name in ("generate_synthetic", "Synthesizer", "SyntheticResult"):
        from synthdp import api

        return getattr(api, name)
    raise AttributeError(f"module 'synthdp' has no attribute {name!r}")
