"""Step 5 of docs/privacy.md §12: the pair of tables drawn from the two released models (post-processing).

``N`` parents are drawn from the parent model, each with its number of children ``m_i``; the parents are grouped
by their codes (parent columns and ``m``), and each group's children are drawn from the joined model conditioned
on those codes (its parent columns are the parent model's attributes, so the codes are the same), or, where the
conditional has no mass, from the joined model's marginal over the child columns.  The keys are fresh: a function
of ``N`` and the drawn ``m_i`` only.  Given conditions on the parent columns, the parents are drawn from the
parent model's conditional distribution (:mod:`synthdp.conditions`), their children as always.  Nothing here
reads a real row.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from synthdp.conditions import Condition, evidence, no_mass, read_conditions, with_values
from synthdp.core.errors import InputError
from synthdp.core.parameters import check
from synthdp.core.schema import Schema
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.linked.links import Link
from synthdp.model import FittedModel, decode_records, dump_model, load_model

__all__ = ["LINKED_FORMAT", "LinkedModel", "child_codes", "dump_linked", "fresh_keys", "is_linked_file"]

LINKED_FORMAT = "synthdp-linked-model"
#: The members of a linked model's file: the link, then each released model in its own file format (§10.9).
_LINK, _PARENT, _JOINED = "link.json", "parent.synthdp", "joined.synthdp"


def child_codes(joined: FittedModel, parent_codes: np.ndarray, m: np.ndarray, generator: np.random.Generator
                ) -> np.ndarray:
    """The joined-model codes of every parent's ``m_i`` children, parent by parent: each group of parents with the
    same codes gets its children from the joined model conditioned on them (the parent columns come after the
    child columns in the joined schema, in the parent schema's order); the unconditioned model where the
    conditional has no mass (the public fallback)."""
    offset = len(joined.schema) - parent_codes.shape[1]
    starts = np.cumsum(m) - m
    out = np.zeros((int(m.sum()), len(joined.schema)), dtype=np.int64)
    groups, inverse = np.unique(parent_codes, axis=0, return_inverse=True)
    for g, codes in enumerate(groups):
        members = np.flatnonzero(inverse.ravel() == g)
        rows = np.concatenate([np.arange(starts[i], starts[i] + m[i]) for i in members])
        if not len(rows):
            continue
        given = joined.estimate.given({offset + j: int(c) for j, c in enumerate(codes)})
        out[rows] = (joined.estimate if given is None else given).sample(len(rows), generator)
    return out


def fresh_keys(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parents' keys ``1..N``, each child's foreign key (its parent's) and the children's own keys
    ``1..sum m``, int64: a function of the drawn ``m`` only (docs/privacy.md §12 step 5)."""
    parents = np.arange(1, len(m) + 1, dtype=np.int64)
    return parents, np.repeat(parents, m), np.arange(1, int(m.sum()) + 1, dtype=np.int64)


@dataclass(frozen=True)
class LinkedModel:
    """The two released models of a linked release (the parent view's, the joined view's), the link and ``k``:
    drawing from them is post-processing, free at any size (docs/privacy.md §12 step 5, §10.9)."""

    link: Link
    k: int
    parent: FittedModel
    joined: FittedModel

    def counts(self, parent_codes: np.ndarray) -> np.ndarray:
        """Each drawn parent's ``m_i``, read off its code of the count column (categories ``0..k``)."""
        column = self.parent.schema.names.index(self.link.count_column)
        values = np.array([int(c) for c in self.parent.schema[self.link.count_column].categories], dtype=np.int64)
        return values[parent_codes[:, column]]

    def parent_conditions(self, conditions: Mapping[str, Any] | None) -> list[Condition]:
        """``conditions`` on the parent table's columns (and its count of children), read through the parent
        model's schema (:mod:`synthdp.conditions`).  Refused, naming the column and what to give: the form keyed by
        table name, a child column or key (the children are drawn given their parent, never conditioned), the
        parent key (written fresh), an unknown column or a value outside its domain."""
        link = self.link
        children = self.child_columns() - set(self.parent.schema.names)  # a name both tables hold: the parent's
        only = (f"conditions on two linked tables are on the columns of the parent table {link.parent!r} and its "
                f"count of children {link.count_column!r}, given directly (e.g. {{'{link.count_column}': 1}}): each "
                "parent's children are drawn given that parent (docs/privacy.md §12 step 4)")
        for name, value in conditions.items() if isinstance(conditions, Mapping) else ():  # else refused below
            if name == link.parent and isinstance(value, Mapping):
                raise InputError(f"conditions name the parent table's columns directly, not keyed by table: "
                                 f"conditions={dict(value)!r}")
            if name == link.key:
                raise InputError(f"conditions: {name!r} is the key of {link.parent!r}, written fresh (1..N): "
                                 "condition on its other columns")
            if name in children or name == link.child:
                what = "the child table" if name == link.child else f"a column of the child table {link.child!r}"
                raise InputError(f"conditions: {name!r} is {what}; {only}")
        return read_conditions(self.parent.schema, conditions)

    def child_columns(self) -> set[str]:
        """The child table's columns as the release writes them (its keys among them)."""
        appended = {self.link.joined_name(name) for name in self.parent.schema.names}
        names = {*self.joined.schema.names, *(d.name for d in self.joined.schema.derived)} - appended
        return names | {self.link.foreign_key} | ({self.link.child_key} if self.link.child_key else set())

    def draw(self, n: int, generator: np.random.Generator, given: Sequence[Condition] = ()
             ) -> dict[str, pd.DataFrame]:
        """``n`` parents with their children, as two tables by name, keyed afresh; the parents drawn from the
        parent model conditioned on ``given`` (:meth:`parent_conditions`), their children given them as always."""
        return self.tables(*self.draw_views(n, generator, given))

    def draw_views(self, n: int, generator: np.random.Generator, given: Sequence[Condition] = ()
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The pair as the two views: ``n`` parent records (with ``m``) and their children's joined records (each
        with its parent's columns and ``m``), as each model's schema names them; :meth:`tables` keys them."""
        parent, joined = self.parent, self.joined
        estimate = parent.estimate.given(evidence(list(given))) if given else parent.estimate
        if estimate is None:
            raise no_mass(list(given), parent.schema)
        codes = estimate.sample(n, generator)
        m = self.counts(codes)
        parents = decode_records(estimate, parent.schema, codes, numeric=parent.numeric, generator=generator)
        if given and parent.numeric == "uniform":
            parents = with_values(parents, parent.schema, list(given))
        children = decode_records(joined.estimate, joined.schema, child_codes(joined, codes, m, generator),
                                  numeric=joined.numeric, generator=generator)
        return parents, children

    def tables(self, parents: pd.DataFrame, children: pd.DataFrame) -> dict[str, pd.DataFrame]:
        """The two tables of the views :meth:`draw_views` drew: the appended parent columns and ``m`` dropped, fresh
        keys written (a function of the drawn ``m`` only, docs/privacy.md §12 step 4)."""
        link = self.link
        keys, foreign, own = fresh_keys(parents[link.count_column].to_numpy(dtype=np.int64))
        appended = [link.joined_name(name) for name in self.parent.schema.names]
        children = children.drop(columns=[c for c in children.columns if c in appended])
        children.insert(0, link.foreign_key, foreign)
        if link.child_key is not None:
            children.insert(0, link.child_key, own)
        parents = parents.drop(columns=[link.count_column])
        parents.insert(0, link.key, keys)
        return {link.parent: parents, link.child: children}

    def schemas(self) -> dict[str, Schema]:
        """Each table's public schema as its file is written (datetime columns in their formats,
        :func:`~synthdp.files.parquet.dump_table`): the parent model's, and the joined model's for the child (whose
        parent columns the child table no longer holds)."""
        return {self.link.parent: self.parent.schema, self.link.child: self.joined.schema}

    def sample(self, n: int, random_state: int | None = None, *,
               conditions: Mapping[str, Any] | None = None) -> dict[str, pd.DataFrame]:
        """``n`` fresh parents with their children (free: post-processing); the same seed gives the same tables,
        also after :meth:`save` and :meth:`load`.  ``conditions`` (a parent column, or the count column
        ``n_<child>``, -> value, e.g. ``{"region": "N"}``) draws the parents from the parent model's conditional
        distribution given them, every parent taking the given values, and their children as always, given each
        parent (docs/privacy.md §12 step 4); checked before anything is drawn (:meth:`parent_conditions`)."""
        check("n_rows", n)
        check("random_state", random_state)
        given = self.parent_conditions(conditions)
        return self.draw(n, np.random.default_rng(random_state), given)

    def save(self, path: str | os.PathLike) -> None:
        """Write both models and the link to ``path`` atomically: a zip of ``link.json`` and each model's own file
        (§10.9: JSON and plain arrays, no pickle)."""
        out = check_outputs({"model": path})["model"]
        write_outputs([(out, lambda tmp: dump_linked(self, tmp))])

    @classmethod
    def load(cls, path: str | os.PathLike) -> "LinkedModel":
        """Read a file written by :meth:`save` (no pickled object is read)."""
        try:
            with zipfile.ZipFile(path) as archive:
                document = json.loads(archive.read(_LINK))
                members = {member: archive.read(member) for member in (_PARENT, _JOINED)}
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            raise InputError(f"{os.fspath(path)!r} is not a linked synthdp model file ({exc}); write one with "
                             "Synthesizer.save after fitting two tables") from None
        if document.get("format") != LINKED_FORMAT:
            raise InputError(f"{os.fspath(path)!r} is not a linked synthdp model file")
        with tempfile.TemporaryDirectory() as folder:
            models = []
            for member, data in members.items():
                (Path(folder) / member).write_bytes(data)
                models.append(load_model(Path(folder) / member))
        return cls(Link(**document["link"]), int(document["k"]), *models)


def dump_linked(model: LinkedModel, path: Path) -> None:
    """Write ``model`` to ``path`` directly: a zip of ``link.json`` and each released model's own file."""
    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(path, "w") as archive:
        archive.writestr(_LINK, json.dumps({"format": LINKED_FORMAT, "link": asdict(model.link), "k": model.k}))
        for member, part in ((_PARENT, model.parent), (_JOINED, model.joined)):
            dump_model(part, Path(folder) / member)
            archive.write(Path(folder) / member, member)


def is_linked_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` holds a linked model (a zip with ``link.json``) rather than one table's."""
    try:
        with zipfile.ZipFile(path) as archive:
            return _LINK in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
