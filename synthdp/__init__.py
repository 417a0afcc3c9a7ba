"""synthdp: differentially private synthetic tables with solver oracles."""

from synthdp._version import __version__

__all__ = ["__version__"]
