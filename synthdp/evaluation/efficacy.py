"""Machine-learning efficacy: does a model trained on the synthetic table predict the real one?

The data owner's check (it reads the real table; see :mod:`synthdp.quality`).
The real rows are split once at random into a train part and a test part
(:data:`TEST_SHARE`); scikit-learn's histogram gradient boosting is trained
on the synthetic rows and, for reference, on the real train part, and both
are scored on the same real test part: accuracy for a categorical target,
R^2 for a number or date.  scikit-learn is an extra (``synthdp[quality]``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from synthdp.core.errors import InputError
from synthdp.core.extras import require
from synthdp.evaluation.similarity import PAIR_CATEGORIES, Column

#: Share of the real rows held out for testing.
TEST_SHARE = 0.3
#: Rows each model trains on at most (a uniform sample beyond), to bound the time.
MAX_TRAIN_ROWS = 100_000


@dataclass(frozen=True)
class Efficacy:
    """The two models' scores on the real test rows: ``synthetic`` (trained on the synthetic table) and
    ``real`` (trained on the real train part); ``baseline`` is the majority class's share of the test rows
    (classification) or 0 (R^2 of predicting the mean)."""

    target: str
    task: str
    metric: str
    synthetic: float
    real: float
    baseline: float
    train_rows: int
    test_rows: int

    def to_dict(self) -> dict:
        return asdict(self)


def _features(columns: list[Column], target: str, side: str) -> tuple[np.ndarray, np.ndarray]:
    """The feature matrix of ``side`` (NaN for missing; categories as codes capped at
    :data:`PAIR_CATEGORIES`, the rest sharing one code) and which features are categorical."""
    features, categorical = [], []
    for column in columns:
        if column.name == target:
            continue
        values = getattr(column, side).astype(float)
        if not column.is_number:
            values = np.where(values < 0, np.nan, np.minimum(values, PAIR_CATEGORIES))
        features.append(values)
        categorical.append(not column.is_number)
    return np.column_stack(features), np.array(categorical)


def ml_efficacy(columns: list[Column], target: str, *, random_state: int = 0) -> Efficacy:
    """Train on the synthetic rows and on the real train rows, score both on the real test rows (module
    docstring).  Rows whose target is missing are left out."""
    names = [c.name for c in columns]
    if target not in names:
        raise InputError(f"target {target!r} is not a column of the tables; choose one of {names}")
    if len(columns) < 2:
        raise InputError(f"target {target!r} is the only column: there is nothing to predict it from")
    ensemble = require("sklearn.ensemble", f"ML efficacy (target {target!r})")
    threads = require("threadpoolctl", f"ML efficacy (target {target!r})")  # installed with scikit-learn
    column = columns[names.index(target)]
    rng = np.random.default_rng(random_state)
    x_real, categorical = _features(columns, target, "real")
    x_syn, _ = _features(columns, target, "synthetic")
    y_real, y_syn = column.real.astype(float), column.synthetic.astype(float)
    if not column.is_number:
        y_real[y_real < 0], y_syn[y_syn < 0] = np.nan, np.nan
    keep_real, keep_syn = ~np.isnan(y_real), ~np.isnan(y_syn)
    x_real, y_real, x_syn, y_syn = x_real[keep_real], y_real[keep_real], x_syn[keep_syn], y_syn[keep_syn]
    order = rng.permutation(len(y_real))
    n_test = int(round(TEST_SHARE * len(order)))
    test, train = order[:n_test], order[n_test:]
    if n_test < 2 or len(train) < 2 or len(y_syn) < 2:
        raise InputError(f"target {target!r}: too few rows with a value to train and test on "
                         f"({len(y_real)} real, {len(y_syn)} synthetic); at least 7 real and 2 synthetic are needed")
    train = train[rng.permutation(len(train))[:MAX_TRAIN_ROWS]]
    syn_rows = rng.permutation(len(y_syn))[:MAX_TRAIN_ROWS]
    x_test, y_test = x_real[test], y_real[test]
    if column.is_number:
        model, task, metric = ensemble.HistGradientBoostingRegressor, "regression", "R^2"
        baseline = 0.0
    else:
        model, task, metric = ensemble.HistGradientBoostingClassifier, "classification", "accuracy"
        baseline = float(np.bincount(y_test.astype(np.int64)).max() / len(y_test))
    scores = []
    for x, y in ((x_syn[syn_rows], y_syn[syn_rows]), (x_real[train], y_real[train])):
        if not column.is_number and len(np.unique(y)) < 2:  # one class: the model predicts it everywhere
            scores.append(float(np.mean(y_test == y[0])))
            continue
        # one OpenMP thread: on a busy machine the boosting's spinning threads made a one-second fit take minutes
        with threads.threadpool_limits(limits=1, user_api="openmp"):
            fitted = model(categorical_features=categorical, random_state=random_state).fit(x, y)
            scores.append(float(fitted.score(x_test, y_test)))
    return Efficacy(target, task, metric, scores[0], scores[1], baseline, len(train), n_test)
