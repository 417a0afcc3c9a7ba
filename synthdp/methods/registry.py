"""The methods by name, in order of preference, and ``method="auto"``'s choice among them.

Adding a method is one package with a :class:`~synthdp.methods.base.Method`
(its settings, plan, run and release section) and one :func:`register` line
here: the registry is the one list of methods (a run checks
``method=`` against it before it reads anything), and the driver plans, runs and reports through it.

``auto`` chooses from public inputs only (:class:`~synthdp.methods.base.MethodInputs`),
so the choice costs no privacy:

1. options the caller set that only some methods read choose the first of them;
2. else the first method, in the order of :data:`METHODS` (measured preference,
   docs/benchmarks.md), that serves the inputs;
3. where it and others state data-independent error bounds (pure DP,
   docs/privacy.md §10.2), it is kept only if its bound is at most theirs
   wherever it says something; else the first rival's bound wins.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from synthdp.core.errors import InputError
from synthdp.methods.base import Method, MethodInputs
from synthdp.methods.game.method import GameMethod
from synthdp.methods.measure.method import MeasureMethod

#: Every method by name, in order of preference for ``auto``.
METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add ``method`` under its name (after the ones already there); refuses a name taken or ``auto``."""
    if method.name in METHODS or method.name == "auto":
        raise ValueError(f"a method named {method.name!r} is already registered (or reserved)")
    METHODS[method.name] = method
    return method


register(MeasureMethod())
register(GameMethod())


def release_defaults() -> dict[str, Any]:
    """Every registered method's release fields at their defaults (a copy): the one layout of every release."""
    return copy.deepcopy({name: value for method in METHODS.values() for name, value in method.release_defaults.items()})


def given_options(options: Mapping[str, Any], defaults: Mapping[str, Any]) -> tuple[str, ...]:
    """The options some method owns (:attr:`~synthdp.methods.base.Method.options`) that ``options`` sets to other
    than their ``defaults``: what ``auto`` chooses by (public: the caller's settings)."""
    return tuple(name for method in METHODS.values() for name in method.options
                 if options[name] is not defaults[name] and options[name] != defaults[name])


def method_names() -> tuple[str, ...]:
    """The names a caller may pass as ``method=``, ``auto`` first."""
    return ("auto", *METHODS)


def get_method(name: str) -> Method:
    """The method called ``name``; an unknown name is refused with the valid ones."""
    if name not in METHODS:
        raise InputError(f"method {name!r} is not available; choose one of {list(method_names())}")
    return METHODS[name]


def choose_method(requested: str, inputs: MethodInputs) -> tuple[Method, str]:
    """The method that runs and why: the caller's, or ``auto``'s choice (module docstring), public inputs only.

    A method asked for by name must read every method option the caller set;
    else the refusal names the method that reads them.
    """
    qc = inputs.query_class
    if requested != "auto":
        method = get_method(requested)
        foreign = [name for name in inputs.given if name not in method.reads(qc)]
        if foreign:
            owner = next((m for m in METHODS.values() if set(foreign) <= m.reads(qc)), None)
            where = f"the {owner.title}" if owner else "other methods"
            hint = f"pass method={owner.name!r}" if owner else "pass method='auto'"
            raise InputError(f"{foreign} are settings of {where}, which method={requested!r} does not read; drop "
                             f"them or {hint}")
        return method, "chosen by the caller"
    readers = [m for m in METHODS.values() if set(inputs.given) <= m.reads(qc)]
    if not readers:
        raise InputError(f"no one method reads all of {list(inputs.given)}; drop some of them")
    if len(readers) < len(METHODS):
        return readers[0], _asked_for(readers[0], inputs)
    return _serving(inputs)


def _asked_for(method: Method, inputs: MethodInputs) -> str:
    """Why ``auto`` took the method that reads the options the caller set."""
    qc = inputs.query_class
    others = [m for m in METHODS.values() if m is not method]
    named = [name for name in inputs.given if any(name not in m.reads(qc) for m in others)]
    skipped = [m for m in others if not set(inputs.given) <= m.reads(qc)]
    return (f"{method.title} settings given ({', '.join(named)}), so auto chose the {method.title} over "
            f"{' and '.join(m.title for m in skipped)}, which {'does' if len(skipped) == 1 else 'do'} not read "
            "them; drop them for the default method")


def _serving(inputs: MethodInputs) -> tuple[Method, str]:
    """The first method that serves ``inputs``, unless a later one's error bound is the smaller somewhere."""
    assessed = [(m, m.suitability(inputs)) for m in METHODS.values()]
    serving = [(m, s) for m, s in assessed if s.serves]
    if not serving:
        raise InputError("no method serves these inputs: " + "; ".join(s.reason for _, s in assessed))
    first, why = serving[0]
    declined = [s.reason for m, s in assessed[:assessed.index(serving[0])]]
    if declined:
        return first, f"{'; '.join(declined)}: the {first.title} serves it"
    rivals = [(m, s) for m, s in serving[1:] if s.bound is not None]
    if why.bound is None or not rivals:
        return first, why.reason
    numbers = "; ".join(s.bound.statement for _, s in serving if s.bound is not None)
    if all(why.bound.at_most_wherever_informative(s.bound) for _, s in rivals):
        return first, f"{why.reason}, whose bound is the smaller wherever it is below 1 ({numbers})"
    method, rival = rivals[0]
    return method, (f"{rival.reason}: the {method.title}'s bound is the smaller for some n where both say something "
                    f"({numbers})")
