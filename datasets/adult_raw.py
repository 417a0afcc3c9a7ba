"""The raw UCI Adult files, read with their quirks, and a public schema for them.

The files (``adult-raw.data``, ``adult-raw.test``) have no header, separate
fields by ``", "``, write missing values as ``"?"``; the test file starts
with a junk line (``|1x3 Cross validator``) and its labels end with ``"."``.
They stand for what a user with a real, messy CSV has.

:func:`adult_raw_schema` is a *public* schema: bounds for the continuous
columns and the category lists of the UCI documentation (``adult.names``),
written here in code, so encoding needs nothing read off the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from synthdp.datasets.locations import data_dir
from synthdp.core.errors import InputError
from synthdp.core.schema import Attribute, Schema

#: Column names in file order (UCI ``adult.names``).
ADULT_RAW_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
)

_FILES = {"train": ("adult-raw.data", 0), "test": ("adult-raw.test", 1)}  # file, junk lines to skip

#: Category lists of the UCI documentation.
ADULT_CATEGORIES: dict[str, tuple[str, ...]] = {
    "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                  "Without-pay", "Never-worked"),
    "education": ("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                  "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"),
    "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"),
    "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
                   "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
                   "Priv-house-serv", "Protective-serv", "Armed-Forces"),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": ("United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                       "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
                       "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
                       "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                       "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"),
    "income": (">50K", "<=50K"),
}

#: Public bounds and default bin counts of the continuous columns.
ADULT_BOUNDS: dict[str, tuple[float, float]] = {
    "age": (17, 90), "fnlwgt": (0, 1.5e6), "education-num": (1, 16), "capital-gain": (0, 100_000),
    "capital-loss": (0, 5000), "hours-per-week": (1, 99),
}
ADULT_BINS: dict[str, int] = {
    "age": 8, "fnlwgt": 10, "education-num": 5, "capital-gain": 10, "capital-loss": 10, "hours-per-week": 7,
}

#: Columns in which the published files write "?" (documented for this public benchmark).
ADULT_NULLABLE = ("workclass", "occupation", "native-country")


def load_adult_raw(split: str = "train", *, data_home: str | Path | None = None) -> pd.DataFrame:
    """The raw Adult rows of ``split`` (``"train"``, ``"test"`` or ``"both"``, train first).

    Continuous columns are int64, the others strings; ``"?"`` becomes NaN and
    the test labels lose their trailing ``"."`` so both splits agree; ``data_home``
    as in :func:`synthdp.datasets.data_dir`.
    """
    if split == "both":
        return pd.concat([load_adult_raw("train", data_home=data_home), load_adult_raw("test", data_home=data_home)],
                         ignore_index=True)
    if split not in _FILES:
        raise InputError(f"split must be 'train', 'test' or 'both', got {split!r}")
    name, junk = _FILES[split]
    df = pd.read_csv(
        data_dir(data_home) / name, header=None, names=list(ADULT_RAW_COLUMNS), skiprows=junk,
        skipinitialspace=True, na_values=["?"], keep_default_na=False,
    )
    df["income"] = df["income"].str.rstrip(".")
    return df


def adult_raw_schema(bins: Mapping[str, int] | None = None) -> Schema:
    """A public schema for :func:`load_adult_raw` frames, built without looking at the data.

    ``bins`` overrides the bin counts of continuous columns (:data:`ADULT_BINS`).
    """
    bins = {**ADULT_BINS, **(bins or {})}
    unknown = sorted(set(bins) - set(ADULT_BOUNDS))
    if unknown:
        raise InputError(f"bins given for {unknown}, which are not continuous Adult columns {sorted(ADULT_BOUNDS)}")
    string_dtype = str(pd.Series(["text"]).dtype)
    attributes = []
    for col in ADULT_RAW_COLUMNS:
        if col in ADULT_BOUNDS:
            attributes.append(Attribute(col, "numeric", bounds=ADULT_BOUNDS[col], bins=bins[col], dtype="int64"))
        else:
            attributes.append(Attribute(col, "categorical", categories=ADULT_CATEGORIES[col],
                                        missing=col in ADULT_NULLABLE, dtype=string_dtype))
    return Schema(tuple(attributes))
