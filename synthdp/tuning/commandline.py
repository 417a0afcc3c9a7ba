"""Old path of :mod:`synthdp.cli_tune`: kept until issue 29's second part (``synthdp.cli`` still imports it
here)."""

from synthdp.cli_tune import add_arguments, generate, requested

__all__ = ["add_arguments", "generate", "requested"]
