"""``synthdp generate customers.csv orders_part*.csv --link ... --engine dask -o DIR``: the child table given by
several files, counted part by part on a Dask cluster, writes the tables the pandas engine writes (docs/privacy.md
§12, "The child table on Dask"); refusals before anything runs, nothing written."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from synthdp.cli import main  # noqa: E402
from synthdp.core.schema import Attribute, Schema  # noqa: E402

LINK = ["--link", "orders.cid=customers.cid", "--max-rows-per-unit", "3"]
QUICK = ["--epsilon", "2", "--delta", "1e-9", "--queries", "marginals:2", "--seed", "1", "-q"]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        yield local


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(0)
    customers = pd.DataFrame({"cid": np.arange(400) * 3 + 7, "region": rng.choice(["N", "S"], 400)})
    owner = np.repeat(customers["cid"], rng.integers(0, 5, 400)).to_numpy()
    orders = pd.DataFrame({"cid": owner, "amount": rng.uniform(0, 100, len(owner)).round(2),
                           "note": rng.choice(["x", "y"], len(owner))})  # left out by --drop
    orders = orders.iloc[rng.permutation(len(orders))]
    customers.to_csv(tmp_path / "customers.csv", index=False)
    for i, rows in enumerate(np.array_split(np.arange(len(orders)), 3)):
        orders.iloc[rows].to_csv(tmp_path / f"orders_part{i}.csv", index=False)
    Schema((Attribute("amount", "numeric", bounds=(0, 100), bins=6, dtype="float64"),)).save(tmp_path / "orders.json")
    for name in ("pandas", "dask"):
        (tmp_path / name).mkdir()
    return tmp_path


def generate(folder, out, *extra):
    children = [str(folder / f"orders_part{i}.csv") for i in range(3)]
    return main(["generate", str(folder / "customers.csv"), *children, *LINK, "-o", str(folder / out),
                 "--schema", str(folder / "orders.json"), "--categorical", "region", "--drop", "note", *QUICK,
                 *extra])


def test_several_child_files_on_dask_write_the_tables_pandas_writes(inputs, cluster, capsys):
    assert generate(inputs, "pandas") == 0
    assert generate(inputs, "dask", "--engine", "dask", "--scheduler", cluster.scheduler_address) == 0
    assert "ignoring columns" not in capsys.readouterr().err  # --drop note: no pass reads it
    for name in ("customers.csv", "orders.csv"):
        assert (inputs / "dask" / name).read_bytes() == (inputs / "pandas" / name).read_bytes()
    assert sorted(p.name for p in (inputs / "dask").iterdir()) == ["customers.csv", "orders.csv"]


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_glob_names_the_child_table_after_the_link(inputs, cluster, suffix):
    if suffix == "parquet":
        for i in range(3):
            pd.read_csv(inputs / f"orders_part{i}.csv").to_parquet(inputs / f"orders_part{i}.parquet", index=False)
    assert main(["generate", str(inputs / "customers.csv"), str(inputs / f"orders_part*.{suffix}"), *LINK, "-o",
                 str(inputs / "dask"), "--schema", str(inputs / "orders.json"), "--categorical", "region",
                 "--drop", "note", *QUICK,
                 "--engine", "dask", "--scheduler", cluster.scheduler_address]) == 0
    assert list(pd.read_csv(inputs / "dask" / "orders.csv").columns) == ["cid", "amount"]


@pytest.mark.parametrize("case, message", [
    ("auto", "max_rows_per_unit='auto' reads table 'orders' in memory, which engine='dask' does not: give a number"),
    ("no header", "orders_part1.csv' (table 'orders') has no column 'cid' in its header"),
])
def test_refused_on_dask_before_anything_runs_and_nothing_written(inputs, capsys, case, message):
    extra = ["--max-rows-per-unit", "auto"] if case == "auto" else []
    if case == "no header":
        orders = pd.read_csv(inputs / "orders_part1.csv")
        orders.to_csv(inputs / "orders_part1.csv", index=False, header=False)
    assert generate(inputs, "dask", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", *extra) == 2
    assert message in capsys.readouterr().err
    assert list((inputs / "dask").iterdir()) == []
