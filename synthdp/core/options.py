"""How an option is declared: a dataclass field with its group and documentation, read by every front end.

:class:`synthdp.config.SynthesisConfig` and each method's settings
(:class:`synthdp.methods.game.settings.GameSettings`) declare their options
with :func:`option`; the signatures, the docstrings, the command's flags and
``--help`` are derived from those fields.  :func:`comment_docs` reads the
``#:`` comments above the fields of a settings dataclass, so that a setting
documented where it is declared needs nothing else to reach ``--help``.
:func:`refusing_unknown_keywords` refuses a misspelt keyword of an entry point with the nearest valid names.

No numpy or pandas here: the command line builds its flags without loading the library.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import inspect
import io
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from synthdp.core.errors import UnknownOptionError

F = TypeVar("F", bound=Callable[..., Any])

#: The groups of options, in the order documentation shows them: name -> heading.
GROUPS = {
    "privacy": "privacy: the budget and what it protects",
    "method": "method: what the release answers and how it is made",
    "game": "game: options of the synthetic-data game only (setting one makes method 'auto' choose the game)",
    "schema": "columns and schema: make the domain public instead of learning it privately",
    "engine": "engine: the counting pass over the records",
    "output": "output: the rows written (post-processing, no privacy cost)",
}


def option(default: Any = dataclasses.MISSING, *, group: str, doc: str) -> Any:
    """A declared option: its ``default``, ``group`` (a key of :data:`GROUPS`) and ``doc``."""
    if group not in GROUPS:
        raise ValueError(f"unknown option group {group!r}; one of {list(GROUPS)}")
    return dataclasses.field(default=default, metadata={"group": group, "doc": " ".join(doc.split())})


def nearest(name: str, valid: Sequence[str]) -> list[str]:
    """Up to three of the ``valid`` names nearest to a misspelt ``name`` (difflib), nearest first."""
    return difflib.get_close_matches(name, valid, n=3, cutoff=0.6)


def unknown_option(name: str, valid: Sequence[str]) -> str:
    """The message for an unknown option ``name``: the nearest valid names (:func:`nearest`), or all of them."""
    near = nearest(name, valid)
    hint = f"did you mean {' or '.join(map(repr, near))}?" if near else f"valid options: {', '.join(valid)}"
    return f"unknown parameter {name!r}; {hint}"


def refusing_unknown_keywords(function: F) -> F:
    """``function``, refusing a keyword that is none of its parameters with the nearest valid names
    (:class:`~synthdp.core.errors.UnknownOptionError`, a ``TypeError``), before it runs.

    Python's own refusal names the keyword only (``got an unexpected keyword argument 'round'``); an entry point
    with dozens of options says which it might have meant.  The signature is kept (``inspect.signature`` reads
    the wrapped function's).
    """
    valid = [p.name for p in inspect.signature(function).parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in ("self", "cls")]

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        unknown = [name for name in kwargs if name not in valid]
        if unknown:
            raise UnknownOptionError("; ".join(unknown_option(name, valid) for name in unknown))
        return function(*args, **kwargs)

    return checked  # type: ignore[return-value]


def user_stacklevel() -> int:
    """The ``stacklevel`` for a warning to point at the first caller outside synthdp (the user's line), however many
    frames of synthdp (a :func:`refusing_unknown_keywords` wrapper, a front end) lie between."""
    package = Path(__file__).resolve().parents[1]
    frame, level = sys._getframe(1), 1
    while frame is not None and Path(frame.f_code.co_filename).resolve().is_relative_to(package):
        frame, level = frame.f_back, level + 1
    return level


@dataclass(frozen=True)
class FieldDoc:
    """A field of a settings dataclass as its source declares it: name, default (as written) and ``#:`` comment."""

    name: str
    default: str
    doc: str

    def first_sentence(self) -> str:
        """The comment's first sentence (the rest holds the measurements behind a tuned default)."""
        return self.doc.partition(". ")[0].rstrip(".")


def comment_docs(path: str | Path, class_name: str) -> list[FieldDoc]:
    """Each field of class ``class_name`` in the source file ``path`` with its default and the ``#:`` comment lines
    above it.

    A field without comment lines of its own shares the block above the
    fields before it (``support``, ``support_iters``, ...).  Read from the
    source text, so that ``--help`` needs no import of the module.
    """
    text = Path(path).read_text(encoding="utf-8")
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT and token.string.startswith("#:"):
            comments[token.start[0]] = token.string[2:].strip()
    body = next(node for node in ast.parse(text).body if isinstance(node, ast.ClassDef) and node.name == class_name)
    docs: list[FieldDoc] = []
    shared = ""
    for node in body.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        line, block = node.lineno - 1, []
        while line in comments:
            block.insert(0, comments[line])
            line -= 1
        shared = " ".join(block) or shared
        docs.append(FieldDoc(node.target.id, _default_text(node.value), shared))
    return docs


def _default_text(value: ast.expr | None) -> str:
    """A field's default as written; ``field(default_factory=F)`` as ``F()``."""
    if value is None:
        return ""
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "field":
        factory = next((k.value for k in value.keywords if k.arg == "default_factory"), None)
        if factory is not None:
            return f"{ast.unparse(factory)}()"
    return ast.unparse(value)
