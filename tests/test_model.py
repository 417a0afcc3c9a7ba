"""The released model (docs/privacy.md §10.9): sampling draws from it, save/load keep it and nothing private."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from synthdp import Synthesizer
from synthdp.cli import main
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.schema import Attribute, Schema
from synthdp.methods.measure import estimators
from synthdp.methods.measure.copula import Copula
from synthdp.methods.measure.estimators import NoisyMarginal
from synthdp.methods.measure.reweight import WeightedSample
from synthdp.model import FittedModel, ReleasedRecords, load_model
from synthdp.report import DO_NOT_PUBLISH

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

COLUMNS = "abcde"
CATEGORIES = {c: [str(v) for v in range(6)] for c in COLUMNS}
PLANTED = "planted-9f3c-only-one-row"


def table(rows: int = 1500, seed: int = 0) -> pd.DataFrame:
    """Five columns of six values each (7,776 cells), independent and uniform, and an ID column ``who``."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({c: rng.integers(0, 6, rows).astype(str) for c in COLUMNS})
    df["city"] = rng.choice(["north", "south"], rows)
    df.loc[7, "city"] = PLANTED  # one row: partition selection keeps values many rows hold (§9), never this one
    return df


def fitted(**options) -> Synthesizer:
    settings = dict(epsilon=2.0, delta=1e-6, categories=CATEGORIES, random_state=0, progress=False)
    return Synthesizer("marginals:1", **{**settings, **options}).fit(table())


@pytest.fixture(scope="module")
def measured() -> Synthesizer:
    return fitted()


@pytest.fixture(scope="module")
def game() -> Synthesizer:
    return fitted(method="game", rounds=4, samples_per_round=25, epsilon=1.0)


def distinct(df: pd.DataFrame) -> set[tuple]:
    return set(map(tuple, df.astype(str).to_numpy()))


def test_sampling_draws_new_rows_from_the_model_not_copies_of_the_release(measured):
    release = distinct(measured.result_.data)
    drawn = measured.sample(20_000, random_state=1)
    assert len(drawn) == 20_000 and list(drawn.columns) == list(measured.result_.data.columns)
    assert len(distinct(drawn)) > 2 * len(release)  # resampling the release could never exceed len(release)
    assert len(distinct(drawn) - release) > len(release)
    assert measured.sample(None).equals(measured.result_.data)  # n=None: the release itself


def test_the_game_samples_its_released_records(game):
    drawn = game.sample(5_000, random_state=2)
    assert distinct(drawn) <= distinct(game.result_.data)  # the game's model is its records (§10.9)
    assert len(distinct(drawn)) == len(distinct(game.result_.data))  # and every one of them is drawn


def test_the_same_seed_gives_the_same_rows(measured):
    assert measured.sample(300, random_state=5).equals(measured.sample(300, random_state=5))
    assert not measured.sample(300, random_state=5).equals(measured.sample(300, random_state=6))


@pytest.mark.parametrize("which", ["measured", "game"])
def test_a_saved_then_loaded_model_samples_the_same_rows(which, request, tmp_path):
    fitted_ = request.getfixturevalue(which)
    path = tmp_path / "model.zip"
    fitted_.save(path)
    loaded = Synthesizer.load(path)
    for seed in (0, 11):
        assert loaded.sample(2_000, random_state=seed).equals(fitted_.sample(2_000, random_state=seed))
    assert loaded.schema_ == fitted_.schema_
    assert loaded.model_.release == json.loads(json.dumps(fitted_.report_.to_dict(), default=str))
    with pytest.raises(InputError, match="keeps no table"):
        loaded.sample()


def graphical_model() -> FittedModel:
    """A graphical model fitted to two noisy 2-way marginals on four columns (two cliques: a junction tree)."""
    schema = Schema(tuple(Attribute(c, "categorical", categories=("x", "y", "z")) for c in "pqrs"))
    rng = np.random.default_rng(3)
    noisy = [NoisyMarginal((0, 1), rng.integers(0, 40, 9).astype(float), 4.0),
             NoisyMarginal((1, 2), rng.integers(0, 40, 9).astype(float), 4.0),
             NoisyMarginal((3,), rng.integers(0, 40, 3).astype(float), 4.0)]
    model = estimators.fit(schema.domain, noisy, 30)
    assert len(model.cliques) >= 2
    return FittedModel(model, schema, "uniform", {"epsilon_budget": 1.0, "relation": "add-remove"})


def test_a_graphical_model_survives_the_file(tmp_path):
    model = graphical_model()
    model.save(tmp_path / "g.zip")
    loaded = FittedModel.load(tmp_path / "g.zip")
    assert loaded.estimate.cliques == model.estimate.cliques and loaded.estimate.total == model.estimate.total
    for a, b in zip(loaded.estimate.marginals, model.estimate.marginals):
        assert np.array_equal(a, b)
    assert loaded.sample(4_000, random_state=9).equals(model.sample(4_000, random_state=9))


def file_bytes(path) -> bytes:
    """Every member of the zip file, decompressed, one after another."""
    with zipfile.ZipFile(path) as archive:
        return b"".join(archive.read(name) for name in archive.namelist())


@pytest.mark.parametrize("which", ["measured", "game"])
def test_the_saved_file_holds_no_real_row_and_no_diagnostics(which, request, tmp_path):
    fitted_ = request.getfixturevalue(which)
    path = tmp_path / "model.zip"
    fitted_.save(path)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        document = json.loads(archive.read("model.json"))
    assert names[0] == "model.json" and all(n.startswith("arrays/") and n.endswith(".npy") for n in names[1:])
    content = file_bytes(path)
    assert PLANTED.encode() not in content  # the value one real row holds
    assert set(fitted_.schema_["city"].categories) <= {"north", "south"}
    for private in ("seconds", "oracle_stats", "round_seconds", "notes", DO_NOT_PUBLISH):
        assert private not in json.dumps(document)  # the diagnostics and their timings stay out (§3.2)
    assert set(document) == {"format", "version", "kind", "schema", "numeric", "release", *(
        ("cliques", "parent", "total") if document["kind"] == "graphical model" else ())}
    assert document["release"]["rows_written"] == len(fitted_.result_.data)
    for name in names[1:]:  # plain arrays: numbers only, readable without pickle
        with zipfile.ZipFile(path) as archive:
            array = np.load(io.BytesIO(archive.read(name)), allow_pickle=False)
        assert array.dtype.kind in "if"


def test_the_games_saved_model_is_its_release(game, tmp_path):
    """The game's released object is its records: the saved model is exactly the released table's codes."""
    game.save(tmp_path / "g.zip")
    model = load_model(tmp_path / "g.zip")
    assert isinstance(model.estimate, ReleasedRecords)
    released = Encoder(game.schema_).encode(game.result_.data.astype(str))
    assert np.array_equal(model.estimate.codes, released)


def test_a_column_outside_the_schema_does_not_reach_the_file(tmp_path):
    """Neighbouring tables (replace-one) that differ in one value of a column the schema leaves out give
    byte-identical model files: nothing but what the mechanisms read enters the model."""
    base = table()
    schema = Schema.from_dataframe(base, categories=CATEGORIES)
    other = base.copy()
    base["who"], other["who"] = np.arange(len(base)), np.arange(len(base))
    other.loc[3, "who"] = 10**9  # one row's ID changes
    files = []
    for df, name in ((base, "one"), (other, "two")):
        s = Synthesizer("marginals:1", epsilon=2.0, delta=1e-6, schema=schema, random_state=0, progress=False)
        s.fit(df)
        files.append(tmp_path / f"{name}.zip")
        s.save(files[-1])
    assert file_bytes(files[0]) == file_bytes(files[1])


def test_a_file_that_is_not_a_model_is_refused_by_name(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_text("not a zip")
    with pytest.raises(InputError, match="bad.zip.*is not a synthdp model file"):
        FittedModel.load(bad)
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("model.json", json.dumps({"format": "something else"}))
    with pytest.raises(InputError, match="not a synthdp model file"):
        FittedModel.load(other)
    with pytest.raises(InputError, match="does not exist"):
        FittedModel.load(tmp_path / "missing.zip")


def test_sample_before_fit_says_what_to_do():
    with pytest.raises(InputError, match=r"call fit\(df\) \(or Synthesizer.load\(path\)\)"):
        Synthesizer(epsilon=1).sample(10)
    with pytest.raises(InputError, match="n_rows"):
        graphical_model().sample(0)


def test_the_command_line_saves_and_samples(tmp_path, capsys):
    (tmp_path / "in.csv").write_text("a,b\n" + "".join(f"{i % 3},{i % 4}\n" for i in range(400)))
    code = main(["generate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--epsilon", "1",
                 "--delta", "1e-6", "--queries", "marginals:2", "--bounds", "a=0:2", "b=0:3", "--bins", "a=3", "b=4",
                 "--seed", "0", "-q", "--save-model", str(tmp_path / "m.zip")])
    assert code == 0, capsys.readouterr().err
    assert "model: " in capsys.readouterr().out
    for name in ("more.csv", "again.csv"):
        assert main(["sample", str(tmp_path / "m.zip"), "-n", "5000", "-o", str(tmp_path / name), "--seed", "4"]) == 0
    more = pd.read_csv(tmp_path / "more.csv")
    assert len(more) == 5000 and list(more.columns) == ["a", "b"] and more["a"].between(0, 2).all()
    assert (tmp_path / "more.csv").read_bytes() == (tmp_path / "again.csv").read_bytes()
    assert "no privacy cost" in capsys.readouterr().out
    assert main(["sample", str(tmp_path / "in.csv"), "-n", "5", "-o", str(tmp_path / "x.csv")]) == 2
    assert "is not a synthdp model file" in capsys.readouterr().err and not (tmp_path / "x.csv").exists()


def copula_model(rows: int = 20_000) -> tuple[FittedModel, pd.DataFrame]:
    """The reweighted sample of a pair whose normal scores have correlation 0.95, in public cells wide in the upper
    tail (x a float, y an integer), with its copula; and the data."""
    rng = np.random.default_rng(5)
    z = rng.multivariate_normal([0, 0], [[1, 0.95], [0.95, 1]], rows)
    df = pd.DataFrame({"x": np.minimum(np.exp(0.7 * z[:, 0]), 9.99), "y": np.minimum(np.exp(0.7 * z[:, 1]) * 10, 99)
                       .astype(int), "k": rng.choice(["u", "v"], rows)})
    schema = Schema.from_dataframe(df, bounds={"x": (0.0, 10.0), "y": (0, 100)},
                                   cuts={"x": [0.5, 1.0, 1.5, 2.0, 4.0], "y": [5, 10, 15, 20, 40]},
                                   categories={"k": ["u", "v"]})
    codes, counts = np.unique(Encoder(schema).encode(df), axis=0, return_counts=True)
    sample = WeightedSample(schema.domain, codes, counts.astype(float),
                            Copula((0, 1), np.array([[1.0, 0.95], [0.95, 1.0]])))
    return FittedModel(sample, schema, "uniform", {"epsilon_budget": 1.0, "relation": "add-remove"}), df


def test_a_copula_places_values_inside_their_cells_and_survives_the_file(tmp_path):
    """Drawn from the sample of the data's own cells, the pair's Pearson correlation is the data's to within 0.02
    with the copula placing the values inside the cells, and far lower drawn uniformly inside them; the copula is
    saved with the model, and an integer column stays whole and inside its cells."""
    model, df = copula_model()
    real = np.corrcoef(df["x"], df["y"])[0, 1]
    drawn = model.sample(20_000, random_state=1)
    assert np.corrcoef(drawn["x"], drawn["y"].astype(float))[0, 1] == pytest.approx(real, abs=0.02)
    uniform = replace(model, estimate=replace(model.estimate, copula=None)).sample(20_000, random_state=1)
    assert np.corrcoef(uniform["x"], uniform["y"].astype(float))[0, 1] < real - 0.05
    assert pd.api.types.is_integer_dtype(drawn["y"])
    cells = set(map(tuple, Encoder(model.schema).encode(drawn)))
    assert cells <= set(map(tuple, model.estimate.codes)) and len(cells) == len(model.estimate.codes)
    model.save(tmp_path / "c.zip")
    loaded = FittedModel.load(tmp_path / "c.zip")
    assert loaded.estimate.copula.columns == (0, 1)
    assert np.array_equal(loaded.estimate.copula.correlation, model.estimate.copula.correlation)
    assert loaded.sample(3_000, random_state=7).equals(model.sample(3_000, random_state=7))
