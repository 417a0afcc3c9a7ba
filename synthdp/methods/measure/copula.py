"""Numeric columns that move together: a Gaussian copula read off released counts shapes the sample (§8.12).

A numeric column's fine cells are read through ``groups`` runs of
consecutive cells (:mod:`~synthdp.methods.measure.coarse`), so the released
counts of a numeric pair say how rows fall into pairs of groups but nothing
about where they lie inside one, and the model holds few numeric pairs in
its cliques.  Drawn from the model, two lengths with correlation 0.95 come
back as a staircase of squares, each filled evenly, and the reweighting
(which reads the groups) can only move weight between the records drawn.
This module draws the reweighted sample's support closer to the data:

1. :func:`pair_fit` estimates, for each pair of numeric columns,
   the correlation of a bivariate normal whose cells at the groups'
   quantiles best fit the released counts on the pair's groups (the
   polychoric correlation), and :func:`bends` whether the pair rises, then
   falls (no copula's); :func:`correlations` puts the pairs together.
2. :func:`redraw_numbers` keeps, in each record drawn from the model, one
   numeric column's cell and every other attribute, and draws the other
   numeric columns' cells from the Gaussian copula with those correlations
   given it, each column's cells by the model's one-way counts.

The reweighting then fits the support to every measurement as before, and
the estimate keeps the :class:`Copula`, by which :func:`positions_in_cells`
places the decoded values inside their cells.  Pairs related in a way no
copula describes are drawn from their released tables by
:mod:`~synthdp.methods.measure.linked_pairs`, which reads :func:`pair_tables`.
Everything here reads released counts, the public domain and the public
generator: post-processing (docs/privacy.md §8.12).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import optimize, special

from synthdp.core.domain import Domain
from synthdp.methods.measure.coarse import group_sum, regroup
from synthdp.methods.measure.estimators import NoisyMarginal

log = logging.getLogger(__name__)

#: The largest correlation estimated: the copula stays a density.
MAX_CORRELATION = 0.99
#: The share of a pair's departure from independence a copula must explain for the pair to count as moving
#: together (:func:`strong_columns`): on the generated tables of ``synthdp bench numeric`` every pair of the
#: dependent table's five measures explains 1.000 of it (no noise, 8 groups), the skewed table's relations between
#: a claim and the visits 0.98, between the claim and the wait 0.87.
COPULA_EXPLAINED = 0.9
#: A pair weaker than ``copula_from`` still moves together (:func:`strong_columns`) when the released counts show it
#: related but measure it loosely: its correlation is at least :data:`RELATED_FROM`, at least
#: :data:`RELATED_SIGNIFICANCE` standard errors of its fit away from 0 (the error read off the released noise
#: variance, :class:`PairFit`), the error is at least :data:`RELATED_LOOSE_FROM`, and its fit explains at least
#: :data:`RELATED_EXPLAINED` of its departure from independence (the last two defaults of public options).  Measured
#: loosely, a pair's counts cannot move the reweighted support toward it and the copula is what carries it; measured
#: closely, the reweighting fits the counts themselves and the copula's normal shape can only misfit them.  The same
#: number of errors is the default of which readings the copula's matrix keeps (:func:`copula_of`, ``keep_from``): a
#: pair of the copula's columns read at fewer is 0.  4 errors: noise alone gives an independent pair a spread of about
#: one error, so among the 36 pairs of 9 numeric columns one reads 4 with a chance near 0.2% (3: up to 10%).  0.6: on
#: the credit table read through covering views (docs/privacy.md §8.11 step 1; eps 1, seeds 0-2) a price and a loan
#: read 0.68 to 0.85 at 4.4 to 5.1 errors explaining 0.62 to 0.64 (the loan's point mass at 1000 is no copula's), an
#: age and a tenure 0.53 to 0.67 at 4.7 to 5.1 explaining 0.80 to 1.00, no other pair 3 errors.  Looser, at 3 errors
#: and 0.4, the price and the loan are also taken on seeds 3 and 5 (0.566 at 3.35 errors explaining 1.00; 0.60 at 3.7
#: explaining 0.48), and so are the independent assets and debt at eps 4 (seed 2: 0.74 at 3.13 explaining 0.42): one
#: noisy reading does not tell the two apart (docs/benchmarks.md, "Small tables at small budgets"). Earlier, with 6
#: groups for every column: on skewed the claim's pairs with the wait and the visits (0.67 and 0.40 at errors 0.014
#: and 0.016, explaining 0.76 and 0.74) stay out: with them the largest Pearson error, set by the claim's Pareto tail,
#: rose from 0.23 / 0.28 to 0.38 / 0.39 (seeds 0 / 1).
RELATED_FROM = 0.4
RELATED_SIGNIFICANCE = 4.0
RELATED_LOOSE_FROM = 0.03
RELATED_EXPLAINED = 0.6
#: A pair that fails the loose-pair test's number of errors is still related and measured loosely when it reads at
#: least :data:`RELATED_NULL_SIGNIFICANCE` errors, its fit explains at least :data:`RELATED_NULL_EXPLAINED` and at most
#: :data:`RELATED_NULL_SHARE` of its null tables read a correlation as far from 0 (:func:`null_share`; the tables
#: drawn with a generator seeded by :data:`NULL_SEED` and the pair's columns): the looser test of 3 errors and 0.4,
#: guarded against what the linearised error understates, noise alone read off a margin that is mostly one group (a
#: debt 80% 0).  On the credit table (eps 1, seeds 0-5; eps 4, seeds 0-2) the price and the loan read beyond all but
#: 0.0% to 1.9% of their null tables (seed 3: 0.566 at 3.35 errors, 0.5% to 1.9% as the seed of the null tables
#: varies; seed 5: 0.600 explaining 0.48, 0.0%), every independent pair passing the other conditions (all with the
#: debt) beyond all but 3.7% to 12.6% (docs/privacy.md §8.12 step 2).  The 3 errors keep out the wage table's age and
#: log wage (real Pearson 0.22) read 0.40 at 2.7 errors: related, but read at twice its size.
RELATED_NULL_SIGNIFICANCE = 3.0
RELATED_NULL_EXPLAINED = 0.4
RELATED_NULL_SHARE = 0.02
#: The public seed of the null tables' generator (:func:`null_share`).
NULL_SEED = 812
#: A pair *bends* (:func:`bends`) when its table, cut at the row group by which half its rows are counted, gives two
#: parts whose correlations have opposite signs, each at least this many of its standard errors from 0: a relation
#: that rises, then falls, which no copula describes.  Noise alone makes an independent pair bend with a chance
#: below ``2 Phi(-3)^2`` (1.5e-5 a cut); a hump (hours of work with age) on 12 x 12 groups of 30,000 rows reads about
#: 0.9 and -0.7 on its two halves (docs/privacy.md §8.12 step 2).
BEND_SIGNIFICANCE = 3.0
#: Gibbs sweeps of :func:`positions_in_cells`: on the dependent table of ``synthdp bench numeric`` (a release's
#: cells, seed 0) one sweep took the largest Pearson error from 0.063 to 0.028, three or ten to 0.027.
PLACEMENT_SWEEPS = 3
#: Latent cut points are clipped here (Phi(8) is 1 to 6e-16).
_LATENT_CLIP = 8.0
#: Gauss-Legendre nodes of Plackett's integral for the bivariate normal distribution function.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)


@dataclass(frozen=True)
class Copula:
    """The numeric columns that move together (domain indices) and their latent correlations, read off released
    counts (§8.12): part of the released estimate."""

    columns: tuple[int, ...]
    correlation: np.ndarray


def bivariate_normal_cdf(h: np.ndarray, k: np.ndarray, r: float) -> np.ndarray:
    """``P(X <= h, Y <= k)`` for standard normals with correlation ``r`` (broadcast), by Plackett's identity
    ``Phi2(h, k; r) = Phi(h) Phi(k) + integral_0^r phi2(h, k; s) ds`` on Gauss-Legendre nodes; exact to about 1e-9
    for ``|r| <= MAX_CORRELATION``."""
    h, k = np.broadcast_arrays(np.clip(h, -_LATENT_CLIP, _LATENT_CLIP), np.clip(k, -_LATENT_CLIP, _LATENT_CLIP))
    s = (0.5 * r * (_NODES + 1.0))[:, None]
    one = 1.0 - s * s
    hh, kk = h.reshape(1, -1), k.reshape(1, -1)
    density = np.exp(-(hh * hh - 2.0 * s * hh * kk + kk * kk) / (2.0 * one)) / (2.0 * math.pi * np.sqrt(one))
    integral = 0.5 * r * (_WEIGHTS @ density)
    return (special.ndtr(h) * special.ndtr(k)).reshape(-1) + integral


def _cuts(margin: np.ndarray) -> np.ndarray:
    """Latent cut points of a margin's groups: ``Phi^-1`` of its cumulative shares, clipped."""
    shares = np.concatenate([[0.0], np.cumsum(margin)]) / margin.sum()
    return np.clip(special.ndtri(np.clip(shares, 0.0, 1.0)), -_LATENT_CLIP, _LATENT_CLIP)


@dataclass(frozen=True)
class PairFit:
    """A bivariate normal fitted to noisy counts on two columns' ordered groups.

    ``correlation``: the polychoric correlation (least squares); ``explained``: the share of the counts' departure
    from independence (their squared distance from the fit with correlation 0, less the noise's expected share) that
    the fit removes, in [0, 1]: near 1 when the columns move together as a copula says, low for a curved or weak
    relation that a correlation cannot describe; ``error``: the standard error of ``correlation`` near 0 that the
    noise alone gives (infinite when the counts cannot be fitted, 0 without noise): the fit's least-squares
    linearisation at correlation 0, where a cell's derivative is ``(phi(h') - phi(h)) (phi(k') - phi(k))`` times
    the total (Plackett), so ``sqrt(variance) / (total |d phi(rows)| |d phi(cols)|)``, a function of the released
    counts and their noise variance.
    """

    correlation: float
    explained: float
    error: float


#: A column's released one-way readings summed to its ordered groups, and the noise variance of each group's sum.
Margin = tuple[np.ndarray, np.ndarray]


def _margin(own: np.ndarray, own_variance: float, released: Margin | None) -> np.ndarray:
    """A pair table's margin ``own`` (each sum of noise variance ``own_variance``) averaged, group by group and by
    inverse variance, with the column's one-way readings on the same groups (``released``; None: ``own`` as it
    is): the cut points of :func:`pair_fit` read off the sharper of the two (docs/privacy.md §8.12 step 1)."""
    if released is None or own_variance <= 0 or len(released[0]) != len(own):
        return own
    sums, variances = released
    weight = own_variance / (own_variance + variances)  # the one-way readings' weight
    return (1.0 - weight) * own + weight * sums


def _cut_margins(table: np.ndarray, variance: float, margins: tuple[Margin | None, Margin | None]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The row and column margins a pair fit cuts ``table`` at: its own sums averaged with the one-way ``margins``
    (:func:`_margin`), negative sums read as 0."""
    return (np.clip(_margin(table.sum(axis=1), variance * table.shape[1], margins[0]), 0.0, None),
            np.clip(_margin(table.sum(axis=0), variance * table.shape[0], margins[1]), 0.0, None))


def one_way_margins(measurements: Sequence[NoisyMarginal], maps: dict[int, np.ndarray], domain: Domain
                    ) -> dict[int, Margin]:
    """For each column of ``maps``: the inverse-variance mean of its fine one-way readings among ``measurements``
    (the one-way marginals of §8.1 step 1 and any measured again, §13), summed to its ordered groups (a missing
    value's group is not read), with each group sum's noise variance; a column with no such reading is left out."""
    out = {}
    for c, groups in maps.items():
        ordered = domain.ordered[c]
        count = int(groups[:ordered].max()) + 1
        cells = np.bincount(groups[:ordered], minlength=count).astype(float)
        read = [(np.asarray(m.counts, dtype=float)[:ordered], m.sigma2) for m in measurements
                if tuple(m.attrs) == (c,) and m.groups is None and m.labels is None]
        if read:
            precision = sum(1.0 / v for _, v in read)
            fine = sum(y / v for y, v in read) / precision
            out[c] = (np.bincount(groups[:ordered], weights=fine, minlength=count), cells / precision)
    return out


def pair_fit(table: np.ndarray, variance: float = 0.0, margins: tuple[Margin | None, Margin | None] = (None, None)
             ) -> PairFit:
    """The bivariate normal whose cells, cut at the margins' normal quantiles, fit ``table`` best in least squares
    (``variance``: the noise variance of each count); correlation 0 when either margin has fewer than two groups
    with counts.  Least squares, not a multinomial likelihood: noise makes empty cells read above 0, and read as
    counts they would pull the correlation toward 0 (0.97 read as 0.93 with noise of sd 30 on cells of 200
    records); weighting the cells by their variance changed nothing there.  ``margins``: for the rows and the
    columns, the released one-way readings on the same groups (:func:`one_way_margins`; None: none), which the
    table's own sums are averaged with, by inverse variance, before the cut points are read (:func:`_margin`)."""
    table = np.asarray(table, dtype=float)
    rows, cols = _cut_margins(table, variance, margins)
    if (rows > 0).sum() < 2 or (cols > 0).sum() < 2:
        return PairFit(0.0, 0.0, math.inf)
    total = float(np.clip(table.sum(axis=1), 0.0, None).sum())  # the table's own total, as its cells are read
    hh, kk = np.meshgrid(_cuts(rows), _cuts(cols), indexing="ij")

    def loss(r: float) -> float:
        cdf = bivariate_normal_cdf(hh, kk, r).reshape(hh.shape)
        cells = cdf[1:, 1:] - cdf[:-1, 1:] - cdf[1:, :-1] + cdf[:-1, :-1]
        return float(np.sum((table - total * cells) ** 2))

    found = optimize.minimize_scalar(loss, bounds=(-MAX_CORRELATION, MAX_CORRELATION), method="bounded",
                                     options={"xatol": 1e-4})
    noise = variance * table.size
    signal = loss(0.0) - noise
    explained = (loss(0.0) - float(found.fun)) / signal if signal > 0 else 0.0
    slope = total * np.linalg.norm(np.diff(_density(_cuts(rows)))) * np.linalg.norm(np.diff(_density(_cuts(cols))))
    error = math.sqrt(variance) / float(slope) if slope > 0 else math.inf
    return PairFit(float(found.x), float(np.clip(explained, 0.0, 1.0)), error)


def bends(table: np.ndarray, variance: float = 0.0) -> bool:
    """Whether the relation in ``table`` (noisy counts on two columns' ordered groups, each of noise ``variance``)
    rises, then falls: cut at the first row group by which the row sums (negative ones read as 0) reach half their
    total, the two parts' :func:`pair_fit` correlations have opposite signs, each at least :data:`BEND_SIGNIFICANCE`
    of its standard errors from 0; or the same with the columns' roles swapped.  A part whose margins cannot be
    fitted reads 0 and never bends.  Reads the released table and its noise variance only."""
    table = np.asarray(table, dtype=float)
    for side in (table, table.T):
        rows = np.clip(side.sum(axis=1), 0.0, None)
        cut = int(np.searchsorted(np.cumsum(rows), rows.sum() / 2)) + 1
        parts = [pair_fit(side[:cut], variance), pair_fit(side[cut:], variance)]
        if parts[0].correlation * parts[1].correlation < 0 \
                and all(abs(p.correlation) >= BEND_SIGNIFICANCE * p.error for p in parts):
            return True
    return False


def null_share(table: np.ndarray, variance: float, correlation: float, draws: int,
               generator: np.random.Generator, margins: tuple[Margin | None, Margin | None] = (None, None)) -> float:
    """The share of ``draws`` null tables whose :func:`pair_fit` correlation is at least ``|correlation|`` from 0: each
    is the product of ``table``'s margins (negative sums read as 0, over their total; averaged with the one-way
    ``margins`` as :func:`pair_fit` reads them) plus independent normal noise of ``variance`` a cell, fitted as the
    reading was: with one-way margins, each drawn again around the null's own with its noise variance.  All drawn
    with ``generator``.  What noise alone reads off a pair of independent columns with these margins, where the
    linearised error of :class:`PairFit` can understate it (a margin mostly one group read through noise).  Reads
    the released table, its noise variance, the released one-way readings and the generator only (docs/privacy.md
    §8.12 step 2)."""
    table = np.asarray(table, dtype=float)
    rows, cols = _cut_margins(table, variance, margins)
    if draws < 1 or rows.sum() <= 0:
        return 1.0
    independent, sd = np.outer(rows, cols) / rows.sum(), math.sqrt(variance)
    nulls = [(rows, margins[0]), (cols, margins[1])]
    far = 0
    for _ in range(draws):
        drawn = independent + generator.normal(0.0, sd, table.shape)
        again = tuple(None if m is None else (own + generator.normal(0.0, np.sqrt(m[1])), m[1]) for own, m in nulls)
        far += abs(pair_fit(drawn, variance, again).correlation) >= abs(correlation)
    return far / draws


def _loosely_related(size: np.ndarray, error: np.ndarray, explained: np.ndarray, *, significance: float,
                     share: float) -> np.ndarray:
    """The loose-pair test: a correlation ``size`` of at least :data:`RELATED_FROM` and ``significance`` of its
    standard errors ``error``, an error of at least :data:`RELATED_LOOSE_FROM`, and a fit that explains at least
    ``share`` of the departure from independence."""
    return (size >= RELATED_FROM) & (size >= significance * error) & (error >= RELATED_LOOSE_FROM) \
        & (explained >= share)


def beyond_null(tables: dict[tuple[int, int], tuple[np.ndarray, float]], columns: Sequence[int], corr: np.ndarray,
                explained: np.ndarray, error: np.ndarray, bent: np.ndarray, *, draws: int,
                significance: float = RELATED_SIGNIFICANCE, related_share: float = RELATED_EXPLAINED,
                margins: dict[int, Margin] | None = None) -> np.ndarray:
    """Which pairs of ``columns`` (their :func:`correlations`) fail the loose-pair test (``significance`` errors and
    ``related_share`` explained; by either) but are related and measured loosely against their own null tables
    (fitted at the one-way ``margins`` as the readings were): a correlation of at least :data:`RELATED_FROM` and
    :data:`RELATED_NULL_SIGNIFICANCE` errors, an error of at least :data:`RELATED_LOOSE_FROM`, an explained share of
    at least :data:`RELATED_NULL_EXPLAINED`, no bend, and at most :data:`RELATED_NULL_SHARE` of ``draws`` null
    tables (:func:`null_share`, a generator seeded by :data:`NULL_SEED` and the pair's columns) as far from 0; none
    when ``draws`` is 0.  Post-processing: the released tables, their variances, public constants and a public seed
    (docs/privacy.md §8.12 step 2)."""
    n, margins = len(columns), margins or {}
    found = np.zeros((n, n), dtype=bool)
    if draws < 1:
        return found
    size = np.abs(corr)
    candidates = _loosely_related(size, error, explained, significance=RELATED_NULL_SIGNIFICANCE,
                                  share=RELATED_NULL_EXPLAINED) & ~bent \
        & ~_loosely_related(size, error, explained, significance=significance, share=related_share)
    for i, j in zip(*np.nonzero(np.triu(candidates, 1))):
        a, b = sorted((columns[i], columns[j]))
        share = null_share(*tables[a, b], corr[i, j], draws, np.random.default_rng([NULL_SEED, a, b]),
                           (margins.get(a), margins.get(b)))
        found[i, j] = found[j, i] = share <= RELATED_NULL_SHARE
    return found


def _density(z: np.ndarray) -> np.ndarray:
    """The standard normal density (0 at the clipped ends)."""
    return np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def _pair_table(m: NoisyMarginal, a: int, b: int, maps: dict[int, np.ndarray], domain: Domain
                ) -> tuple[np.ndarray, float] | None:
    """The released counts of ``m`` on the ordered groups ``maps`` of ``a`` and ``b`` (``a`` < ``b``, both in
    ``m.attrs``; a reading through finer groups, or cell by cell, summed over them), and the noise variance of each
    of its cells; None for a level of a refined reading (it reads part of the cells)."""
    if m.labels is not None:
        return None
    shape = tuple(domain.sizes[c] if m.groups is None or m.groups[i] is None else int(m.groups[i].max()) + 1
                  for i, c in enumerate(m.attrs))
    counts = np.asarray(m.counts, dtype=float).reshape(shape)
    keep = (m.attrs.index(a), m.attrs.index(b))
    others = math.prod(n for i, n in enumerate(shape) if i not in keep)
    counts = counts.sum(axis=tuple(i for i in range(len(shape)) if i not in keep))
    read = [None if m.groups is None else m.groups[i] for i in keep]
    counts = group_sum(counts, tuple(regroup(s, maps[c]) for c, s in zip((a, b), read)))
    missing = [domain.sizes[c] - domain.ordered[c] for c in (a, b)]
    groups = tuple(int(maps[c].max()) + 1 - k for c, k in zip((a, b), missing))
    finer = tuple(domain.ordered[c] if s is None else int(s.max()) + 1 - k for c, s, k in zip((a, b), read, missing))
    per_cell = others * math.prod(f / g for f, g in zip(finer, groups))
    return counts[:groups[0], :groups[1]], m.sigma2 * per_cell


def pair_tables(measurements: Sequence[NoisyMarginal], columns: Sequence[int], maps: dict[int, np.ndarray],
                domain: Domain) -> dict[tuple[int, int], tuple[np.ndarray, float]]:
    """For each pair ``(a, b)`` of ``columns`` (``a < b``) that some released measurement reads: the inverse-variance
    mean of its tables on the pair's ordered groups (:func:`_pair_table`), and the noise variance of a cell of it."""
    columns, out = sorted(columns), {}
    for i, a in enumerate(columns):
        for b in columns[i + 1:]:
            tables = [t for m in measurements if a in m.attrs and b in m.attrs
                      if (t := _pair_table(m, a, b, maps, domain)) is not None]
            if tables:
                precision = sum(1.0 / v for _, v in tables)
                out[a, b] = (sum(t / v for t, v in tables) / precision, 1.0 / precision)
    return out


def correlations(tables: dict[tuple[int, int], tuple[np.ndarray, float]], columns: Sequence[int],
                 margins: dict[int, Margin] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each pair of ``columns``' correlation, explained share, standard error and whether it :func:`bends`: the
    :func:`pair_fit` of the pair's table (``tables``, from :func:`pair_tables`), cut at its margins averaged with
    the columns' one-way ``margins`` (:func:`one_way_margins`; None: the table's own); NaN, 0, infinity and False
    for a pair no measurement reads."""
    margins = margins or {}
    n = len(columns)
    corr, explained, error = np.eye(n), np.zeros((n, n)), np.full((n, n), math.inf)
    bent = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = min(columns[i], columns[j]), max(columns[i], columns[j])
            read = tables.get((a, b))
            fit = PairFit(math.nan, 0.0, math.inf) if read is None else pair_fit(*read, (margins.get(a),
                                                                                          margins.get(b)))
            corr[i, j] = corr[j, i] = fit.correlation
            explained[i, j] = explained[j, i] = fit.explained
            error[i, j] = error[j, i] = fit.error
            bent[i, j] = bent[j, i] = read is not None and bends(*read)
    return corr, explained, error, bent


def copula_matrix(corr: np.ndarray) -> np.ndarray:
    """The copula's correlation matrix from pairwise correlations (NaN: a pair left open, no reading of its own):
    the open pairs are filled by the maximum-determinant completion of the others (:func:`completion`: the normal
    in which two columns are independent given the rest, so a pair joined by a chain of read pairs takes what the
    chain implies, 0 when none joins them); when the read pairs admit none, each open pair gets the largest
    product of two read correlations through a third column (0 if there is none).  The matrix is then made
    positive definite (eigenvalues floored at 0.01, the diagonal rescaled to 1)."""
    completed = completion(corr)
    if completed is None:
        completed = corr.copy()
        for i, j in zip(*np.nonzero(np.isnan(corr))):
            paths = corr[i] * corr[j]
            completed[i, j] = paths[np.nanargmax(np.abs(paths))] if np.any(np.isfinite(paths)) else 0.0
    values, vectors = np.linalg.eigh(completed)
    completed = (vectors * np.maximum(values, 0.01)) @ vectors.T
    scale = np.sqrt(np.diag(completed))
    return completed / np.outer(scale, scale)


#: Sweeps and tolerance of :func:`completion`.
_COMPLETION_SWEEPS, _COMPLETION_TOLERANCE = 500, 1e-10


def completion(corr: np.ndarray) -> np.ndarray | None:
    """The positive definite matrix that agrees with ``corr`` wherever it is not NaN and whose inverse is 0 wherever
    it is (the maximum-determinant completion), or None when the read entries admit no such matrix.

    Found by regressions, column by column (Hastie, Tibshirani and Friedman, *The Elements of Statistical
    Learning*, algorithm 17.1): column ``j``'s entries with the others are set to ``W b``, where ``W`` is the
    current matrix without ``j`` and ``b`` solves the read entries' equations, 0 on the open ones; sweeps repeat
    until nothing moves.  A chain ``a-b``, ``b-c`` with ``a-c`` open gives ``rho_ab rho_bc``."""
    open_ = np.isnan(corr)
    if not open_.any():
        return corr if np.linalg.eigvalsh(corr).min() > 0 else None
    target = np.where(open_, 0.0, corr)
    current = target.copy()
    n = len(corr)
    for _ in range(_COMPLETION_SWEEPS):
        moved = 0.0
        for j in range(n):
            rest = [i for i in range(n) if i != j]
            read = [k for k, i in enumerate(rest) if not open_[i, j]]
            inner = current[np.ix_(rest, rest)]
            b = np.zeros(n - 1)
            if read:
                try:
                    b[read] = np.linalg.solve(inner[np.ix_(read, read)], target[rest, j][read])
                except np.linalg.LinAlgError:
                    return None
            column = inner @ b
            moved = max(moved, float(np.max(np.abs(column - current[rest, j]))))
            current[rest, j] = current[j, rest] = column
        if moved < _COMPLETION_TOLERANCE:
            break
    agrees = np.allclose(current[~open_], target[~open_], atol=1e-8)
    return current if agrees and np.all(np.isfinite(current)) and np.linalg.eigvalsh(current).min() > 0 else None


def strong_columns(corr: np.ndarray, explained: np.ndarray, error: np.ndarray, *, correlation: float,
                   share: float, bent: np.ndarray | None = None, significance: float = RELATED_SIGNIFICANCE,
                   related_share: float = RELATED_EXPLAINED, null: np.ndarray | None = None) -> list[int]:
    """The indices of the columns that move together with another: a pair that does not bend (``bent``, from
    :func:`correlations`; None: none does) whose correlation is at least ``correlation`` in absolute value and
    whose fit explains at least ``share`` of its departure from independence, or such a pair related and measured
    loosely (:data:`RELATED_FROM`): a correlation at least ``significance`` of its standard errors ``error`` away
    from 0, an error of at least :data:`RELATED_LOOSE_FROM`, and a fit that explains at least ``related_share`` of
    it (defaults :data:`RELATED_SIGNIFICANCE`, :data:`RELATED_EXPLAINED`), or a pair found related against its null
    tables (``null``, from :func:`beyond_null`; None: none).  The copula is monotone, so a weak or
    curved relation (hours of work rising, then falling, with age) is left to the model's draws; the test against
    the noise keeps out a pair the noise could have made up, and a related pair read off noisy counts (a loan and a
    price on a few thousand rows), which the reweighting cannot restore, is drawn from the copula instead of from
    draws that hold it independent."""
    size = np.abs(corr)
    related = _loosely_related(size, error, explained, significance=significance, share=related_share)
    strong = ((size >= correlation) & (explained >= share)) | related
    if null is not None:
        strong |= null
    if bent is not None:
        strong &= ~bent
    np.fill_diagonal(strong, False)
    return [i for i in range(len(corr)) if strong[i].any()]


def copula_of(tables: dict[tuple[int, int], tuple[np.ndarray, float]], columns: Sequence[int], *,
              correlation: float, keep_from: float = RELATED_SIGNIFICANCE,
              significance: float = RELATED_SIGNIFICANCE, related_share: float = RELATED_EXPLAINED,
              null_draws: int = 0, margins: dict[int, Margin] | None = None) -> Copula | None:
    """The copula of the ``columns`` that move together (:func:`strong_columns` at ``correlation``,
    :data:`COPULA_EXPLAINED` and the loose-pair test at ``significance`` and ``related_share``, or against
    ``null_draws`` null tables (:func:`beyond_null`; 0: not), read off their pairs' released ``tables`` cut at
    margins averaged with the one-way ``margins``, :func:`correlations`), or None
    when fewer than two do.  Inside it a pair's correlation is kept only when it is at least ``keep_from`` of its
    standard errors from 0 (0: every reading) or it was found related against its null tables, else it is left open:
    a reading that passes no test of its own is noise as often as relation (the credit table's age and price, real
    0.005, read 0.26 at 2.8 errors and came back at 0.24).  A pair that bends is left open too, never read by the
    correlation a monotone fit gives the whole of a curved table; :func:`copula_matrix` fills the open pairs from
    the kept ones (docs/privacy.md §8.12 step 2)."""
    corr, explained, error, bent = correlations(tables, columns, margins)
    null = beyond_null(tables, columns, corr, explained, error, bent, draws=null_draws, significance=significance,
                       related_share=related_share, margins=margins)
    strong = strong_columns(corr, explained, error, correlation=correlation, share=COPULA_EXPLAINED, bent=bent,
                            significance=significance, related_share=related_share, null=null)
    log.debug("the support's copula: correlations %s, explained %s, errors %s, bent %s, beyond their null tables %s, "
              "columns %s", np.round(corr, 3).tolist(), np.round(explained, 3).tolist(), np.round(error, 3).tolist(),
              np.argwhere(np.triu(bent)).tolist(), np.argwhere(np.triu(null)).tolist(), [columns[i] for i in strong])
    if len(strong) < 2:
        return None
    with np.errstate(invalid="ignore"):
        kept = (keep_from == 0) | (np.abs(corr) >= keep_from * error) | null
    np.fill_diagonal(kept, True)
    inside = np.where(kept & ~bent, corr, np.nan)[np.ix_(strong, strong)]
    return Copula(tuple(columns[i] for i in strong), copula_matrix(inside))


def redraw_numbers(codes: np.ndarray, columns: Sequence[int], one_way: dict[int, np.ndarray], corr: np.ndarray,
                   domain: Domain, generator: np.random.Generator) -> np.ndarray:
    """``codes`` with the cells of all but one of ``columns`` drawn again from a Gaussian copula, given the one.

    Column ``c``'s ordered cells get latent intervals from its one-way counts
    ``one_way[c]``: ``[Phi^-1(F(v)), Phi^-1(F(v + 1)))`` with ``F`` their
    cumulative shares.  Each record keeps its cell of one of ``columns``,
    drawn uniformly (its *anchor*), and a latent value drawn inside that
    cell's interval (a standard normal when the anchor is missing); the other
    columns' latent values are drawn from their normal distribution given the
    anchor's (correlations ``corr``), and each becomes the cell whose interval
    holds it.  A missing value stays missing; every other attribute is kept.
    """
    codes = codes.copy()
    n, width = len(codes), len(columns)
    cumulative, edges = [], []
    for c in columns:
        shares = np.clip(np.asarray(one_way[c][:domain.ordered[c]], dtype=float), 0.0, None)
        shares = shares / shares.sum() if shares.sum() > 0 else np.full(len(shares), 1.0 / len(shares))
        cumulative.append(np.minimum(np.concatenate([[0.0], np.cumsum(shares)]), 1.0))
        cumulative[-1][-1] = 1.0
        edges.append(special.ndtri(cumulative[-1]))
    anchors = generator.integers(0, width, n)
    for i, a in enumerate(columns):
        rows = np.flatnonzero(anchors == i)
        held = codes[rows, a]
        inside = held < domain.ordered[a]
        cell = np.minimum(held, domain.ordered[a] - 1)
        low, high = cumulative[i][cell], cumulative[i][cell + 1]
        u = np.where(inside, low + generator.random(len(rows)) * (high - low), generator.random(len(rows)))
        anchor = np.clip(special.ndtri(u), -_LATENT_CLIP, _LATENT_CLIP)
        rest = [j for j in range(width) if j != i]
        given = corr[rest, i]
        spread = np.linalg.cholesky(corr[np.ix_(rest, rest)] - np.outer(given, given) + 1e-12 * np.eye(len(rest)))
        latent = anchor[:, None] * given[None, :] + generator.standard_normal((len(rows), len(rest))) @ spread.T
        for j, z in zip(rest, latent.T):
            c = columns[j]
            drawn = np.clip(np.searchsorted(edges[j], z, side="right") - 1, 0, domain.ordered[c] - 1)
            codes[rows, c] = np.where(codes[rows, c] < domain.ordered[c], drawn, codes[rows, c])
    return codes


def positions_in_cells(codes: np.ndarray, copula: Copula, domain: Domain,
                       generator: np.random.Generator) -> dict[int, np.ndarray]:
    """Where each record's value of each column of ``copula`` lies inside its cell: a share of the cell in [0, 1]
    (NaN where the value is missing), by column.

    Column ``c``'s ordered cells get latent intervals from the records' own
    one-way shares ``G``: ``[Phi^-1(G(v)), Phi^-1(G(v + 1)))`` (a missing
    value: the whole line).  Each record's latent values start uniform in
    probability inside its intervals, and :data:`PLACEMENT_SWEEPS` Gibbs
    sweeps draw each column's from its normal distribution given the others'
    (``copula.correlation``), truncated to the interval; latent ``z`` in the
    interval of cell ``v`` is the share ``(Phi(z) - G(v)) / (G(v + 1) - G(v))``
    of that cell.  Inside wide cells related values keep their order, where
    independent positions would lose it (docs/privacy.md §8.12, step 5).
    """
    n, width = len(codes), len(copula.columns)
    low, high = np.full((n, width), -_LATENT_CLIP), np.full((n, width), _LATENT_CLIP)
    start, share, present = np.zeros((n, width)), np.ones((n, width)), np.zeros((n, width), dtype=bool)
    for i, c in enumerate(copula.columns):
        cells = codes[:, c]
        present[:, i] = cells < domain.ordered[c]
        held = cells[present[:, i]]
        cumulative = np.minimum(np.concatenate([[0.0], np.cumsum(np.bincount(held, minlength=domain.ordered[c]))])
                                / max(len(held), 1), 1.0)
        start[present[:, i], i], share[present[:, i], i] = cumulative[held], cumulative[held + 1] - cumulative[held]
        low[present[:, i], i] = np.clip(special.ndtri(cumulative[held]), -_LATENT_CLIP, _LATENT_CLIP)
        high[present[:, i], i] = np.clip(special.ndtri(cumulative[held + 1]), -_LATENT_CLIP, _LATENT_CLIP)
    latent = _truncated_normal(np.zeros((n, width)), 1.0, low, high, generator)
    precision = np.linalg.inv(copula.correlation)
    for _ in range(PLACEMENT_SWEEPS):
        for i in range(width):
            others = latent @ precision[:, i] - latent[:, i] * precision[i, i]
            latent[:, i] = _truncated_normal(-others / precision[i, i], 1.0 / math.sqrt(precision[i, i]),
                                             low[:, i], high[:, i], generator)
    inside = np.clip((special.ndtr(latent) - start) / np.where(share > 0, share, 1.0), 0.0, 1.0)
    return {c: np.where(present[:, i], inside[:, i], np.nan) for i, c in enumerate(copula.columns)}


def _truncated_normal(mean: np.ndarray, sd: float | np.ndarray, low: np.ndarray, high: np.ndarray,
                      generator: np.random.Generator) -> np.ndarray:
    """Draws of normals ``(mean, sd)`` truncated to ``[low, high]`` by inverting the distribution function, on the
    side of the mean where it is accurate; an interval too far out for that gives its point nearest the mean."""
    a, b = (low - mean) / sd, (high - mean) / sd
    upper = a > 0  # both ends above the mean: invert the mirror image, whose distribution function is not near 1
    a, b = np.where(upper, -b, a), np.where(upper, -a, b)
    pa, pb = special.ndtr(a), special.ndtr(b)
    x = special.ndtri(pa + generator.random(np.shape(pa)) * (pb - pa))
    drawn = mean + sd * np.where(upper, -x, x)
    return np.clip(np.where(pb - pa > 1e-300, drawn, mean), low, high)
