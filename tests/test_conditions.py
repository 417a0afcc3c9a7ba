"""Conditional sampling from the released model (docs/privacy.md §10.9): every row meets the conditions, the other
columns follow the model's exact conditional distribution (brute force over a tiny domain), refusals name the
column and what to do."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest

from synthdp import Synthesizer
from synthdp.cli import main
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.schema import Attribute, Schema
from synthdp.methods.measure.estimators import EXCLUDED_LOG_POTENTIAL, GraphicalModel
from synthdp.methods.measure.reweight import WeightedSample
from synthdp.model import FittedModel, ReleasedRecords

RELEASE = {"epsilon_budget": 1.0, "relation": "add-remove"}
#: a (nullable, 3 codes), b (3), c (numeric, three cells of width 10), d (2): cliques {a, b}, {b, c} and {d}.
SCHEMA = Schema((Attribute("a", "categorical", categories=("x", "y"), missing=True),
                 Attribute("b", "categorical", categories=("u", "v", "w")),
                 Attribute("c", "numeric", bounds=(0.0, 30.0), bins=3),
                 Attribute("d", "categorical", categories=("m", "n"))))
CLIQUES, PARENT = [(0, 1), (1, 2), (3,)], [None, 0, None]
DRAWS = 40_000


def potentials(zero: tuple[int, int] | None = None) -> list[np.ndarray]:
    """Strongly dependent log-potentials on :data:`CLIQUES`; ``zero``: a cell of {a, b} given no mass."""
    rng = np.random.default_rng(1)
    theta = [2.0 * rng.standard_normal(tuple(SCHEMA.domain.sizes[a] for a in c)) for c in CLIQUES]
    if zero is not None:
        theta[0][zero] = EXCLUDED_LOG_POTENTIAL
    return theta


def graphical(zero: tuple[int, int] | None = None) -> FittedModel:
    model = GraphicalModel(SCHEMA.domain, CLIQUES, PARENT, potentials(zero), 1000.0)
    return FittedModel(model, SCHEMA, "uniform", RELEASE)


def joint(zero: tuple[int, int] | None = None) -> np.ndarray:
    """The graphical model's joint distribution over the whole domain, by brute force (a 3 x 3 x 3 x 2 array)."""
    t = potentials(zero)
    log = t[0][:, :, None, None] + t[1][None, :, :, None] + t[2][None, None, None, :]
    p = np.exp(log - log.max())
    return p / p.sum()


#: The records of the sample-based models: every cell of the domain, weighted by the graphical model's joint.
CELLS = np.array(list(itertools.product(*map(range, SCHEMA.domain.sizes))), dtype=np.int64)


def weighted() -> FittedModel:
    return FittedModel(WeightedSample(SCHEMA.domain, CELLS, joint()[tuple(CELLS.T)] * 1000.0), SCHEMA, "uniform",
                       RELEASE)


def records() -> FittedModel:
    """Released records drawn from the joint: their empirical distribution is the model."""
    rng = np.random.default_rng(4)
    return FittedModel(ReleasedRecords(SCHEMA.domain, CELLS[rng.choice(len(CELLS), 600, p=joint()[tuple(CELLS.T)])]),
                       SCHEMA, "uniform", RELEASE)


def records_joint(model: FittedModel) -> np.ndarray:
    counts = np.zeros(SCHEMA.domain.sizes)
    np.add.at(counts, tuple(model.estimate.codes.T), 1.0)
    return counts / counts.sum()


MODELS = {"graphical": (graphical, lambda m: joint()), "weighted": (weighted, lambda m: joint()),
          "records": (records, records_joint)}
#: Conditions, the cells they fix (column index -> code), and the column whose conditional is checked: a root
#: column given a child's, a column between two conditions, a column given the missing value.
CASES = [({"c": 25.0}, {2: 2}, "a"), ({"a": "x", "c": 5}, {0: 0, 2: 0}, "b"), ({"a": None}, {0: 2}, "b"),
         ({"b": "w", "d": "n"}, {1: 2, 3: 1}, "c")]


def exact(p: np.ndarray, fixed: dict[int, int], column: int) -> np.ndarray:
    """The distribution of ``column`` given the ``fixed`` codes, from the joint ``p``."""
    index = tuple(fixed.get(a, slice(None)) for a in range(p.ndim))
    kept = [a for a in range(p.ndim) if a not in fixed]
    sub = p[index]
    marginal = sub.sum(axis=tuple(i for i, a in enumerate(kept) if a != column))
    return marginal / marginal.sum()


def frequencies(rows: pd.DataFrame, column: str) -> np.ndarray:
    codes = Encoder(SCHEMA).encode(rows)[:, SCHEMA.names.index(column)]
    return np.bincount(codes, minlength=SCHEMA.domain.sizes[SCHEMA.names.index(column)]) / len(rows)


@pytest.mark.parametrize("kind", MODELS)
@pytest.mark.parametrize("conditions, fixed, column", CASES)
def test_rows_meet_the_conditions_and_follow_the_exact_conditional(kind, conditions, fixed, column):
    """Each cell's frequency is within 5 binomial standard errors of the exact conditional, and that tolerance
    is at most a fifth of the largest gap between the conditional and the unconditioned marginal (the test has
    the power to tell them apart)."""
    build, distribution = MODELS[kind]
    model = build()
    rows = model.sample(DRAWS, conditions=conditions, random_state=3)
    assert len(rows) == DRAWS
    for name, value in conditions.items():
        assert (rows[name].isna() if value is None else rows[name] == value).all(), name
    p = distribution(model)
    want, unconditioned = exact(p, fixed, SCHEMA.names.index(column)), exact(p, {}, SCHEMA.names.index(column))
    tolerance = 5 * np.sqrt(want * (1 - want) / DRAWS) + 1 / DRAWS
    assert np.abs(want - unconditioned).max() > 5 * tolerance.max()
    assert np.all(np.abs(frequencies(rows, column) - want) <= tolerance), (frequencies(rows, column), want)


@pytest.mark.parametrize("kind", MODELS)
def test_the_same_seed_gives_the_same_rows_also_after_the_file(kind, tmp_path):
    model = MODELS[kind][0]()
    conditions = {"b": "v", "c": 14.5}
    first = model.sample(500, conditions=conditions, random_state=8)
    assert first.equals(model.sample(500, conditions=conditions, random_state=8))
    assert not first.equals(model.sample(500, conditions=conditions, random_state=9))
    model.save(tmp_path / "m.zip")
    assert FittedModel.load(tmp_path / "m.zip").sample(500, conditions=conditions, random_state=8).equals(first)


@pytest.mark.parametrize("value", [0, 9.5, 10, 20, 29.99, 30])
def test_a_numeric_value_fixes_the_cell_encoding_puts_it_in(value):
    """A value on a cut lies in the cell above it, as the encoder reads it; the row holds the value itself."""
    rows = graphical().sample(50, conditions={"c": value}, random_state=0)
    assert (rows["c"] == value).all()
    cell = Encoder(SCHEMA).encode(pd.DataFrame({"a": ["x"], "b": ["u"], "c": [value], "d": ["m"]}))[0, 2]
    model = FittedModel(ReleasedRecords(SCHEMA.domain, CELLS[CELLS[:, 2] == cell]), SCHEMA, "uniform", RELEASE)
    assert len(model.sample(5, conditions={"c": value}, random_state=0)) == 5
    assert cell == (2 if value >= 20 else 1 if value >= 10 else 0)


def test_a_numeric_value_is_written_at_the_columns_precision():
    """A real column with public decimals comes back at them, the given value too (``12.3456`` with 2 decimals: 12.35)."""
    rounded = Schema(tuple(dataclasses.replace(a, decimals=2) if a.name == "c" else a for a in SCHEMA.attributes))
    model = FittedModel(ReleasedRecords(rounded.domain, CELLS), rounded, "uniform", RELEASE)
    assert (model.sample(20, conditions={"c": 12.3456}, random_state=0)["c"] == 12.35).all()


def test_no_conditions_draw_the_unconditioned_rows():
    model = graphical()
    assert model.sample(300, conditions={}, random_state=1).equals(model.sample(300, random_state=1))


@pytest.mark.parametrize("conditions, message", [
    ({"bb": "u"}, r"unknown column 'bb'; did you mean 'b'\?"),
    ({"zzz": "u"}, r"unknown column 'zzz'; the model's columns: \['a', 'b', 'c', 'd'\]"),
    ({"b": "V"}, r"b='V' is not a category of column 'b'; its categories: \['u', 'v', 'w'\]"),
    ({"c": 31}, r"c=31 is outside the public bounds \[0, 30\] of column 'c'; condition on a value inside them"),
    ({"c": "ten"}, r"c='ten' is not a number, and column 'c' is numeric"),
    ({"c": True}, r"c=True is not a number"),
    ({"b": None}, r"b=None asks for the missing value, but column 'b' has none \(it is not nullable\)"),
])
def test_a_condition_outside_the_schema_is_refused_by_name(conditions, message):
    with pytest.raises(InputError, match=message):
        graphical().sample(10, conditions=conditions)


def matching(codes: np.ndarray, fixed: dict[int, int]) -> np.ndarray:
    """Which rows of ``codes`` have the ``fixed`` codes."""
    return np.all(codes[:, list(fixed)] == list(fixed.values()), axis=1)


def records_without(fixed: dict[int, int]) -> FittedModel:
    """The released records of :func:`records` but those with the ``fixed`` codes."""
    codes = records().estimate.codes
    return FittedModel(ReleasedRecords(SCHEMA.domain, codes[~matching(codes, fixed)]), SCHEMA, "uniform", RELEASE)


def weighted_without(fixed: dict[int, int]) -> FittedModel:
    """The reweighted sample of :func:`weighted` with no weight on the records with the ``fixed`` codes."""
    sample = weighted().estimate
    weights = np.where(matching(sample.codes, fixed), 0.0, sample.weights)
    return FittedModel(WeightedSample(SCHEMA.domain, sample.codes, weights), SCHEMA, "uniform", RELEASE)


@pytest.mark.parametrize("build, conditions", [
    (lambda: graphical(zero=(0, 2)), {"a": "x", "b": "w"}),
    (lambda: weighted_without({1: 1, 3: 1}), {"b": "v", "d": "n"}),
    (lambda: records_without({0: 2, 1: 0, 3: 0}), {"a": None, "b": "u", "d": "m"}),
])
def test_conditions_the_model_gives_no_mass_are_refused(build, conditions):
    """A structural zero of the graphical model, records of the reweighted sample that keep no weight, and a
    combination no released record has; each condition alone has mass."""
    model = build()
    described = " and ".join(f"{k}={v!r}" for k, v in conditions.items())
    with pytest.raises(InputError, match=f"the released model puts no mass on {described}: relax a condition"):
        model.sample(10, conditions=conditions)
    for name, value in conditions.items():
        assert len(model.sample(10, conditions={name: value}, random_state=0)) == 10


def test_a_fitted_and_a_loaded_synthesizer_sample_given_conditions(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"region": rng.choice(["N", "S"], 1500), "size": rng.choice(["1", "2", "3"], 1500)})
    df.loc[df["region"] == "N", "size"] = rng.choice(["1", "2"], (df["region"] == "N").sum())
    synth = Synthesizer("marginals:2", epsilon=2.0, delta=1e-6, random_state=0, progress=False,
                        categories={"region": ["N", "S"], "size": ["1", "2", "3"]}).fit(df)
    rows = synth.sample(2_000, conditions={"region": "N"}, random_state=5)
    assert (rows["region"] == "N").all()
    assert (rows["size"] == "3").mean() < (synth.sample(2_000, random_state=5)["size"] == "3").mean()
    with pytest.raises(InputError, match="give the number of rows"):
        synth.sample(conditions={"region": "N"})
    synth.save(tmp_path / "m.zip")
    assert Synthesizer.load(tmp_path / "m.zip").sample(2_000, conditions={"region": "N"}, random_state=5).equals(rows)
    assert main(["sample", str(tmp_path / "m.zip"), "-n", "300", "-o", str(tmp_path / "n.csv"), "--seed", "1",
                 "--condition", "region=N", "--condition", "size=2"]) == 0
    drawn = pd.read_csv(tmp_path / "n.csv", dtype=str)
    assert len(drawn) == 300 and (drawn["region"] == "N").all() and (drawn["size"] == "2").all()
    capsys.readouterr()
    assert main(["sample", str(tmp_path / "m.zip"), "-n", "3", "-o", str(tmp_path / "x.csv"),
                 "--condition", "regio=N"]) == 2
    assert "did you mean 'region'?" in capsys.readouterr().err and not (tmp_path / "x.csv").exists()
    assert main(["sample", str(tmp_path / "m.zip"), "-n", "3", "-o", str(tmp_path / "x.csv"),
                 "--condition", "region="]) == 2
    assert "region=None asks for the missing value" in capsys.readouterr().err
