"""Counting engines: the Dask engine on a real LocalCluster counts exactly what the pandas engine counts.

One local cluster (two worker processes) serves the whole module; the files are tiny and cut into
many parts (small ``blocksize`` / ``part_rows``) so that every code path of the split runs.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
import warnings

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from synthdp.core.data import AggregatedData  # noqa: E402
from synthdp.core.errors import InputError, SchemaError  # noqa: E402
from synthdp.files.parquet import dump_table, write_parquet  # noqa: E402
from synthdp.core.schema import Attribute, Schema  # noqa: E402
from synthdp.files.sources import ReadOptions, list_files, strip_text  # noqa: E402
from synthdp.engines import EngineError, get_engine  # noqa: E402
from synthdp.engines.dask import DaskEngine, _read_range, _violations, plan_parts  # noqa: E402
from synthdp.core.domain import Domain  # noqa: E402
from synthdp.core.keys import pack, unpack, word_spans  # noqa: E402
from synthdp.engines.keys import aggregate  # noqa: E402
from synthdp.engines.pandas import PandasEngine  # noqa: E402

SCHEMA = Schema((
    Attribute("color", "categorical", categories=("red", "green", "blue"), missing=True),
    Attribute("size", "categorical", categories=("0", "1", "2", "3", "4"), dtype="int64"),
    Attribute("age", "numeric", bounds=(0, 100), bins=7, dtype="float64"),
    Attribute("flag", "categorical", categories=("False", "True"), dtype="bool"),
), missing_values=("?",))


def make_table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    color = rng.choice(np.array(["red", "green", "blue", "?"], dtype=object), n, p=[0.5, 0.3, 0.15, 0.05])
    color[rng.random(n) < 0.05] = None
    color[rng.random(n) < 0.05] = "blue  "  # trailing spaces: stripped by both engines
    return pd.DataFrame({
        "color": color,
        "size": rng.integers(0, 5, n),
        "age": rng.uniform(0, 100, n).round(1),
        "flag": rng.random(n) < 0.3,
        "id": np.arange(n),  # not in the schema: ignored by both engines
    })


def same(a: AggregatedData, b: AggregatedData) -> bool:
    return a.domain == b.domain and np.array_equal(a.codes, b.codes) and np.array_equal(a.counts, b.counts)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        yield local


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The same 3,000 rows as one CSV, two CSVs, one Parquet file and a directory of Parquet files."""
    root = tmp_path_factory.mktemp("engines")
    df = make_table(3000, seed=1)
    df.to_csv(root / "all.csv", index=False)
    (root / "csvs").mkdir()
    df.iloc[:1700].to_csv(root / "csvs" / "a.csv", index=False)
    df.iloc[1700:].to_csv(root / "csvs" / "b.csv", index=False)
    df.to_parquet(root / "all.parquet", index=False, row_group_size=250)
    (root / "pq").mkdir()
    for k, start in enumerate(range(0, 3000, 1000)):
        df.iloc[start:start + 1000].to_parquet(root / "pq" / f"part-{k}.parquet", index=False, row_group_size=300)
    (root / "pq" / "_SUCCESS").write_text("")
    return root, df


def dask_engine(cluster, **options) -> DaskEngine:
    options = {"blocksize": 4096, "part_rows": 200, "batch_rows": 500, **options}
    return DaskEngine(scheduler=cluster.scheduler_address, **options)


# ---- keys and parts (no cluster) ----------------------------------------------------------------

@pytest.mark.parametrize("sizes,spans", [((2**40, 2**30, 7, 3), ((0, 1), (1, 4))),
                                          ((2**62, 2, 5), ((0, 1), (1, 3))),  # 2**63 does not fit an int64
                                          ((2**31, 2**30, 3), ((0, 3),))])
def test_keys_round_trip_and_order_across_words(sizes, spans):
    assert word_spans(sizes) == spans
    rng = np.random.default_rng(0)
    codes = np.column_stack([rng.integers(0, s, 500, dtype=np.int64) for s in sizes])
    codes[0] = np.array(sizes) - 1  # the largest key
    words = pack(codes, sizes)
    assert words.shape == (500, len(spans)) and (words >= 0).all()
    assert np.array_equal(unpack(words, sizes), codes)
    # keys sort like code tuples, so distinct keys are distinct rows
    assert np.array_equal(np.lexsort(words.T[::-1]), np.lexsort(codes.T[::-1]))


@pytest.mark.parametrize("sizes", [(3, 1, 4), (2**40, 2**30, 7, 3)])
def test_counting_by_key_equals_sorting_all_rows(sizes):
    rng = np.random.default_rng(1)
    codes = np.column_stack([rng.integers(0, min(s, 3), 2000, dtype=np.int64) for s in sizes])
    domain = Domain(tuple("abcd"[:len(sizes)]), sizes)
    assert same(aggregate(domain, codes), AggregatedData.from_codes(domain, codes))


@pytest.mark.parametrize("blocksize", [1, 7, 64, 1000, 10**6])
def test_csv_byte_ranges_hold_every_line_once(files, blocksize):
    root, _ = files
    path = root / "all.csv"
    with pytest.warns(UserWarning, match="id"):
        parts = plan_parts(list_files(path), SCHEMA, blocksize=blocksize)
    text = b"".join(_read_range(p.path, p.start, p.end) for p in parts)
    assert text == path.read_bytes()
    assert [p.header for p in parts].count(True) == 1 and parts[0].header


def test_pandas_engine_is_todays_encoder_on_a_dataframe(files):
    from synthdp.core.encoding import Encoder

    _, df = files
    with pytest.warns(UserWarning, match="id"):
        expected = Encoder(SCHEMA).to_aggregated(strip_text(df)[0])  # the API strips text values before encoding
    with pytest.warns(UserWarning, match="id"):
        assert same(PandasEngine().count(df, SCHEMA), expected)
    assert expected.n == 3000


def test_parquet_output_reads_back_to_the_same_counts(tmp_path):
    df = make_table(300, seed=9).drop(columns="id")
    write_parquet(df, tmp_path / "out.parquet")
    assert (tmp_path / "out.parquet").read_bytes()[:4] == b"PAR1"
    assert same(PandasEngine().count(tmp_path / "out.parquet", SCHEMA), PandasEngine().count(df, SCHEMA))
    dump_table(df, tmp_path / "t.tmp", "synthetic.csv")
    assert (tmp_path / "t.tmp").read_text().splitlines()[0] == "color,size,age,flag"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


# ---- identical counts ------------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["all.csv", "csvs", "csvs/*.csv", "all.parquet", "pq", ["pq/part-0.parquet",
                                    "pq/part-1.parquet", "pq/part-2.parquet"]])
def test_dask_counts_equal_pandas_counts(cluster, files, source):
    root, df = files
    source = [root / s for s in source] if isinstance(source, list) else str(root / source)
    with pytest.warns(UserWarning, match="id"):
        expected = PandasEngine().count(df, SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Parquet files are read on the schema's columns only
        from_files = PandasEngine().count(source, SCHEMA)
    with pytest.warns(UserWarning, match=r"ignoring columns \['id'\]"):
        counted = dask_engine(cluster).count(source, SCHEMA)
    assert same(from_files, expected)
    assert same(counted, expected)


def test_clip_clamps_on_both_engines(cluster, tmp_path):
    df = make_table(400, seed=2).drop(columns="id")
    df.loc[::7, "age"] = 250.0
    df.loc[::11, "age"] = -3.0
    df.to_csv(tmp_path / "t.csv", index=False)
    clipping = Schema(tuple(Attribute("age", "numeric", bounds=(0, 100), bins=7, dtype="float64", clip=True)
                            if a.name == "age" else a for a in SCHEMA.attributes), SCHEMA.missing_values)
    expected = PandasEngine().count(df, clipping)
    assert same(dask_engine(cluster, blocksize=512).count(tmp_path / "t.csv", clipping), expected)
    with pytest.raises(SchemaError, match="age"):
        PandasEngine().count(df, SCHEMA)


# ---- bad input: clear errors naming file and column ------------------------------------------------

def test_violations_are_counted_per_column_over_all_parts(cluster, tmp_path):
    df = make_table(600, seed=3).drop(columns="id")
    df["age"] = df["age"].astype(object)
    df.loc[[5, 250, 590], "age"] = 130.0  # outside the bounds, in three parts
    df.loc[[10, 400], "color"] = "purple"  # unknown category, in two parts
    df.loc[[300], "age"] = "old"  # not a number
    df.iloc[:300].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[300:].to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(SchemaError) as err:
        dask_engine(cluster, blocksize=2048).count(tmp_path, SCHEMA)
    text = str(err.value)
    assert "column 'age': 4 value(s)" in text and "column 'color': 2 value(s)" in text
    assert "a.csv" in text and "130" in text and "purple" in text and "clip" in text


def test_unparsable_value_names_file_and_column(cluster, tmp_path):
    df = make_table(300, seed=4).drop(columns="id")
    write_parquet(df, tmp_path / "good.parquet")
    bad = df.copy()
    bad["age"] = bad["age"].astype(str)
    bad.loc[120, "age"] = "12,5"
    write_parquet(bad, tmp_path / "bad.parquet")
    with pytest.raises(SchemaError, match=r"column 'age': 1 value\(s\).*bad\.parquet.*'12,5'.*not a number") as err:
        dask_engine(cluster, batch_rows=50).count(tmp_path, SCHEMA)
    first, row = re.search(r"count from row (\d+) of the file\): value '12,5' in row (\d+)", str(err.value)).groups()
    assert int(first) + int(row) == 120  # the row of the file, told as batch start + row in the batch


def test_part_with_a_missing_column_names_file_and_column(cluster, tmp_path):
    df = make_table(300, seed=5).drop(columns="id")
    write_parquet(df, tmp_path / "p1.parquet")
    write_parquet(df.drop(columns="flag"), tmp_path / "p2.parquet")
    with pytest.raises(SchemaError, match=r"p2\.parquet.*no column\(s\) \['flag'\]"):
        dask_engine(cluster).count(tmp_path, SCHEMA)


def test_unreadable_files_are_named(cluster, tmp_path):
    df = make_table(100, seed=6).drop(columns="id")
    write_parquet(df, tmp_path / "ok.parquet")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError, match=r"broken\.parquet"):
        dask_engine(cluster).count(tmp_path, SCHEMA)
    (tmp_path / "bad.csv").write_bytes(b"color,size,age,flag\nred,1,2.0,True\n\xff\xfe,1,2,True\n")
    with pytest.raises(InputError, match=r"bad\.csv"):
        dask_engine(cluster).count(tmp_path / "bad.csv", SCHEMA)
    with pytest.raises(InputError, match="no file matches"):
        dask_engine(cluster).count(str(tmp_path / "nothing-*.parquet"), SCHEMA)


def test_missing_optional_packages_say_what_to_install(monkeypatch, files):
    root, _ = files
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask were not installed
    with pytest.raises(InputError, match=r"pip install 'synthdp\[dask\]'"):
        DaskEngine().count(root / "pq", SCHEMA)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(InputError, match=r"pip install 'synthdp\[dask\]'"):
        PandasEngine().count(root / "all.parquet", SCHEMA)


def test_dask_needs_a_public_schema_and_files(cluster, files):
    root, df = files
    with pytest.raises(InputError, match="public schema"):
        dask_engine(cluster).count(root / "all.csv", None)
    with pytest.raises(InputError, match="engine='pandas'"):
        dask_engine(cluster).count(df, SCHEMA)
    with pytest.raises(InputError, match="unknown engine"):
        get_engine("spark")


def test_a_file_named_on_its_own_is_csv_whatever_its_extension_on_both_engines(cluster, files, tmp_path):
    """``adult.data`` is read as CSV when named (as the command line always did), by the API and by Dask; a glob
    only takes *.csv and *.parquet files, and says so."""
    from synthdp.api import generate_synthetic

    root, df = files
    (tmp_path / "table.data").write_bytes((root / "all.csv").read_bytes())
    (tmp_path / "notes.txt").write_text("not a table")
    assert [f.format for f in list_files(tmp_path / "table.data")] == ["csv"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same(dask_engine(cluster).count(tmp_path / "table.data", SCHEMA), PandasEngine().count(df, SCHEMA))
        generate_synthetic(str(tmp_path / "table.data"), "marginals:1", schema=SCHEMA, **RUN)
    with pytest.raises(InputError, match=r"cannot tell the format of .*notes\.txt.*a glob matches must be named "
                                         r"\*\.csv .*give the file on its own"):
        list_files(str(tmp_path / "*"))
    import bz2

    (tmp_path / "table.data.bz2").write_bytes(bz2.compress((root / "all.csv").read_bytes()))  # read whole, unpacked
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same(dask_engine(cluster).count(tmp_path / "table.data.bz2", SCHEMA), PandasEngine().count(df, SCHEMA))


# ---- a worker killed mid-pass ------------------------------------------------------------------------

def kill_a_busy_worker_during(address: str, work) -> dict:
    """Run ``work()`` in a thread, SIGKILL a worker while it runs a task; ``work``'s result or error."""
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = work()
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    with distributed.Client(address) as watcher:
        workers = len(watcher.scheduler_info()["workers"])
        thread.start()
        deadline = time.monotonic() + 60
        busy = []
        while not busy and time.monotonic() < deadline:
            busy = [w for w, tasks in watcher.processing().items() if tasks]
            time.sleep(0.01)
        assert busy, "the pass never started"
        pids = watcher.run(os.getpid)
        os.kill(pids[busy[0]], signal.SIGKILL)
        outcome["killed_mid_pass"] = thread.is_alive()
        thread.join(120)
        watcher.wait_for_workers(workers, timeout=60)
    return outcome


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    df = make_table(20_000, seed=7).drop(columns="id")
    path = tmp_path_factory.mktemp("big") / "big.csv"
    df.to_csv(path, index=False)
    return path, PandasEngine().count(df, SCHEMA)


def test_worker_killed_mid_pass_gives_the_right_counts_or_a_clear_error(cluster, big_csv):
    path, expected = big_csv
    engine = dask_engine(cluster, blocksize=512)  # about 800 parts: the pass lasts seconds
    outcome = kill_a_busy_worker_during(cluster.scheduler_address, lambda: engine.count(path, SCHEMA))
    assert outcome["killed_mid_pass"]
    if "error" in outcome:
        assert isinstance(outcome["error"], EngineError) and "nothing was released" in str(outcome["error"])
    else:
        assert same(outcome["result"], expected)


def test_a_task_whose_worker_dies_past_the_retry_limit_is_a_clear_error(big_csv):
    path, _ = big_csv
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as strict:
        engine = dask_engine(strict, blocksize=512)
        outcome = kill_a_busy_worker_during(strict.scheduler_address, lambda: engine.count(path, SCHEMA))
    assert outcome["killed_mid_pass"] and "result" not in outcome
    assert isinstance(outcome["error"], EngineError), outcome["error"]
    assert "workers kept dying" in str(outcome["error"]) and "nothing was released" in str(outcome["error"])


def test_default_local_cluster_is_started_and_closed_for_the_pass(files):
    root, df = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counted = DaskEngine(n_workers=1, part_rows=1000).count(root / "pq", SCHEMA)
        expected = PandasEngine().count(df, SCHEMA)
    assert same(counted, expected)


def test_read_options_apply_to_csv_parts(cluster, tmp_path):
    df = make_table(500, seed=8).drop(columns="id")
    df.to_csv(tmp_path / "nohead.csv", index=False, header=False)
    options = ReadOptions(missing=("?",), columns=tuple(df.columns))
    expected = PandasEngine(options).count(tmp_path / "nohead.csv", SCHEMA)
    assert expected.n == 500
    assert same(dask_engine(cluster, options=options, blocksize=700).count(tmp_path / "nohead.csv", SCHEMA),
                expected)


# ---- the API and the command line ------------------------------------------------------------------

RUN = dict(epsilon=1.0, delta=1e-9, rounds=3, samples_per_round=10, random_state=3, progress=False)


def test_same_release_for_the_same_seed_whichever_engine_counted(cluster, files):
    from synthdp.api import generate_synthetic

    root, df = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        in_memory = generate_synthetic(df, "marginals:2", schema=SCHEMA, **RUN)
        on_dask = generate_synthetic(str(root / "pq"), "marginals:2", schema=SCHEMA, engine="dask",
                                     scheduler=cluster.scheduler_address, **RUN)
        from_files = generate_synthetic(str(root / "csvs"), "marginals:2", schema=SCHEMA, **RUN)
        other_data = generate_synthetic(df.iloc[:1500], "marginals:2", schema=SCHEMA, **RUN)
    pd.testing.assert_frame_equal(on_dask.data, in_memory.data)
    pd.testing.assert_frame_equal(from_files.data, in_memory.data)
    for key in ("ledger", "selected_queries", "epsilon_spent", "delta_spent", "rows_written"):
        assert getattr(on_dask.report.release, key) == getattr(in_memory.report.release, key)
    assert not other_data.data.equals(in_memory.data)  # the release does depend on the counts


def test_api_dask_engine_needs_a_schema(files):
    from synthdp.api import generate_synthetic

    root, _ = files
    with pytest.raises(InputError, match="public schema"):
        generate_synthetic(str(root / "pq"), "marginals:1", engine="dask", **RUN)
    with pytest.raises(InputError, match="engine='dask'"):
        generate_synthetic(str(root / "pq"), "marginals:1", schema=SCHEMA, scheduler="tcp://127.0.0.1:1", **RUN)


def learning_schema(df: pd.DataFrame) -> Schema:
    """Every domain of the test table left to learn: three text columns, one numeric column's bounds and cells."""
    return Schema.from_dataframe(df.drop(columns="id", errors="ignore"), categorical=["size"], learn_bounds=["age"],
                                 dtypes={"size": "int64", "flag": "bool"}, missing_values=("?",))


@pytest.mark.parametrize("source", ["all.csv", "csvs", "pq"])
def test_dask_tallies_equal_pandas_tallies(cluster, files, source):
    """What the private domain steps read (docs/privacy.md §10.7) is the same from the parts as from the whole."""
    root, df = files
    schema = learning_schema(df)
    assert schema.to_learn == ("color", "size", "flag") and schema.to_bound == schema.to_discretise == ("age",)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 'id' column is not in the schema
        on_dask = dask_engine(cluster).tally(str(root / source), schema)
    in_memory = PandasEngine().tally(df, schema)
    assert on_dask.rows == in_memory.rows == 3000
    assert on_dask.labels == in_memory.labels and sum(on_dask.labels["color"].values()) < 3000  # '?' and None left out
    assert in_memory.labels["color"]["blue"] > 0 and "blue  " not in in_memory.labels["color"]  # stripped
    for column in ("age",):
        assert np.array_equal(on_dask.numbers[column].values, in_memory.numbers[column].values)
        assert np.array_equal(on_dask.numbers[column].counts, in_memory.numbers[column].counts)
    assert in_memory.numbers["age"].rows == 3000


@pytest.mark.parametrize("method", ["measure", "game"])  # categories by §10.5 inside the filter / by §9 ahead of it
def test_same_release_when_the_domains_are_learned_whichever_engine_read(cluster, files, method):
    """Categories, bounds and PrivTree cells learned from the Dask engine's tallies: the same release as in memory."""
    from synthdp.api import generate_synthetic

    root, df = files
    run = dict(RUN, schema=learning_schema(df), method=method)
    if method == "measure":
        del run["rounds"], run["samples_per_round"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        in_memory = generate_synthetic(df, "marginals:2", **run)
        on_dask = generate_synthetic(str(root / "csvs"), "marginals:2", engine="dask",
                                     scheduler=cluster.scheduler_address, **run)
        other_data = generate_synthetic(df.iloc[:1500], "marginals:2", **run)
    assert in_memory.schema == on_dask.schema and not in_memory.schema.to_learn
    assert len(in_memory.schema["age"].cuts) > 1  # PrivTree split the column
    pd.testing.assert_frame_equal(on_dask.data, in_memory.data)
    assert on_dask.report.release.to_dict() == in_memory.report.release.to_dict()
    assert other_data.schema != in_memory.schema  # the learned domains do depend on the data


@pytest.mark.parametrize("values,odd", [(["001", "002", "003"], "abc"), (["1.50", "2.25"], "abc"),
                                        (["true", "false"], "?"), (["TRUE", "FALSE"], "maybe")])
def test_parts_that_pandas_would_type_differently_give_the_same_labels(cluster, tmp_path, values, odd):
    """Every field is read as text and labelled on its own (docs/privacy.md §10.7): a part whose values all look
    like numbers or booleans labels them as the whole file does, so the engines agree."""
    from synthdp.api import generate_synthetic

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"code": rng.choice(values, 600), "y": rng.choice(["a", "b"], 600)})
    df.loc[550, "code"] = odd  # in the last part only
    df.to_csv(tmp_path / "t.csv", index=False)
    schema = Schema((Attribute("code", "categorical", origin="learn"),
                     Attribute("y", "categorical", categories=("a", "b"))), ("?",))
    on_dask = dask_engine(cluster, blocksize=1024).tally(tmp_path / "t.csv", schema)
    in_memory = PandasEngine().tally(tmp_path / "t.csv", schema)
    assert on_dask.labels == in_memory.labels and set(in_memory.labels["code"]) <= {*values, odd}
    run = dict(epsilon=1.0, delta=1e-9, random_state=3, progress=False, schema=schema)
    one = generate_synthetic(str(tmp_path / "t.csv"), "marginals:2", engine="dask",
                             scheduler=cluster.scheduler_address, **run)
    two = generate_synthetic(str(tmp_path / "t.csv"), "marginals:2", **run)
    assert one.schema == two.schema and set(one.schema["code"].categories) <= {*values, odd}
    pd.testing.assert_frame_equal(one.data, two.data)


def test_dask_tally_refuses_a_value_naming_file_and_row_before_any_private_step(cluster, tmp_path, monkeypatch):
    from synthdp.api import generate_synthetic
    import synthdp.mechanisms.noise as noise

    df = make_table(400, seed=2).drop(columns="id")
    schema = learning_schema(df)
    df["age"] = df["age"].astype(object)
    df.loc[333, "age"] = "old"
    df.iloc[:200].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[200:].to_csv(tmp_path / "b.csv", index=False)
    monkeypatch.setattr(noise, "discrete_laplace", lambda *a: (_ for _ in ()).throw(AssertionError("noise")))
    with pytest.raises(SchemaError, match=r"b\.csv.*value 'old' in row 133, numeric column 'age' is not a number "
                                          r"\(the column is numeric because its bounds are to be learned\).*nothing "
                                          r"was spent or released"):
        generate_synthetic(str(tmp_path), "marginals:2", engine="dask", scheduler=cluster.scheduler_address,
                           **dict(RUN, schema=schema))


def test_dask_tally_refuses_a_bad_value_of_a_public_column_before_any_private_step(cluster, tmp_path, monkeypatch):
    """A column the domain steps do not read is checked in the tally pass too (docs/privacy.md §10.8): it was
    refused by the counting pass, after partition selection and the bounds had spent."""
    from synthdp.api import generate_synthetic
    import synthdp.mechanisms.noise as noise

    df = make_table(400, seed=2)[["size", "age"]]
    schema = Schema.from_dataframe(df, categories={"size": [0, 1, 2, 3, 4]}, learn_bounds=["age"])
    assert "size" not in schema.to_learn
    df.loc[333, "size"] = 9
    df.iloc[:200].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[200:].to_csv(tmp_path / "b.csv", index=False)
    monkeypatch.setattr(noise, "discrete_laplace", lambda *a: (_ for _ in ()).throw(AssertionError("noise")))
    with pytest.raises(SchemaError, match=r"b\.csv.*value '?9'? in row 133, column 'size' is outside its declared "
                                          r"domain.*nothing was spent or released"):
        generate_synthetic(str(tmp_path), "marginals:2", engine="dask", scheduler=cluster.scheduler_address,
                           **dict(RUN, schema=schema))


def test_dask_tally_refuses_a_missing_token_in_a_column_with_an_other_label_before_any_charge(cluster, tmp_path):
    """A text whose integer label is the token (``-01`` is ``-1``) is missing as category encoding reads it."""
    from synthdp.api import generate_synthetic

    df = make_table(400, seed=2)[["size", "age"]].astype({"size": object})
    df.loc[333, "size"] = "-01"
    df.iloc[:200].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[200:].to_csv(tmp_path / "b.csv", index=False)
    schema = Schema((Attribute("size", "categorical", dtype="int64", origin="learn", other="9"),
                     Attribute("age", "numeric", bounds=(0, 100), bins=7, dtype="float64")), missing_values=("-1",))
    with pytest.raises(SchemaError, match=r"b\.csv.*column 'size' has a missing value in row 133.*"
                                          r"nothing was spent or released") as caught:
        generate_synthetic(str(tmp_path), "marginals:2", engine="dask", scheduler=cluster.scheduler_address,
                           **dict(RUN, schema=schema))
    assert "came after private steps" not in str(caught.value)


def test_values_an_other_label_holds_are_not_counted_as_violations():
    """Outside the categories but held by the other label: only the missing value is refused, and counted."""
    attr = Attribute("color", "categorical", categories=("red", "other"), other="other")
    assert _violations(attr, pd.Series(["red", "purple", None, "teal"], dtype=object), ()) == 1


def _cli(cluster, source, out, schema_file, *extra):
    from synthdp.cli import main

    return main(["generate", str(source), "-o", str(out), "--epsilon", "1", "--delta", "1e-9", "--rounds", "3",
                 "--samples-per-round", "10", "--queries", "marginals:2", "--schema", str(schema_file),
                 "--seed", "3", "-q", "--engine", "dask", "--scheduler", cluster.scheduler_address, *extra])


def test_cli_dask_engine_reads_a_directory_and_writes_parquet(cluster, files, tmp_path, capsys):
    root, _ = files
    SCHEMA.save(tmp_path / "schema.json")
    # a column the schema does not list is refused from the files' headers, as in memory, before any pass
    assert _cli(cluster, root / "pq", tmp_path / "out.parquet", tmp_path / "schema.json") == 2
    assert "the schema has no column 'id'" in capsys.readouterr().err and not (tmp_path / "out.parquet").exists()
    assert _cli(cluster, root / "pq", tmp_path / "out.parquet", tmp_path / "schema.json", "--drop", "id", "idd") == 2
    assert "--drop names ['idd'], which" in capsys.readouterr().err and not (tmp_path / "out.parquet").exists()
    assert _cli(cluster, root / "pq", tmp_path / "out.parquet", tmp_path / "schema.json", "--drop", "id") == 0
    assert _cli(cluster, root / "all.csv", tmp_path / "out.csv", tmp_path / "schema.json", "--drop", "id") == 0
    from_parquet = pd.read_parquet(tmp_path / "out.parquet")
    from_csv = pd.read_csv(tmp_path / "out.csv")
    assert len(from_parquet) == len(from_csv) > 0
    assert same(PandasEngine().count(tmp_path / "out.parquet", SCHEMA), PandasEngine().count(tmp_path / "out.csv",
                                                                                              SCHEMA))


def test_cli_the_readme_path_drafts_a_schema_that_learns_and_runs_on_dask_as_in_memory(cluster, files, tmp_path):
    """docs/guide/large-inputs.md: ``synthdp schema --learn-categories all`` on one file, then ``generate --engine dask``
    on all of them: the same table as in memory (docs/privacy.md §10.7)."""
    from synthdp.cli import main

    root, _ = files
    schema_file = tmp_path / "schema.json"
    assert main(["schema", str(root / "csvs" / "a.csv"), "-o", str(schema_file), "--bounds", "age=0.0:100",
                 "--categorical", "size", "--drop", "id", "--learn-categories", "all", "--missing", "?"]) == 0
    assert Schema.load(schema_file).to_learn == ("color", "size", "flag")
    common = ["--epsilon", "1", "--delta", "1e-9", "--queries", "marginals:2", "--schema", str(schema_file),
              "--seed", "3", "-q", "--missing", "?", "--drop", "id"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Dask engine's note that it leaves the dropped 'id' out
        assert main(["generate", str(root / "csvs"), "-o", str(tmp_path / "dask.csv"), *common, "--engine", "dask",
                     "--scheduler", cluster.scheduler_address]) == 0
        assert main(["generate", str(root / "csvs"), "-o", str(tmp_path / "memory.csv"), *common]) == 0
    assert (tmp_path / "dask.csv").read_text() == (tmp_path / "memory.csv").read_text()


def test_cli_bad_input_on_the_distributed_path_names_file_and_column_and_writes_nothing(cluster, tmp_path, capsys):
    df = make_table(300, seed=10).drop(columns="id")
    SCHEMA.save(tmp_path / "schema.json")
    (tmp_path / "in").mkdir()
    write_parquet(df, tmp_path / "in" / "p1.parquet")
    write_parquet(df.drop(columns="flag"), tmp_path / "in" / "p2.parquet")
    out = tmp_path / "out.csv"
    assert _cli(cluster, tmp_path / "in", out, tmp_path / "schema.json") == 2
    assert "p2.parquet" in capsys.readouterr().err and not out.exists()
    bad = df.astype({"age": str})
    bad.loc[7, "age"] = "n/a"
    write_parquet(bad, tmp_path / "in" / "p2.parquet")
    assert _cli(cluster, tmp_path / "in", out, tmp_path / "schema.json") == 2
    err = capsys.readouterr().err
    assert "p2.parquet" in err and "'age'" in err and "'n/a'" in err and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "schema.json"]  # no temporary left either


def test_dask_bounds_privacy_units_like_pandas(cluster, tmp_path):
    """The shuffle by unit keeps the rows the in-memory bounding keeps, whatever the parts (docs/privacy.md §10.6)."""
    from synthdp.api import generate_synthetic
    from synthdp.mechanisms.units import Bounding

    rng = np.random.default_rng(4)
    pid = np.repeat([f"00{i}" for i in range(400)], rng.integers(1, 7, 400))  # numeric-looking: read as text
    df = pd.DataFrame({"pid": pid, "color": rng.choice(["red", "green", "blue"], len(pid)),
                       "size": rng.integers(0, 5, len(pid)), "age": rng.uniform(0, 100, len(pid)).round(1),
                       "flag": rng.random(len(pid)) < 0.3}).sample(frac=1, random_state=1)  # units interleaved
    df.iloc[:700].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[700:].to_csv(tmp_path / "b.csv", index=False)
    bounding = Bounding("pid", 2, np.array([3, 4], dtype=np.uint64))
    on_dask = dask_engine(cluster, blocksize=2048).count(str(tmp_path), SCHEMA, bounding=bounding)
    raw = PandasEngine(ReadOptions(text=("pid",))).read(str(tmp_path))
    assert same(on_dask, PandasEngine().count(bounding.apply(raw), SCHEMA))
    assert on_dask.n == np.minimum(df["pid"].value_counts(), 2).sum()
    run = dict(epsilon=1, delta=1e-6, random_state=3, progress=False, privacy_unit="pid", max_rows_per_unit=2,
               n_rows=50, schema=SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = generate_synthetic(str(tmp_path), "marginals:2", engine="dask", scheduler=cluster.scheduler_address,
                                 **run)
        two = generate_synthetic(str(tmp_path), "marginals:2", **run)
    pd.testing.assert_frame_equal(one.data, two.data)
    assert one.report.release.to_dict() == two.report.release.to_dict()

    # the domains learned from the bounded rows: the same shuffle carries the rows' values (docs/privacy.md §10.7)
    schema = learning_schema(df.drop(columns="pid"))
    tallied = dask_engine(cluster, blocksize=2048).tally(str(tmp_path), schema, bounding=bounding)
    in_memory = PandasEngine().tally(bounding.apply(raw), schema)
    assert tallied.rows == in_memory.rows == on_dask.n and tallied.labels == in_memory.labels
    assert all(np.array_equal(getattr(tallied.numbers["age"], f), getattr(in_memory.numbers["age"], f))
               for f in ("values", "counts"))
    unbounded = PandasEngine().tally(raw.drop(columns="pid"), schema)
    assert unbounded.rows > tallied.rows and unbounded.labels != tallied.labels
    run["schema"] = schema
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = generate_synthetic(str(tmp_path), "marginals:2", engine="dask", scheduler=cluster.scheduler_address,
                                 **run)
        two = generate_synthetic(str(tmp_path), "marginals:2", **run)
    assert one.schema == two.schema and not one.schema.to_learn
    pd.testing.assert_frame_equal(one.data, two.data)
    assert one.report.release.to_dict() == two.report.release.to_dict()
