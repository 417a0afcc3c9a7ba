"""Exceptions raised by synthdp, and the warning that something escaped the privacy guarantee.

Every error names its culprit (column, row, parameter) and says what to do,
so a user reading only the message can fix the call.
"""

from __future__ import annotations


class SynthDPError(Exception):
    """Base class of every error synthdp raises on purpose.

    The message gives Python advice (keywords such as ``nullable=['col']``);
    ``cli`` is the same message with command-line advice (``--nullable col``),
    which the ``synthdp`` command prints instead (:meth:`for_cli`).
    """

    def __init__(self, *args, cli: str | None = None):
        super().__init__(*args)
        self.cli = cli

    def for_cli(self) -> str:
        """The message for the command line: its ``cli`` form when there is one."""
        return self.cli or str(self)

    def with_note(self, note: str) -> "SynthDPError":
        """This error with ``note`` added to both forms of its message, as a sentence of its own."""
        stop = "" if str(self).rstrip().endswith(".") else "."
        return type(self)(f"{self}{stop} {note}", cli=self.cli and f"{self.cli}{stop} {note}")


class SchemaError(SynthDPError, ValueError):
    """The data do not fit the schema, or a schema cannot be built from them."""


class InputError(SynthDPError, ValueError):
    """A parameter or an input file is invalid."""


class UnknownOptionError(InputError, TypeError):
    """A keyword that is not an option of the function it was given to (a ``TypeError`` too, as Python's own)."""


class OracleError(SynthDPError, RuntimeError):
    """An oracle cannot handle an instance (unsupported class, bad encoding)."""


class PrivacyError(SynthDPError, RuntimeError):
    """A private release cannot be completed without breaking its guarantee.

    Raised instead of substituting any other output (docs/privacy.md §2.7 R4):
    the whole release must then be treated as failed and not published.
    """


class InternalError(SynthDPError, RuntimeError):
    """synthdp reached a state its own code must never produce (a bug, not bad input).

    Raised instead of computing a wrong answer, e.g. an int64 index whose
    product of sizes would wrap (docs/privacy.md §10.1).
    """


class EngineError(SynthDPError, RuntimeError):
    """The counting pass could not complete (e.g. a worker kept dying); nothing was released."""


class PrivacyWarning(UserWarning):
    """Something was read off the private data outside the differential-privacy guarantee."""


class NotFittedError(InputError, AttributeError):
    """:meth:`~synthdp.api.Synthesizer.sample` (or a fitted attribute) was used before
    :meth:`~synthdp.api.Synthesizer.fit`."""
