"""Two linked tables with the child table left in its files and counted by the Dask engine (docs/privacy.md §12,
"The child table on Dask"): the same kept rows and the same synthetic tables as the pandas engine, byte for byte,
whatever the files' layout; missing keys and orphans never join; refusals before anything is spent.

One local cluster (two worker processes) serves the module; the files are cut into many parts (small
``blocksize`` / ``part_rows`` / ``batch_rows``) so that every family's rows are spread over several parts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from synthdp.api import release  # noqa: E402
from synthdp.config import SynthesisConfig  # noqa: E402
from synthdp.core.errors import InputError, SchemaError  # noqa: E402
from synthdp.core.schema import Attribute, Schema  # noqa: E402
from synthdp.engines.dask import DaskEngine  # noqa: E402
from synthdp.files.sources import read_table  # noqa: E402
from synthdp.linked.bounding import bound_families  # noqa: E402
from synthdp.linked.files import families_on_files, joined_on_files, linked_tables  # noqa: E402
from synthdp.linked.fitting import synthesize_linked  # noqa: E402
from synthdp.linked.links import read_link  # noqa: E402
from synthdp.mechanisms.randomness import PrivateRandom  # noqa: E402
from synthdp.mechanisms.units import bounding_key  # noqa: E402

K = 3
LINKS = {"orders.cid": "customers.cid"}
CHILD = Schema((Attribute("item", "categorical", categories=("a", "b", "c")),
                Attribute("amount", "numeric", bounds=(0, 100), bins=5, dtype="float64")))
OPTIONS = dict(query_class="marginals:2", epsilon=1, delta=1e-9, max_rows_per_unit=K, progress=False,
               random_state=4, links=LINKS, schema={"orders": CHILD},
               categories={"customers": {"region": ["N", "S"]}})


def make_pair(customers: int = 300, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Customers with 0..K+1 orders (the first with K+5), shuffled so that each family's rows are spread over the
    files; a key held by two customers, a customer without a key, orders without a key and orders of nobody."""
    rng = np.random.default_rng(seed)
    cid = np.arange(customers) * 7 + 3
    per = rng.integers(0, K + 2, customers)
    per[0] = K + 5
    owner = np.repeat(cid, per).astype(object)
    owner = np.concatenate([owner, [None] * 6, [-1, -2, 999_999]])  # missing keys and orphans
    orders = pd.DataFrame({"cid": pd.array(owner, dtype="Int64"),
                           "item": rng.choice(["a", "b", "c"], len(owner)),
                           "amount": rng.uniform(0, 100, len(owner)).round(2)})
    orders = orders.iloc[rng.permutation(len(orders))].reset_index(drop=True)
    keys = pd.array(np.concatenate([cid, [cid[1], None]]).astype(object), dtype="Int64")  # cid[1] twice, one NA
    customers_df = pd.DataFrame({"cid": keys, "region": rng.choice(["N", "S"], len(keys))})
    return {"customers": customers_df, "orders": orders}


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        yield local


def dask_engine(cluster, **options) -> DaskEngine:
    return DaskEngine(scheduler=cluster.scheduler_address,
                      **{"blocksize": 1024, "part_rows": 100, "batch_rows": 150, **options})


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    """The same pair with the orders as one CSV (cut into byte ranges), three CSV files and three Parquet files."""
    root = tmp_path_factory.mktemp("linked")
    pair = make_pair()
    pair["customers"].to_csv(root / "customers.csv", index=False)
    orders = pair["orders"]
    orders.to_csv(root / "orders.csv", index=False)
    thirds = np.array_split(np.arange(len(orders)), 3)
    for i, rows in enumerate(thirds):
        orders.iloc[rows].to_csv(root / f"orders_{i}.csv", index=False)
        orders.iloc[rows].to_parquet(root / f"orders_{i}.parquet", index=False, row_group_size=60)
    return root, {"one CSV in byte ranges": str(root / "orders.csv"),
                  "three CSV files": str(root / "orders_*.csv"),
                  "three Parquet files": [str(root / f"orders_{i}.parquet") for i in range(3)]}


def as_bytes(tables: dict[str, pd.DataFrame]) -> dict[str, bytes]:
    return {name: table.to_csv(index=False).encode() for name, table in tables.items()}


@pytest.mark.parametrize("layout", ["one CSV in byte ranges", "three CSV files", "three Parquet files"])
def test_dask_writes_the_tables_pandas_writes_byte_for_byte(cluster, layouts, layout):
    root, sources = layouts
    tables = {"customers": str(root / "customers.csv"), "orders": sources[layout]}
    on_pandas = release(tables, SynthesisConfig(**OPTIONS))
    on_dask = release(tables, SynthesisConfig(**OPTIONS, engine="dask"), engine=dask_engine(cluster))
    assert as_bytes(on_dask.tables) == as_bytes(on_pandas.tables)
    assert on_dask.report.to_dict() == on_pandas.report.to_dict()
    assert len(on_dask.tables["orders"]) > 100


def kept_rows(cluster, layouts, layout):
    """The child rows each engine keeps (by their row number ``seq``) and each kept parent's ``m``."""
    root, sources = layouts
    read = read_table(sources[layout])
    pair = {"customers": read_table(root / "customers.csv"), "orders": read.assign(seq=np.arange(len(read)))}
    rng = PrivateRandom(11)
    keys = bounding_key(rng), bounding_key(rng)
    link = read_link(pair, LINKS)
    expected = bound_families(pair["customers"], pair["orders"], link, K, *keys)
    config = SynthesisConfig(**{**OPTIONS, "schema": None}, engine="dask")
    files = linked_tables({"customers": pair["customers"], "orders": sources[layout]}, config)
    engine = dask_engine(cluster)
    families = families_on_files(files["customers"], files["orders"], link, K, keys[0], engine)
    joined = joined_on_files(families, files["orders"], link, K, keys[1], engine)
    probe = Schema((Attribute("amount", "numeric", bounds=(0, 100), origin="learn", dtype="float64"),
                    Attribute("customers.n_orders", "categorical", origin="learn", dtype="int64")))
    tallied = joined.tally(sources[layout], probe, joined.bounding)
    return expected, families, tallied


@pytest.mark.parametrize("layout", ["one CSV in byte ranges", "three Parquet files"])
def test_dask_keeps_the_rows_pandas_keeps_and_the_same_m(cluster, layouts, layout):
    expected, families, tallied = kept_rows(cluster, layouts, layout)
    assert np.array_equal(families.m, expected.m) and list(families.keys) == list(expected.keys)
    assert (families.orphans, families.merged_keys, families.children_before) == \
           (expected.orphans, expected.merged_keys, expected.children_before) == (9, 1, expected.children_before)
    kept = expected.children["amount"].astype(float).value_counts().sort_index()
    number = tallied.numbers["amount"]
    assert np.array_equal(number.values, kept.index.to_numpy()) and np.array_equal(number.counts, kept.to_numpy())
    m_per_row = pd.Series(expected.m[expected.parent_of]).astype(str).value_counts().to_dict()
    assert tallied.labels["customers.n_orders"] == m_per_row


def test_a_parent_with_k_plus_5_children_keeps_exactly_k_and_missing_keys_join_nothing(cluster, layouts):
    expected, families, tallied = kept_rows(cluster, layouts, "three CSV files")
    assert families.m[0] == expected.m[0] == K  # the first customer has K + 5 orders
    assert families.keys[-1] is None and families.m[-1] == 0  # the customer without a key has no children
    assert tallied.rows == int(expected.m.sum()) == len(expected.children)
    assert tallied.labels["customers.n_orders"][str(K)] == K * int((expected.m == K).sum())


def _refused(tables, message, engine=None, **options):
    calls = []
    with pytest.raises(InputError, match=message):
        synthesize_linked(tables, SynthesisConfig(**{**OPTIONS, "engine": "dask", **options}),
                          lambda *a, **kw: calls.append(a), engine)
    assert calls == []


def test_a_child_dataframe_is_refused_on_dask_with_the_way(layouts):
    root, sources = layouts
    _refused({"customers": str(root / "customers.csv"), "orders": make_pair()["orders"]},
             r"engine='dask' reads the child table 'orders' part by part from its files: pass its CSV or Parquet "
             r"files .* or use engine='pandas'")


def test_max_rows_per_unit_auto_is_refused_on_dask_before_anything_runs():
    with pytest.raises(InputError, match=r"max_rows_per_unit='auto' reads table 'orders' in memory, which "
                                         r"engine='dask' does not: give a number .*or use engine='pandas'"):
        SynthesisConfig(**{**OPTIONS, "max_rows_per_unit": "auto", "engine": "dask"})


def test_a_file_without_a_header_or_the_foreign_key_is_refused_naming_it(layouts, tmp_path):
    root, _ = layouts
    pair = make_pair()
    pair["orders"].iloc[:50].to_csv(tmp_path / "orders_0.csv", index=False)
    pair["orders"].iloc[50:].to_csv(tmp_path / "orders_1.csv", index=False, header=False)
    _refused({"customers": str(root / "customers.csv"), "orders": str(tmp_path / "orders_*.csv")},
             r"orders_1.csv' \(table 'orders'\) has no column 'cid' in its header.*needs a header row")
    pair["orders"].drop(columns="item").to_csv(tmp_path / "orders_1.csv", index=False)
    _refused({"customers": str(root / "customers.csv"), "orders": str(tmp_path / "orders_*.csv")},
             r"orders_1.csv' has no column\(s\) \['item'\]", engine=DaskEngine(scheduler="tcp://127.0.0.1:1"))


def test_a_child_on_files_needs_its_public_schema(layouts):
    root, sources = layouts
    _refused({"customers": str(root / "customers.csv"), "orders": sources["three CSV files"]},
             r"engine='dask' needs a public schema for table 'orders'",
             engine=DaskEngine(scheduler="tcp://127.0.0.1:1"),
             schema=None, categories={"customers": {"region": ["N", "S"]}, "orders": {"item": ["a", "b", "c"]}})


@pytest.mark.parametrize("key", ["foreign key", "own key"])
def test_a_child_schema_listing_a_key_is_refused_on_dask_before_anything_runs(layouts, key, tmp_path):
    root, _ = layouts
    orders = make_pair()["orders"]
    orders.assign(oid=np.arange(len(orders)) + 1).to_csv(tmp_path / "orders.csv", index=False)
    listed = Attribute("cid" if key == "foreign key" else "oid", "numeric", bounds=(0, 10_000), dtype="int64")
    _refused({"customers": str(root / "customers.csv"), "orders": str(tmp_path / "orders.csv")},
             rf"the schema of table 'orders' lists \['{listed.name}'\], a key column: keys are identifiers",
             engine=DaskEngine(scheduler="tcp://127.0.0.1:1"), schema={"orders": Schema((*CHILD.attributes, listed))},
             **({"keys": {"orders": "oid"}} if key == "own key" else {}))


def test_a_refused_value_after_orphan_rows_says_its_row_counts_the_joined_rows_only(cluster, layouts, tmp_path):
    root, _ = layouts
    orders = make_pair()["orders"].dropna(subset=["cid"])
    orders = orders[orders["cid"] > 0].astype({"item": object})
    orphans = orders.head(6).assign(cid=999_999)
    bad = orders.head(1).assign(item="zz")
    pd.concat([orphans, bad, orders.iloc[1:]]).to_csv(tmp_path / "orders.csv", index=False)
    tables = {"customers": str(root / "customers.csv"), "orders": str(tmp_path / "orders.csv")}
    with pytest.raises(SchemaError, match=r"orders.csv, counting only the rows whose foreign key is a parent's: "
                                          r"value 'zz' in row 0"):
        release(tables, SynthesisConfig(**OPTIONS, engine="dask"), engine=dask_engine(cluster))


def test_a_child_column_named_as_a_joined_parent_column_is_refused_before_any_pass(layouts, tmp_path):
    root, _ = layouts
    make_pair()["orders"].assign(**{"customers.region": "N"}).to_csv(tmp_path / "orders.csv", index=False)
    _refused({"customers": str(root / "customers.csv"), "orders": str(tmp_path / "orders.csv")},
             r"table 'orders' has column\(s\) \['customers.region'\], the names its parent's columns take",
             engine=DaskEngine(scheduler="tcp://127.0.0.1:1"))


def test_generate_synthetic_on_dask_starts_one_local_cluster_and_writes_pandas_tables(layouts):
    """The public entry point with engine='dask' and no scheduler: every pass on one local cluster."""
    import synthdp

    root, sources = layouts
    tables = {"customers": str(root / "customers.csv"), "orders": sources["three CSV files"]}
    options = {name: value for name, value in OPTIONS.items() if name != "links"}
    on_dask = synthdp.generate_synthetic(tables, links=LINKS, engine="dask", **options)
    on_pandas = synthdp.generate_synthetic(tables, links=LINKS, **options)
    assert as_bytes(on_dask.tables) == as_bytes(on_pandas.tables)


def test_the_child_s_own_key_is_never_read_on_dask_and_written_fresh_as_in_memory(cluster, tmp_path):
    pair = make_pair(customers=150, seed=2)
    pair["customers"].to_csv(tmp_path / "customers.csv", index=False)
    orders = pair["orders"].assign(oid=np.arange(len(pair["orders"])) * 5 + 1)
    for i, rows in enumerate(np.array_split(np.arange(len(orders)), 2)):
        orders.iloc[rows].to_csv(tmp_path / f"orders_{i}.csv", index=False)
    tables = {"customers": str(tmp_path / "customers.csv"), "orders": str(tmp_path / "orders_*.csv")}
    options = {**OPTIONS, "keys": {"orders": "oid"}}
    on_pandas = release(tables, SynthesisConfig(**options))
    on_dask = release(tables, SynthesisConfig(**options, engine="dask"), engine=dask_engine(cluster))
    assert as_bytes(on_dask.tables) == as_bytes(on_pandas.tables)
    assert list(on_dask.tables["orders"].columns) == ["oid", "cid", "item", "amount"]
