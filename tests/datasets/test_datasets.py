"""Locating and loading the shared benchmark data, the raw Adult reader, and the demo table."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp.datasets import (
    ADULT_RAW_COLUMNS,
    adult_raw_schema,
    CODED_DATASETS,
    benchmarks_dir,
    data_dir,
    demo_dataframe,
    demo_schema,
    load_adult_raw,
    load_coded,
    load_workload,
)
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError


@pytest.fixture(scope="module")
def shared_data():
    """Skip when the shared benchmark data are not available."""
    try:
        return data_dir(), benchmarks_dir()
    except InputError as exc:
        pytest.skip(f"shared benchmark data not available: {exc}")


@pytest.mark.parametrize(("func", "env"), [(data_dir, "SYNTHDP_DATA_DIR"), (benchmarks_dir, "SYNTHDP_BENCHMARKS_DIR")])
def test_directories_follow_environment_variable(func, env, tmp_path, monkeypatch):
    monkeypatch.setenv(env, str(tmp_path))
    assert func() == tmp_path
    monkeypatch.setenv(env, str(tmp_path / "absent"))
    with pytest.raises(InputError, match=f"absent.*set the environment variable {env}"):
        func()


@pytest.mark.parametrize("func", [data_dir, benchmarks_dir])
def test_data_home_argument_wins_over_the_environment(func, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTHDP_DATA_DIR", str(tmp_path / "absent"))
    monkeypatch.setenv("SYNTHDP_BENCHMARKS_DIR", str(tmp_path / "absent"))
    assert func(data_home=tmp_path) == tmp_path
    with pytest.raises(InputError, match="data_home=.*or set the environment variable"):
        func(data_home=tmp_path / "missing")


def test_default_location_is_beside_the_working_directory_not_the_installed_files(tmp_path, monkeypatch):
    (tmp_path / "shared" / "datasets").mkdir(parents=True)
    (tmp_path / "checkout").mkdir()
    monkeypatch.delenv("SYNTHDP_DATA_DIR")
    monkeypatch.chdir(tmp_path / "checkout")
    assert data_dir() == tmp_path / "shared" / "datasets"


@pytest.mark.parametrize(("name", "shape"), [("adult", (48842, 14)), ("nltcs", (21574, 16)),
                                             ("acs", (47461, 23)), ("br2000", (38000, 14))])
def test_load_coded(shared_data, name, shape):
    df, schema = load_coded(name)
    assert df.shape == shape and schema.names == tuple(df.columns)
    sizes = json.loads((shared_data[0] / f"{name}-domain.json").read_text())
    assert schema.domain.sizes == tuple(sizes.values())
    schema.domain.check_codes(df.to_numpy())


def test_load_coded_unknown_name():
    with pytest.raises(InputError, match=r"unknown dataset 'mnist'; choose one of \['adult'"):
        load_coded("mnist")


@pytest.mark.parametrize(("key", "k"), [("adult_3way_64", 3), ("adult_5way_64", 5)])
def test_load_workload_by_key_and_path(shared_data, key, k):
    workload = load_workload(key)
    _, schema = load_coded("adult")
    assert len(workload) == 64 and all(len(t) == k and set(t) <= set(schema.names) for t in workload)
    assert load_workload(shared_data[1] / f"adult-{k}way-64.json") == workload


def test_load_workload_errors(shared_data, tmp_path):
    with pytest.raises(InputError, match=r"unknown workload 'adult_9way'.*adult_3way_64"):
        load_workload("adult_9way")
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"a": 1}))
    with pytest.raises(InputError, match="must be a list of lists of attribute names"):
        load_workload(path)


def test_load_adult_raw_fixes_quirks(shared_data):
    train, test = load_adult_raw("train"), load_adult_raw("test")
    assert train.shape == (32561, 15) and test.shape == (16281, 15)
    assert tuple(train.columns) == ADULT_RAW_COLUMNS
    both = load_adult_raw("both")
    assert len(both) == len(train) + len(test) and both["age"].dtype == np.int64
    assert set(both["income"]) == {">50K", "<=50K"}
    assert both.isna().sum()[lambda s: s > 0].to_dict() == {"workclass": 2799, "occupation": 2809, "native-country": 857}
    text = both.select_dtypes(exclude="number").stack()
    assert not text.str.contains(r"^\s|\s$|^\?$").any()


def test_adult_raw_schema_is_public_and_covers_the_data(shared_data):
    schema = adult_raw_schema()
    raw = load_adult_raw("both")
    for attr in schema.attributes:
        if attr.kind == "categorical":
            assert set(raw[attr.name].dropna()) <= set(attr.categories), attr.name
            assert attr.missing == bool(raw[attr.name].isna().any()), attr.name
        else:
            assert attr.bounds[0] <= raw[attr.name].min() and raw[attr.name].max() <= attr.bounds[1], attr.name
    assert adult_raw_schema(bins={"age": 4})["age"].bins == 4
    with pytest.raises(InputError, match=r"bins given for \['sex'\]"):
        adult_raw_schema(bins={"sex": 3})


def test_load_adult_raw_bad_split():
    with pytest.raises(InputError, match="split must be"):
        load_adult_raw("validation")


def test_demo_is_deterministic():
    first = demo_dataframe(n=500, seed=3)
    pd.testing.assert_frame_equal(first, demo_dataframe(n=500, seed=3))
    assert not first.equals(demo_dataframe(n=500, seed=4))
    assert first.shape == (500, 6) and first["has_car"].dtype == bool


def mutual_information(df: pd.DataFrame, a: str, b: str) -> float:
    """Empirical mutual information (nats) of two columns."""
    joint = pd.crosstab(df[a], df[b], normalize=True).to_numpy()
    indep = joint.sum(axis=1, keepdims=True) * joint.sum(axis=0, keepdims=True)
    nz = joint > 0
    return float((joint[nz] * np.log(joint[nz] / indep[nz])).sum())


def test_demo_columns_are_correlated():
    df = demo_dataframe()
    for a, b in [("education", "income_band"), ("age_group", "employment"), ("income_band", "has_car")]:
        assert mutual_information(df, a, b) > 0.05, (a, b)
    assert mutual_information(df, "region", "age_group") < 0.01  # independent roots


def test_demo_schema_is_public_and_round_trips():
    df = demo_dataframe()
    encoder = Encoder(demo_schema())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        codes = encoder.encode(df)
    pd.testing.assert_frame_equal(encoder.decode(codes), df)
    with pytest.raises(InputError, match="n must be a positive integer"):
        demo_dataframe(n=0)


@pytest.fixture
def mirror(shared_data, tmp_path):
    """A folder URL holding copies of the shared NLTCS and ADULT files: fetch's tests never use the network."""
    folder = tmp_path / "mirror"
    folder.mkdir()
    for name in ("nltcs.csv", "adult.csv", "adult-domain.json"):
        (folder / name).write_bytes((shared_data[0] / name).read_bytes())
    return folder


def test_fetch_downloads_checks_and_the_loaders_use_the_cache(shared_data, mirror, tmp_path, monkeypatch):
    from synthdp.datasets import fetch

    cache = tmp_path / "cache"
    got = fetch("nltcs", mirror=mirror.as_uri(), folder=cache)
    assert got == cache and (cache / "nltcs.csv").read_bytes() == (shared_data[0] / "nltcs.csv").read_bytes()
    assert (cache / "nltcs-domain.json").read_bytes() == (shared_data[0] / "nltcs-domain.json").read_bytes()
    (mirror / "nltcs.csv").unlink()
    assert fetch("nltcs", mirror=mirror.as_uri(), folder=cache) == cache  # cached and checked: not fetched again
    # without SYNTHDP_DATA_DIR and ../shared, the loaders read the cache
    (tmp_path / "checkout").mkdir()
    monkeypatch.chdir(tmp_path / "checkout")
    monkeypatch.delenv("SYNTHDP_DATA_DIR", raising=False)
    monkeypatch.setenv("SYNTHDP_CACHE_DIR", str(cache))
    df, schema = load_coded("nltcs")
    assert df.shape == (21574, 16) and schema.domain.sizes == (2,) * 16
    with pytest.raises(InputError, match=r"acs.csv is not in .*synthdp.datasets.fetch\('acs'\)"):
        load_coded("acs")


def test_fetch_refuses_a_file_that_does_not_match_its_checksum_and_keeps_nothing(mirror, tmp_path):
    from synthdp.datasets import fetch

    with (mirror / "adult.csv").open("a") as handle:
        handle.write("17,0,0,0,0,0,0,0,0,0,0,0,0,0\n")  # one extra record
    with pytest.raises(InputError, match="adult.csv from file://.*does not match its pinned checksum"):
        fetch("adult", mirror=mirror.as_uri(), folder=tmp_path / "cache")
    assert not (tmp_path / "cache" / "adult.csv").exists()
    with pytest.raises(InputError, match="cannot download adult.csv"):
        fetch("adult", mirror=(tmp_path / "nowhere").as_uri(), folder=tmp_path / "cache2")
    with pytest.raises(InputError, match="unknown benchmark table 'bogus'"):
        fetch("bogus")


def test_every_registered_file_has_a_public_https_source_and_a_sha256():
    from synthdp.datasets.fetch import DOMAINS, REGISTRY

    files = [f for group in REGISTRY.values() for f in group]
    assert all(f.url.startswith("https://") and len(f.sha256) == 64 for f in files)
    assert set(DOMAINS) <= set(REGISTRY) and set(CODED_DATASETS) <= set(REGISTRY)


def test_without_data_the_message_says_how_to_fetch(tmp_path, monkeypatch):
    (tmp_path / "checkout").mkdir()
    monkeypatch.chdir(tmp_path / "checkout")
    monkeypatch.delenv("SYNTHDP_DATA_DIR", raising=False)
    monkeypatch.setenv("SYNTHDP_CACHE_DIR", str(tmp_path / "no-cache"))
    with pytest.raises(InputError, match=r"set the environment variable SYNTHDP_DATA_DIR; or download the public "
                                         r"tables with synthdp.datasets.fetch\(name\)"):
        data_dir()
