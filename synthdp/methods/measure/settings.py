"""Select-measure-estimate's settings from text: ``NAME=VALUE`` pairs read against the fields of
:class:`~synthdp.methods.measure.algorithm.MeasureOptions`.

The settings are declared once, as the fields of ``MeasureOptions`` with their
defaults and ``#:`` comments; the Python API takes the object itself
(``measure_options=MeasureOptions(...)``) and the command line
``--measure-option NAME=VALUE``, converted here by each field's annotation.
A new field needs nothing else to reach either.  Public settings: no privacy
cost.
"""

from __future__ import annotations

import dataclasses
import difflib
from fractions import Fraction
from typing import Any, Callable, Sequence

from synthdp.core.errors import InputError
from synthdp.methods.measure.algorithm import MeasureOptions

#: How a value is read for each scalar annotation a field of ``MeasureOptions`` may have.
def _read_bool(text: str) -> bool:
    """``true``/``false`` (any case; also ``1``/``0``, ``yes``/``no``) as a bool; anything else is refused."""
    words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
    if text.lower() not in words:
        raise ValueError(text)
    return words[text.lower()]


READERS: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "Fraction": Fraction, "bool": _read_bool,
                                             "str": str}


def read_value(annotation: str, text: str) -> Any:
    """``text`` as a value of the annotation ``annotation`` (``int``, ``float``, ``Fraction``, ``bool``, ``str``,
    each ``| None``)."""
    kinds = [kind.strip() for kind in annotation.split("|")]
    if "None" in kinds and text.strip().lower() == "none":
        return None
    scalar = [kind for kind in kinds if kind != "None"]
    if len(scalar) != 1 or scalar[0] not in READERS:
        raise TypeError(annotation)
    return READERS[scalar[0]](text.strip())


def measure_options_from_text(pairs: Sequence[str], *, flag: str = "--measure-option") -> MeasureOptions | None:
    """``MeasureOptions`` with each ``NAME=VALUE`` of ``pairs`` set (None when there are none).

    Refuses, naming the setting and what to write, an unknown name (with the
    nearest valid ones), a setting given twice, a value that does not read as
    its field's type, and a setting that is not one number (set it from Python).
    """
    if not pairs:
        return None
    fields = {f.name: f for f in dataclasses.fields(MeasureOptions)}
    values: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise InputError(f"{flag} expects NAME=VALUE, got {pair!r} (e.g. {flag} rounds_per_attribute=4)")
        if name not in fields:
            near = difflib.get_close_matches(name, list(fields), n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(map(repr, near))}?" if near else f"valid settings: {', '.join(fields)}"
            raise InputError(f"{flag}: unknown setting {name!r} of select-measure-estimate; {hint}")
        if name in values:
            raise InputError(f"{flag} gives {name!r} twice; give each setting once")
        try:
            values[name] = read_value(fields[name].type, text)
        except TypeError:
            raise InputError(f"{flag}: {name!r} is not one number and cannot be set from the command line; set it "
                             "from Python, measure_options=MeasureOptions(...)") from None
        except (ValueError, ZeroDivisionError):
            raise InputError(f"{flag}: cannot read {name}={text!r} as {fields[name].type} (a fraction such as 1/2 "
                             "where the setting is a Fraction)") from None
    return MeasureOptions(**values)
