"""Numeric columns that move together inside their groups: a Gaussian copula read off released counts (§8.12).

A numeric column's fine cells are read through ``groups`` runs of
consecutive cells (:mod:`~synthdp.methods.measure.coarse`), so the released
counts of a numeric pair say how rows fall into pairs of groups but nothing
about where they lie inside one.  A model fitted to them is independent
there: two lengths with correlation 0.95 come back as a staircase of
squares, each filled evenly.  This module puts the rows of the reweighted
sample's support back on the diagonal inside each square:

1. :func:`pair_correlation` estimates, for each pair of numeric columns,
   the correlation of a bivariate normal whose discretisation at the groups'
   quantiles best explains the released counts on the pair's groups (the
   polychoric correlation, by maximum likelihood).
2. :func:`redraw_within_groups` keeps each drawn record's group in every
   numeric column (and every other value) and draws its cells inside the
   groups again, jointly, from the Gaussian copula with those correlations
   (Gibbs sweeps of truncated normals), each column's cells by the model's
   one-way counts.

The reweighting then fits the support to every measurement as before.
Everything here reads released counts, the public domain and the public
generator: post-processing (docs/privacy.md §8.12).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import optimize, special

from synthdp.core.domain import Domain
from synthdp.methods.measure.coarse import group_sum
from synthdp.methods.measure.estimators import NoisyMarginal

#: The largest correlation estimated: the copula stays a density, and cells keep some spread inside a group.
MAX_CORRELATION = 0.99
#: Latent cut points are clipped here (Phi(8) is 1 to 6e-16).
_LATENT_CLIP = 8.0
#: Gauss-Legendre nodes of Plackett's integral for the bivariate normal distribution function.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)


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


def pair_correlation(table: np.ndarray, variance: float) -> float:
    """The polychoric correlation of noisy counts on two columns' ordered groups: the correlation of the bivariate
    normal whose cells, cut at the margins' quantiles, fit the counts best in weighted least squares (each cell
    weighted by ``1 / (variance + count)``: the noise's variance and the count's own); 0 when either margin has
    fewer than two groups with counts.  Least squares, not a multinomial likelihood: noise makes empty cells read
    above 0, and read as counts they would pull the correlation toward 0."""
    table = np.asarray(table, dtype=float)
    rows, cols = np.clip(table.sum(axis=1), 0.0, None), np.clip(table.sum(axis=0), 0.0, None)
    if (rows > 0).sum() < 2 or (cols > 0).sum() < 2:
        return 0.0
    total = max(float(table.sum()), 1.0)
    hh, kk = np.meshgrid(_cuts(rows), _cuts(cols), indexing="ij")
    weights = 1.0 / (variance + np.clip(table, 0.0, None))

    def loss(r: float) -> float:
        cdf = bivariate_normal_cdf(hh, kk, r).reshape(hh.shape)
        cells = cdf[1:, 1:] - cdf[:-1, 1:] - cdf[1:, :-1] + cdf[:-1, :-1]
        return float(np.sum(weights * (table - total * cells) ** 2))

    found = optimize.minimize_scalar(loss, bounds=(-MAX_CORRELATION, MAX_CORRELATION), method="bounded",
                                     options={"xatol": 1e-4})
    return float(found.x)


def _pair_table(m: NoisyMarginal, a: int, b: int, maps: dict[int, np.ndarray], domain: Domain
                ) -> tuple[np.ndarray, float] | None:
    """The released counts of ``m`` on the ordered groups of ``a`` and ``b`` (``a`` < ``b``, both in ``m.attrs``),
    and the noise variance of each of its cells; None for a level of a refined reading (it reads part of the
    cells)."""
    if m.labels is not None:
        return None
    shape = tuple(domain.sizes[c] if m.groups is None or m.groups[i] is None else int(m.groups[i].max()) + 1
                  for i, c in enumerate(m.attrs))
    counts = np.asarray(m.counts, dtype=float).reshape(shape)
    summed = counts.size
    keep = (m.attrs.index(a), m.attrs.index(b))
    counts = counts.sum(axis=tuple(i for i in range(len(shape)) if i not in keep))
    fine = [m.groups is None or m.groups[i] is None for i in keep]
    counts = group_sum(counts, tuple(maps[c] if f else None for c, f in zip((a, b), fine)))
    groups = tuple(int(maps[c].max()) + 1 - (domain.sizes[c] - domain.ordered[c]) for c in (a, b))
    return counts[:groups[0], :groups[1]], m.sigma2 * summed / counts.size


def correlations(measurements: Sequence[NoisyMarginal], columns: Sequence[int], maps: dict[int, np.ndarray],
                 domain: Domain) -> np.ndarray:
    """The copula's correlation matrix over ``columns``: each pair's :func:`pair_correlation` of the
    inverse-variance mean of the released tables on its groups (0 for a pair no measurement reads), made positive
    definite (eigenvalues at least 0.01, unit diagonal)."""
    n = len(columns)
    corr = np.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = columns[i], columns[j]
            tables = [t for m in measurements if a in m.attrs and b in m.attrs
                      if (t := _pair_table(m, a, b, maps, domain)) is not None]
            if tables:
                precision = sum(1.0 / v for _, v in tables)
                table = sum(t / v for t, v in tables) / precision
                corr[i, j] = corr[j, i] = pair_correlation(table, 1.0 / precision)
    values, vectors = np.linalg.eigh(corr)
    corr = (vectors * np.maximum(values, 0.01)) @ vectors.T
    scale = np.sqrt(np.diag(corr))
    return corr / np.outer(scale, scale)


def _truncated_normal(mean: np.ndarray, sd: float, low: np.ndarray, high: np.ndarray,
                      generator: np.random.Generator) -> np.ndarray:
    """One draw per row of ``N(mean, sd**2)`` truncated to ``[low, high]``, by the inverse distribution function on
    the side of 0 where it is precise (an interval above the mean is drawn mirrored)."""
    a, b = (low - mean) / sd, (high - mean) / sd
    upper = a > 0
    a, b = np.where(upper, -b, a), np.where(upper, -a, b)
    lo, hi = special.ndtr(a), special.ndtr(b)
    u = lo + generator.random(mean.shape) * (hi - lo)
    with np.errstate(divide="ignore"):
        x = np.where(hi > lo, special.ndtri(u), 0.5 * (np.maximum(a, -_LATENT_CLIP) + np.minimum(b, _LATENT_CLIP)))
    x = np.clip(x, a, b)
    return mean + sd * np.where(upper, -x, x)


def redraw_within_groups(codes: np.ndarray, columns: Sequence[int], maps: dict[int, np.ndarray],
                         one_way: dict[int, np.ndarray], corr: np.ndarray, domain: Domain,
                         generator: np.random.Generator, *, sweeps: int = 8) -> np.ndarray:
    """``codes`` with each record's cells of ``columns`` drawn again inside their groups from a Gaussian copula.

    Column ``c``'s ordered cells get latent intervals from its one-way counts
    ``one_way[c]`` (``Phi^-1`` of their cumulative shares), a group the union
    of its cells'.  Each record's latent vector starts inside its cells, then
    ``sweeps`` Gibbs sweeps draw each coordinate from its normal conditional
    on the others (correlation ``corr``), truncated to its group; a missing
    value's coordinate is drawn untruncated and its code kept.  The cell is
    the one whose latent interval holds the last draw.  Every other value and
    every group are kept.
    """
    codes = codes.copy()
    n, width = len(codes), len(columns)
    latent, low, high = np.zeros((n, width)), np.empty((n, width)), np.empty((n, width))
    first, last, inside, edges = np.zeros((n, width), int), np.zeros((n, width), int), np.zeros((n, width), bool), []
    for i, c in enumerate(columns):
        k = domain.ordered[c]
        shares = np.clip(np.asarray(one_way[c][:k], dtype=float), 0.0, None)
        shares = shares / shares.sum() if shares.sum() > 0 else np.full(k, 1.0 / k)
        cumulative = np.minimum(np.concatenate([[0.0], np.cumsum(shares)]), 1.0)
        cumulative[-1] = 1.0
        edges.append(special.ndtri(cumulative))
        bounds = np.append(np.flatnonzero(np.diff(maps[c][:k], prepend=-1)), k)
        inside[:, i] = codes[:, c] < k
        cell = np.minimum(codes[:, c], k - 1)
        group = maps[c][cell]
        first[:, i], last[:, i] = bounds[group], bounds[group + 1] - 1
        low[:, i] = np.where(inside[:, i], edges[i][first[:, i]], -np.inf)
        high[:, i] = np.where(inside[:, i], edges[i][last[:, i] + 1], np.inf)
        start = np.where(inside[:, i], cumulative[cell], 0.0)
        spread = np.where(inside[:, i], shares[cell], 1.0)
        latent[:, i] = np.clip(special.ndtri(start + generator.random(n) * spread), -_LATENT_CLIP, _LATENT_CLIP)
    precision = np.linalg.inv(corr)
    for _ in range(sweeps):
        for i in range(width):
            others = np.delete(np.arange(width), i)
            mean = -(latent[:, others] @ precision[others, i]) / precision[i, i]
            latent[:, i] = _truncated_normal(mean, 1.0 / math.sqrt(precision[i, i]), low[:, i], high[:, i], generator)
    for i, c in enumerate(columns):
        cell = np.clip(np.searchsorted(edges[i], latent[:, i], side="right") - 1, first[:, i], last[:, i])
        codes[:, c] = np.where(inside[:, i], cell, codes[:, c])
    return codes
