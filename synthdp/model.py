"""The released model of a run: what more rows are drawn from, and the file it is saved in (docs/privacy.md §10.9).

A run's table is one sample of an object the ledger already paid for: the
graphical model of select-measure-estimate (or its reweighted sample, §8.7),
or the game's released records.  :class:`FittedModel` holds that object with
the public schema the codes decode through and the release part of the
report; sampling it again is post-processing and costs nothing.

The file is a zip of one JSON document (``model.json``) and numpy arrays
(``arrays/NAME.npy``) written and read without pickling, so that loading a
file runs none of its code.  It holds only released or public quantities:
no real row, no true count, no diagnostics, no timing.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
import pandas as pd

from synthdp.core.domain import Domain
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.parameters import check
from synthdp.conditions import evidence, no_mass, read_conditions, with_values
from synthdp.core.schema import Schema
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.methods.base import MethodOutput
from synthdp.methods.measure.copula import Copula, positions_in_cells
from synthdp.methods.measure.estimators import GraphicalModel
from synthdp.methods.measure.reweight import WeightedSample

if TYPE_CHECKING:
    from synthdp.config import SynthesisConfig

MODEL_FORMAT = "synthdp-model"
MODEL_VERSION = 1
#: The kinds of released model a file may hold, by the name the file gives them.
GRAPHICAL_MODEL, REWEIGHTED_SAMPLE, RELEASED_RECORDS = "graphical model", "reweighted sample", "released records"
#: The document inside the zip file; the arrays are ``arrays/NAME.npy`` beside it.
DOCUMENT = "model.json"


@dataclass(frozen=True)
class ReleasedRecords:
    """Records released as they are (the game's plays after burn-in, docs/privacy.md §4): their empirical
    distribution is the model, and sampling draws records from them with replacement."""

    domain: Domain
    codes: np.ndarray

    def given(self, evidence: Mapping[int, int]) -> "ReleasedRecords | None":
        """The released records whose codes are ``evidence`` (attribute -> code): drawn from with replacement, the
        records' conditional distribution; None when no record matches."""
        keep = np.all(self.codes[:, list(evidence)] == list(evidence.values()), axis=1)
        return ReleasedRecords(self.domain, self.codes[keep]) if keep.any() else None

    def sample(self, rows: int, generator: np.random.Generator) -> np.ndarray:
        """``rows`` of the released records, drawn uniformly with replacement (an ``(rows, d)`` code matrix)."""
        return self.codes[generator.integers(0, len(self.codes), rows)]


Estimate = GraphicalModel | WeightedSample | ReleasedRecords


@dataclass(frozen=True)
class FittedModel:
    """A run's released model: the ``estimate`` the records are drawn from, the ``schema`` they decode through,
    how numeric columns decode (``numeric``) and the release part of the report (``release``, safe to publish).

    Every part is released or public (docs/privacy.md §10.9): sampling it is post-processing.
    """

    estimate: Estimate
    schema: Schema
    numeric: str
    release: dict[str, Any]

    def sample(self, n: int, *, conditions: Mapping[str, Any] | None = None,
               random_state: int | None = None) -> pd.DataFrame:
        """``n`` fresh rows drawn from the model and decoded, derived columns computed (free: post-processing).

        ``conditions`` (column -> value: a category, a number inside the bounds, None for missing) draws from the
        model's conditional distribution given the codes the values lie in, and every row takes the given values
        (:mod:`synthdp.conditions`; a numeric column decoded as cell labels shows its cell's label).  They are
        checked before anything is drawn: an unknown column, a value outside the column's domain, or conditions
        the model gives no mass are refused by name.  ``random_state`` seeds the draw and the values drawn inside
        numeric cells; the same seed gives the same rows, before and after :meth:`save` and :meth:`load`.
        """
        check("n_rows", n)
        check("random_state", random_state)
        given = read_conditions(self.schema, conditions)
        estimate = self.estimate.given(evidence(given)) if given else self.estimate
        if estimate is None:
            raise no_mass(given, self.schema)
        generator = np.random.default_rng(random_state)
        rows = decode_records(estimate, self.schema, estimate.sample(n, generator), numeric=self.numeric,
                              generator=generator)
        return with_values(rows, self.schema, given) if self.numeric == "uniform" else rows

    def save(self, path: str | os.PathLike) -> None:
        """Write the model to ``path`` atomically (checked, temporary file, then rename)."""
        out = check_outputs({"model": path})["model"]
        write_outputs([(out, lambda tmp: dump_model(self, tmp))])

    @classmethod
    def load(cls, path: str | os.PathLike) -> "FittedModel":
        """Read a model file written by :meth:`save` (no pickled object is read: loading runs no code of the file)."""
        return load_model(path)


def decode_records(estimate: Estimate | None, schema: Schema, codes: np.ndarray, *, numeric: str,
                   generator: np.random.Generator) -> pd.DataFrame:
    """Records drawn from ``estimate`` decoded through ``schema``; numeric values inside their cells placed by the
    estimate's copula when it has one (docs/privacy.md §8.12), else drawn uniformly.  Post-processing."""
    copula = _copula(estimate) if numeric == "uniform" else None
    positions = None if copula is None else positions_in_cells(codes, copula, schema.domain, generator)
    return Encoder(schema).decode(codes, numeric=numeric, rng=generator, positions=positions)


def copula_columns(estimate: Estimate | None) -> list[str]:
    """The names of the columns whose values decoding places inside their cells by the estimate's copula (§8.12)."""
    copula = _copula(estimate)
    return [] if copula is None else [estimate.domain.names[c] for c in copula.columns]


def _copula(estimate: Estimate | None) -> Copula | None:
    """The copula a reweighted sample's support was drawn from, if any."""
    return estimate.copula if isinstance(estimate, WeightedSample) else None


def _kind_and_arrays(estimate: Estimate) -> tuple[str, dict[str, Any], dict[str, np.ndarray]]:
    """The estimate's kind, its JSON fields and its arrays by name."""
    if isinstance(estimate, GraphicalModel):
        fields = {"cliques": [list(c) for c in estimate.cliques], "parent": list(estimate.parent),
                  "total": estimate.total}
        return GRAPHICAL_MODEL, fields, {f"potential_{i}": p for i, p in enumerate(estimate.potentials)}
    if isinstance(estimate, WeightedSample):
        arrays = {"codes": estimate.codes, "weights": estimate.weights}
        if estimate.copula is None:
            return REWEIGHTED_SAMPLE, {}, arrays
        return (REWEIGHTED_SAMPLE, {"copula_columns": list(estimate.copula.columns)},
                {**arrays, "copula_correlation": estimate.copula.correlation})
    if isinstance(estimate, ReleasedRecords):
        return RELEASED_RECORDS, {}, {"codes": estimate.codes}
    raise TypeError(f"no file form for an estimate of type {type(estimate).__name__}")


def dump_model(model: FittedModel, path: Path) -> None:
    """Write ``model`` to ``path`` directly, as a zip of :data:`DOCUMENT` and ``arrays/NAME.npy`` (no pickle)."""
    kind, fields, arrays = _kind_and_arrays(model.estimate)
    document = {"format": MODEL_FORMAT, "version": MODEL_VERSION, "kind": kind, "schema": model.schema.to_dict(),
                "numeric": model.numeric, "release": model.release, **fields}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(DOCUMENT, json.dumps(document, indent=1, default=str))
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.save(buffer, np.asarray(array), allow_pickle=False)
            archive.writestr(f"arrays/{name}.npy", buffer.getvalue())


def load_model(path: str | os.PathLike) -> FittedModel:
    """The model in the file at ``path``; a file that is not a synthdp model is an :class:`InputError` naming it."""
    where = os.fspath(path)
    try:
        with zipfile.ZipFile(path) as archive:
            document = json.loads(archive.read(DOCUMENT))
            arrays = {name[len("arrays/"):-len(".npy")]: np.load(io.BytesIO(archive.read(name)), allow_pickle=False)
                      for name in archive.namelist() if name.startswith("arrays/") and name.endswith(".npy")}
    except FileNotFoundError:
        raise InputError(f"model file {where!r} does not exist") from None
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise InputError(f"{where!r} is not a synthdp model file ({exc}); write one with Synthesizer.save or "
                         "synthdp generate --save-model") from None
    if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
        raise InputError(f"{where!r} is not a synthdp model file (no \"format\": \"{MODEL_FORMAT}\")")
    if document.get("version") != MODEL_VERSION:
        raise InputError(f"{where!r}: model version {document.get('version')!r} is not supported (expected "
                         f"{MODEL_VERSION}); save the model again with this version of synthdp")
    schema = Schema.from_dict(document["schema"])
    try:
        estimate = _estimate(document, arrays, schema.domain)
    except (KeyError, ValueError, IndexError) as exc:
        raise InputError(f"{where!r}: the model's arrays do not fit its schema ({exc}); the file is damaged") from None
    return FittedModel(estimate, schema, document["numeric"], document["release"])


def _estimate(document: dict[str, Any], arrays: dict[str, np.ndarray], domain: Domain) -> Estimate:
    """The estimate of ``document``'s kind from its fields and ``arrays``, checked against ``domain``."""
    kind = document.get("kind")
    if kind == GRAPHICAL_MODEL:
        cliques = [tuple(int(a) for a in c) for c in document["cliques"]]
        potentials = [arrays[f"potential_{i}"] for i in range(len(cliques))]
        for c, p in zip(cliques, potentials):
            if p.shape != tuple(domain.sizes[a] for a in c):
                raise ValueError(f"a potential of shape {p.shape} on columns {[domain.names[a] for a in c]}")
        parent = [None if p is None else int(p) for p in document["parent"]]
        return GraphicalModel(domain, cliques, parent, potentials, float(document["total"]))
    if kind == REWEIGHTED_SAMPLE:
        copula = None
        if "copula_columns" in document:
            columns = tuple(int(c) for c in document["copula_columns"])
            correlation = arrays["copula_correlation"].astype(float)
            if correlation.shape != (len(columns), len(columns)) or not all(0 <= c < len(domain.sizes)
                                                                            for c in columns):
                raise ValueError(f"a copula of shape {correlation.shape} on columns {columns}")
            copula = Copula(columns, correlation)
        return WeightedSample(domain, domain.check_codes(arrays["codes"]), arrays["weights"].astype(float), copula)
    if kind == RELEASED_RECORDS:
        return ReleasedRecords(domain, domain.check_codes(arrays["codes"]))
    raise ValueError(f"unknown kind of model {kind!r}")


def finish(output: MethodOutput, schema, config: SynthesisConfig) -> pd.DataFrame:
    """Post-processing of the released codes: an optional resample to ``n_rows``, then decoding."""

    codes = output.codes
    if config.n_rows is not None and len(codes) != config.n_rows:
        codes = codes[output.post_rng.integers(0, len(codes), config.n_rows)]
    return decode_records(output.model, schema, codes, numeric=config.numeric, generator=output.post_rng)
