"""Numeric columns come back as numbers (docs/privacy.md §10.3): inside their cells and bounds, in the public dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.core.encoding import Encoder
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import Schema


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 80, n), "gain": np.round(rng.exponential(300.0, n), 2),
                         "group": rng.choice(["a", "b"], n)})


BOUNDS = {"age": (17, 90), "gain": (0.0, 10_000.0)}  # an integer and a real column


def test_default_output_is_numbers_inside_the_released_cells_in_the_public_dtype():
    df = _table()
    result = synthdp.generate_synthetic(df, "marginals:2", epsilon=2.0, delta=1e-9, bounds=BOUNDS, clip=True,
                                        categories={"group": ["a", "b"]}, random_state=0, progress=False)
    out, schema = result.data, result.schema
    assert out["age"].dtype == np.int64 and out["gain"].dtype == np.float64
    assert out["age"].between(17, 90).all() and out["gain"].between(0, 10_000).all()
    assert schema["age"].origin == schema["gain"].origin == "learned"
    assert result.report.release.numeric_values.startswith("numbers drawn uniformly inside each released cell")
    # round trip: re-encoding the output gives cells of the released schema, and decoding those again the same cells
    codes = Encoder(schema).encode(out)
    again = Encoder(schema).decode(codes, numeric="uniform", rng=np.random.default_rng(1))
    assert (Encoder(schema).encode(again) == codes).all()


def test_integer_columns_draw_every_integer_of_a_cell_uniformly():
    schema = Schema.from_dataframe(pd.DataFrame({"x": [1]}), bounds={"x": (0, 9)}, cuts={"x": [3, 4]})
    decoded = Encoder(schema).decode(np.array([[0]] * 6000 + [[1]] * 10), numeric="uniform",
                                     rng=np.random.default_rng(0))
    assert decoded["x"].dtype == np.int64
    first = decoded["x"][:6000].value_counts().sort_index()
    assert list(first.index) == [0, 1, 2] and (abs(first / 6000 - 1 / 3) < 0.03).all()
    assert set(decoded["x"][6000:]) == {3}


def test_positions_place_values_at_their_share_of_the_cell():
    """Positions (docs/privacy.md §8.12) put an integer at that share of its cell's integers and a real number at
    that share of its width; the cell's ends are reached, a missing value stays missing."""
    schema = Schema.from_dataframe(pd.DataFrame({"n": [1], "r": [1.0]}), bounds={"n": (0, 9), "r": (0.0, 4.0)},
                                   cuts={"n": [3, 4], "r": [1.0, 3.0]}, nullable=["r"])
    codes = np.array([[0, 1], [0, 1], [0, 1], [2, 0], [2, 3]])
    share = np.array([0.0, 0.5, 0.999, 0.75, np.nan])
    decoded = Encoder(schema).decode(codes, numeric="uniform", rng=np.random.default_rng(0),
                                     positions={0: np.nan_to_num(share), 1: share})
    assert list(decoded["n"]) == [0, 1, 2, 8, 4]
    assert decoded["r"][:4].tolist() == pytest.approx([1.0, 2.0, 2.998, 0.75]) and pd.isna(decoded["r"][4])


def test_labels_only_on_request():
    df = _table(200)
    result = synthdp.generate_synthetic(df, "marginals:2", epsilon=2.0, delta=1e-9, bounds=BOUNDS, clip=True,
                                        categories={"group": ["a", "b"]}, numeric="label", random_state=0,
                                        progress=False)
    assert result.data["age"].str.fullmatch(r"\d+-\d+").all()
    assert result.report.release.numeric_values.startswith("cell labels")


@pytest.mark.parametrize("discretise", ["privtree", "equal-width"])
def test_a_table_and_its_float_typed_copy_release_the_same(discretise):
    """pandas turns an integer column with one missing entry into floats: the output of a nullable column may not
    follow it (docs/privacy.md §10.1; a column that is not nullable refuses a missing entry instead)."""
    df = _table(300)
    copy = df.assign(age=df["age"].astype(float))
    outs = [synthdp.generate_synthetic(d, "marginals:2", epsilon=2.0, delta=1e-9, bounds=BOUNDS, clip=True,
                                       categories={"group": ["a", "b"]}, discretise=discretise, random_state=3,
                                       nullable=["age"], progress=False) for d in (df, copy)]
    pd.testing.assert_frame_equal(outs[0].data, outs[1].data)
    assert outs[0].report.to_dict() == outs[1].report.to_dict()


def test_integer_or_real_output_follows_the_bounds_as_written_or_the_declared_dtype_never_the_frames():
    from synthdp.cli.common import _bounds

    depth = pd.DataFrame({"depth": ["61.5", "12.25", "3.0"]})  # text, as synthdp's readers hold a CSV
    as_ints = Schema.from_dataframe(depth, bounds={"depth": (0, 100)}, discretise="privtree")
    as_reals = Schema.from_dataframe(depth, bounds={"depth": (0.0, 100.0)}, discretise="privtree")
    assert as_ints["depth"].dtype == "int64" and as_reals["depth"].dtype == "float64"
    assert _bounds("0:100") == (0, 100) and isinstance(_bounds("0:100")[0], int)
    assert _bounds("0.0:100") == (0.0, 100) and isinstance(_bounds("0.0:100")[0], float)
    same = Schema.from_dataframe(depth.astype(float).astype(int), bounds={"depth": (0.0, 100.0)},
                                 discretise="privtree")
    assert same == as_reals  # bounds written as reals make a real column whatever the frame
    for frame in (depth.astype(float), depth.astype("Float64"), depth.astype("double[pyarrow]")):
        with pytest.warns(OwnerWarning, match=r"'depth' is \w+(\[pyarrow\])? in the DataFrame.*'depth': 'float64'"):
            typed = Schema.from_dataframe(frame, bounds={"depth": (0, 100)}, discretise="privtree")
        assert typed == as_ints  # a frame's dtype types nothing: pandas infers it from the rows (docs/privacy.md §10.1)
    declared = Schema.from_dataframe(depth.astype(float), bounds={"depth": (0, 100)}, dtypes={"depth": "float64"},
                                     discretise="privtree")
    assert declared == as_reals


def _dated(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    days = pd.to_datetime("2021-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")
    return pd.DataFrame({"when": days.strftime("%d/%m/%Y"), "flag": rng.random(n) < 0.4})


def test_datetimes_come_back_as_datetimes_inside_their_bounds_and_booleans_as_booleans():
    df = _dated()
    result = synthdp.generate_synthetic(df, "marginals:2", epsilon=2.0, delta=1e-9,
                                        bounds={"when": ("01/01/2020", "31/12/2025")}, datetimes={"when": "%d/%m/%Y"},
                                        categories={"flag": [False, True]}, random_state=0, progress=False)
    out, schema = result.data, result.schema
    assert out["when"].dtype == "datetime64[ns]" and out["flag"].dtype == bool
    assert out["when"].between(pd.Timestamp("2020-01-01"), pd.Timestamp("2025-12-31")).all()
    assert schema["when"].is_datetime and schema["when"].origin == "learned"
    assert (Encoder(schema).encode(out)[:, 0] < schema["when"].size).all()  # written back, read back
    again = Schema.from_json(schema.to_json())
    assert again == schema and again["when"].format == "%d/%m/%Y"


def test_datetime_errors_before_any_private_step(monkeypatch):
    import synthdp.mechanisms.noise as noise

    monkeypatch.setattr(noise, "discrete_laplace", lambda *a: (_ for _ in ()).throw(AssertionError("noise drawn")))
    df = _dated(50)
    with pytest.raises(synthdp.core.errors.SchemaError, match=r"datetime column\(s\) \['when'\] need public bounds"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, datetimes=["when"], progress=False)
    bad = df.assign(when=df["when"].where(df.index != 7, "31/02/2022"))
    with pytest.raises(synthdp.core.errors.SchemaError, match=r"value '31/02/2022' in row 7, datetime column 'when' "
                                                              r"cannot be read as a date with format '%d/%m/%Y'"):
        synthdp.generate_synthetic(bad, "marginals:2", epsilon=1.0, delta=1e-9,
                                   bounds={"when": ("01/01/2020", "31/12/2025")},
                                   datetimes={"when": "%d/%m/%Y"}, categories={"flag": [False, True]}, progress=False)


def test_cli_datetime_option(tmp_path):
    from synthdp.cli import main

    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _dated(400).to_csv(source, index=False)
    code = main(["generate", str(source), "-o", str(out), "--epsilon", "2", "--delta", "1e-9", "--seed", "0", "-q",
                 "--bounds", "when=01/01/2020..31/12/2025", "--datetime", "when=%d/%m/%Y", "--categorical", "flag",
                 "--queries", "marginals:2"])
    assert code == 0
    written = pd.read_csv(out)["when"]
    assert written.str.fullmatch(r"\d{2}/\d{2}/\d{4}").all()  # in its format, as the input wrote it
    assert pd.to_datetime(written, format="%d/%m/%Y").between("2020-01-01", "2025-12-31").all()


def test_decimals_round_values_to_the_public_precision_so_point_masses_come_back():
    df = pd.DataFrame({"claim": [0.0] * 900 + list(np.linspace(10, 5000, 100))})
    schema = Schema.from_dataframe(df, bounds={"claim": (0.0, 1e6)}, decimals={"claim": 2}, cuts={"claim": [1e-4, 1.0]})
    decoded = Encoder(schema).decode(np.array([[0]] * 50 + [[2]] * 50), numeric="uniform", rng=np.random.default_rng(0))
    assert (decoded["claim"][:50] == 0.0).all() and (decoded["claim"] == decoded["claim"].round(2)).all()
    assert Schema.from_json(schema.to_json())["claim"].decimals == 2
    with pytest.raises(synthdp.core.errors.SchemaError, match="decimals of 'n' must be an integer from 0 to 15 on a "
                                                              "float column"):
        Schema.from_dataframe(pd.DataFrame({"n": [1]}), bounds={"n": (0, 9)}, decimals={"n": 2}, dtypes={"n": "int64"})
    implied = Schema.from_dataframe(pd.DataFrame({"n": ["1.5"]}), bounds={"n": (0, 9)}, decimals={"n": 1})
    assert implied["n"].dtype == "float64" and implied["n"].decimals == 1  # declared decimals imply a real column
