"""The reweighted sample's fit (docs/privacy.md §8.7): the optimum of a reference solve, the total, the signs.

The fit is post-processing of released answers; these tests check the
solver, not a privacy property: it must reach the weighted least-squares
optimum over the records drawn, keep the model's total and never give a
record a negative weight.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from synthdp.core.domain import Domain
from synthdp.methods.measure import estimators
from synthdp.methods.measure.estimators import NoisyMarginal
from synthdp.methods.measure.reweight import CAPPED_GROWTH, fit_weights, marginal_group

TINY = Domain(tuple("abc"), (2, 3, 2))  # 12 records: a large draw holds every one
PAIRS = [(0, 1), (1, 2), (0, 2)]


def _truth(seed: int) -> np.ndarray:
    """A table of 1,200 records with a three-way dependence no chain of pairs carries."""
    gen = np.random.default_rng(seed)
    table = gen.dirichlet(np.full(TINY.cells((0, 1, 2)), 5.0)).reshape(TINY.sizes)
    return 1200 * table


def _groups(table: np.ndarray, noise: float, seed: int):
    """Noisy 2-way marginals of ``table`` (inconsistent with each other when ``noise > 0``), sigma2 from 1 to 3."""
    gen = np.random.default_rng(seed)
    noisy = []
    for i, attrs in enumerate(PAIRS):
        axis = tuple(a for a in range(3) if a not in attrs)
        counts = table.sum(axis=axis).reshape(-1)
        noisy.append(NoisyMarginal(attrs, counts + noise * gen.standard_normal(counts.size), 1.0 + i))
    return noisy, [marginal_group(TINY, y) for y in noisy]


def _chain_model(noisy):
    """The graphical model of the first two pairs only: it cannot hold the third."""
    model = estimators.fit(TINY, noisy[:2], 300)
    assert model.holder((0, 2)) is None or len(model.cliques) == 1
    return model


def _design(codes: np.ndarray, groups) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense reference design: one row per measured cell."""
    rows = []
    for g in groups:
        cell = g.cell(codes)
        rows.append((cell[None, :] == np.arange(g.size)[:, None]).astype(float))
    return (np.vstack(rows), np.concatenate([g.counts for g in groups]),
            np.concatenate([np.full(g.size, 1 / g.sigma2) for g in groups]))


def _reference(codes: np.ndarray, groups, total: float) -> np.ndarray:
    """The weighted least-squares optimum over weights >= 0 summing to ``total``, by SLSQP at a tight tolerance."""
    matrix, answers, inv_var = _design(codes, groups)

    def loss(w):
        r = matrix @ w - answers
        return 0.5 * float(r @ (inv_var * r)), matrix.T @ (inv_var * r)

    start = np.full(len(codes), total / len(codes))
    result = minimize(loss, start, jac=True, method="SLSQP", bounds=[(0, None)] * len(codes),
                      constraints=[{"type": "eq", "fun": lambda w: w.sum() - total, "jac": lambda w: np.ones_like(w)}],
                      options={"ftol": 1e-15, "maxiter": 2000})
    assert result.success
    return matrix @ result.x


@pytest.mark.parametrize("seed, growth", [(0, CAPPED_GROWTH), (1, CAPPED_GROWTH), (2, CAPPED_GROWTH),
                                          (0, math.inf), (1, math.inf)])
def test_fit_reaches_the_reference_optimum_on_inconsistent_measurements(seed, growth):
    """Noisy pairs that no table matches: the fitted answers equal SLSQP's optimum (unique: the loss is strictly
    convex in the answers), the total is the model's and every weight is non-negative -- with the capped steps
    and with uncapped Barzilai-Borwein steps (the deep fit of the covering step)."""
    noisy, groups = _groups(_truth(seed), noise=25.0, seed=seed)
    model = _chain_model(noisy)
    fitted = fit_weights(model, groups, support=20_000, iters=3000, generator=np.random.default_rng(seed),
                         growth=growth)
    assert len(fitted.codes) == TINY.cells((0, 1, 2))
    matrix, _, _ = _design(fitted.codes, groups)
    reference = _reference(fitted.codes, groups, model.total)
    np.testing.assert_allclose(matrix @ fitted.weights, reference, atol=1e-3 * model.total / 12)
    assert fitted.total == pytest.approx(model.total, rel=1e-12)
    assert (fitted.weights >= 0).all()


def test_fit_matches_consistent_measurements_exactly():
    """Exact marginals of one table (total 1,200): the optimum has zero loss, so every fitted count equals its
    measurement -- including the pair the chain model does not hold."""
    table = _truth(5)
    noisy, groups = _groups(table, noise=0.0, seed=5)
    model = _chain_model(noisy)
    fitted = fit_weights(model, groups, support=20_000, iters=3000, generator=np.random.default_rng(5))
    for y in noisy:
        np.testing.assert_allclose(fitted.counts(y.attrs), y.counts, atol=1e-3)
    assert fitted.total == pytest.approx(1200.0, rel=1e-9)
    assert (fitted.weights >= 0).all()


def test_fit_moves_only_as_far_as_its_steps_allow():
    """Fewer steps stop farther from the optimum: the loss falls with the number of steps (the iteration count is
    a real budget, not ignored)."""
    noisy, groups = _groups(_truth(3), noise=25.0, seed=3)
    model = _chain_model(noisy)
    matrix, answers, inv_var = None, None, None
    losses = []
    for iters in (0, 5, 3000):
        fitted = fit_weights(model, groups, support=20_000, iters=iters, generator=np.random.default_rng(3))
        matrix, answers, inv_var = _design(fitted.codes, groups)
        r = matrix @ fitted.weights - answers
        losses.append(0.5 * float(r @ (inv_var * r)))
    assert losses[0] > losses[1] > losses[2]
    optimum = _reference(fitted.codes, groups, model.total) - answers
    assert losses[2] == pytest.approx(0.5 * float(optimum @ (inv_var * optimum)), rel=1e-6, abs=1e-6)


def test_uncapped_steps_reach_a_lower_loss_in_as_many_steps():
    """The step cap is a real regulariser, not ignored: in the same 40 steps the uncapped rule ends at a lower loss
    than the capped one (both above the optimum)."""
    noisy, groups = _groups(_truth(4), noise=25.0, seed=4)
    model = _chain_model(noisy)
    losses = {}
    for growth in (CAPPED_GROWTH, math.inf):
        fitted = fit_weights(model, groups, support=20_000, iters=40, generator=np.random.default_rng(4),
                             growth=growth)
        matrix, answers, inv_var = _design(fitted.codes, groups)
        r = matrix @ fitted.weights - answers
        losses[growth] = 0.5 * float(r @ (inv_var * r))
    assert losses[math.inf] < losses[CAPPED_GROWTH]


def test_the_loss_and_its_gradient_are_the_sparse_expressions_to_the_bit():
    """The design kept as each record's cell per group, multiplied group by group, and the loss's vectors filled in
    place give the very floats of the compressed sparse matrix and the plain expressions they replace (the fit, and
    so the release for a seed, is unchanged): 40 groups, a third of them queries that accept only some records,
    weights over six orders of magnitude."""
    from scipy import sparse

    from synthdp.methods.measure.reweight import NoisyGroup, _design, _SquaredError

    gen = np.random.default_rng(1)
    records = 3000
    groups = []
    for j in range(40):
        size = int(gen.integers(1, 60))
        cell = gen.integers(-1 if j % 3 == 0 else 0, size, records)
        groups.append(NoisyGroup(f"group {j}", lambda codes, cell=cell: cell, size, gen.normal(50, 20, size),
                                 float(gen.uniform(1, 9))))
    design = _design(np.zeros((records, 1), dtype=np.int64), groups)
    assert design[0].dtype == np.int16  # every group's cells fit 16 bits
    by_record = design[0].T
    kept = by_record >= 0
    rows = by_record.astype(np.int64) + design[3][:-1]  # a group's cell is its row past the group's offset
    matrix = sparse.csc_matrix((np.ones(int(kept.sum())), rows[kept],
                                np.concatenate([[0], np.cumsum(kept.sum(axis=1))])),
                               shape=(len(design[1]), records))
    answers = np.concatenate([g.counts for g in groups])
    inv_var = np.concatenate([np.full(g.size, 1.0 / g.sigma2) for g in groups])
    loss = _SquaredError(*design, total=1234.5)
    for _ in range(3):
        p = gen.exponential(size=records) * 10.0 ** gen.integers(-3, 3, records)
        p /= p.sum()
        residual = matrix @ (1234.5 * p) - answers
        assert loss.value(p) == 0.5 * float(np.einsum("i,i->", residual, inv_var * residual))
        assert np.array_equal(loss.gradient(), 1234.5 * (matrix.T @ (inv_var * residual)))


@pytest.mark.parametrize("size, dtype", [(2**15, np.int16), (2**15 + 1, np.int32)])
def test_the_design_narrows_to_16_bits_only_when_every_cell_fits(size, dtype):
    """A group's last cell is ``size - 1``: 32,767 fits 16 bits, 32,768 does not and must not wrap to a negative
    (unread) cell; the product then still puts each record's weight in its own cell, read past the first group's."""
    from synthdp.methods.measure.reweight import NoisyGroup, _design, _SquaredError

    records = 4
    cell = np.array([size - 1, 0, size - 1, -1])
    groups = [NoisyGroup("small", lambda codes: np.array([0, 1, 1, 0]), 2, np.zeros(2), 1.0),
              NoisyGroup("wide", lambda codes: cell, size, np.zeros(size), 1.0)]
    design = _design(np.zeros((records, 1), dtype=np.int64), groups)
    assert design[0].dtype == dtype
    loss = _SquaredError(*design, total=1.0)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    expected = np.zeros(2 + size)
    np.add.at(expected, [0, 1, 1, 0], p)
    np.add.at(expected, 2 + cell[cell >= 0], p[cell >= 0])
    assert loss.value(p) == 0.5 * float(np.einsum("i,i->", expected, expected))
