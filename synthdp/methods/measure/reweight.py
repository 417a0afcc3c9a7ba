"""Estimation for measurements no model clique can hold: a reweighted sample of the model (docs/privacy.md §8.7).

The graphical model of :mod:`synthdp.methods.measure.estimators` holds measurements
on small attribute sets.  A measurement that is not local -- a conjunction
on many attributes, a parity, a halfspace -- would need a clique on all
the attributes it mentions.  For those the estimate is a *weighted
support*: the distinct records of ``support`` draws from the graphical model
fitted to the local measurements, with weights fitted by entropic mirror descent
(Barzilai-Borwein steps under Armijo's rule, capped unless the covering step's precise measurements
ask for the optimum) to **every** measurement, local
and not, on the same loss ``sum_g ||g(w) - y_g||**2 / (2 sigma_g**2)``,
the total held at the model's own (noisy) total.

This is a projection in the manner of RAP (Aydore et al. 2021): the
measured answers are matched by gradient steps over a table of records.
RAP relaxes each record's one-hot values and needs a differentiable form
of every query; here the records stay integer and the relaxation is in
their weights, so any class that can evaluate a record serves, halfspaces
included, and the records released are drawn from the fitted weights.

Everything here is post-processing of the released measurements: the
support is drawn from a model fitted to noisy answers with the method's
public generator, the settings are fixed constants, and the true data are
never read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

import numpy as np
from numba import njit

from synthdp.core.domain import Domain
from synthdp.methods.measure.coarse import coarse_index
from synthdp.methods.measure.copula import Copula
from synthdp.methods.measure.estimators import GraphicalModel, NoisyMarginal
from synthdp.queries.base import QueryClass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NoisyGroup:
    """A released measurement of counting queries no model clique holds.

    ``cell(codes)`` gives each record's cell in ``[0, size)``, or -1 when no
    query of the group accepts it (a single query is a group of one cell);
    ``counts`` are the noisy answers and ``sigma2`` their noise scale.
    """

    label: str
    cell: Callable[[np.ndarray], np.ndarray]
    size: int
    counts: np.ndarray
    sigma2: float


def marginal_group(domain: Domain, noisy: NoisyMarginal) -> NoisyGroup:
    """A noisy marginal as a group: a record's cell is its mixed-radix index on the marginal's attributes (through
    their groups for a coarse measurement, docs/privacy.md §8.11), or the label of its cell (-1: not read) for a level
    of a refined reading (§11.1)."""
    if noisy.labels is not None:
        return NoisyGroup(f"level of marginal {noisy.attrs}",
                          lambda codes: noisy.labels[domain.flat_index(codes, noisy.attrs)], noisy.counts.size,
                          noisy.counts, noisy.sigma2)
    if noisy.groups is not None:
        return NoisyGroup(f"coarse marginal {noisy.attrs}",
                          lambda codes: coarse_index(domain, codes, noisy.attrs, noisy.groups), noisy.counts.size,
                          noisy.counts, noisy.sigma2)
    return NoisyGroup(f"marginal {noisy.attrs}", lambda codes: domain.flat_index(codes, noisy.attrs),
                      domain.cells(noisy.attrs), noisy.counts, noisy.sigma2)


def query_group(query_class: QueryClass, query, noisy_count: float, sigma2: float, label: str) -> NoisyGroup:
    """One counting query as a group of one cell: records it accepts fall in cell 0, the others nowhere."""
    def cell(codes: np.ndarray) -> np.ndarray:
        accepted = query_class.evaluate([query], query_class.features(codes))[0].astype(bool)
        return np.where(accepted, 0, -1)
    return NoisyGroup(label, cell, 1, np.array([float(noisy_count)]), sigma2)


@dataclass
class WeightedSample:
    """An estimate as records ``codes`` with non-negative ``weights`` summing to the estimated total; ``copula``,
    when the support was drawn from one (docs/privacy.md §8.12), places decoded values inside their cells."""

    domain: Domain
    codes: np.ndarray
    weights: np.ndarray
    copula: Copula | None = None

    @property
    def total(self) -> float:
        return float(self.weights.sum())

    def counts(self, attrs: tuple[int, ...]) -> np.ndarray:
        """The estimate's counts on the marginal ``attrs`` (flattened, row-major)."""
        return np.bincount(self.domain.flat_index(self.codes, attrs), weights=self.weights,
                           minlength=self.domain.cells(attrs))

    def given(self, evidence: Mapping[int, int]) -> "WeightedSample | None":
        """The sample's records whose codes are ``evidence`` (attribute -> code), with their weights: the estimate's
        conditional distribution; None when no record of positive weight matches.  Post-processing (§10.9)."""
        keep = np.all(self.codes[:, list(evidence)] == list(evidence.values()), axis=1) & (self.weights > 0)
        return replace(self, codes=self.codes[keep], weights=self.weights[keep]) if keep.any() else None

    def sample(self, rows: int, generator: np.random.Generator) -> np.ndarray:
        """``rows`` records by systematic sampling: each support record about ``rows * weight / total`` times."""
        cumulative = np.cumsum(self.weights / self.total)
        positions = (generator.random() + np.arange(rows)) / rows
        index = np.minimum(np.searchsorted(cumulative, positions, side="right"), len(self.codes) - 1)
        return self.codes[generator.permutation(index)]


def _design(codes: np.ndarray, groups: Sequence[NoisyGroup]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each support record's cell in every group, the answers, each group's 1/sigma2 and where each group's cells
    start (and the last ends) among the answers.

    The design is the stacked 0/1 matrix with one row per measured cell and
    one column per support record; it is kept as its nonzeros alone: row
    ``g`` of the ``(groups, records)`` array holds each record's cell within
    group ``g`` (``-1``: none; its row among the answers is ``offsets[g]``
    plus that cell), in the narrowest signed integers that hold the largest
    group's cells: 16 bits when no group has more than ``2**15`` cells, where
    rows among all the answers needed 32 (1,140 marginals of 50,000 records:
    115 MB instead of 230 MB; a sparse matrix built from it took 1.4 GB).
    The products below read it group by group, so that the counts they add
    to stay in the cache.
    """
    sizes = [g.size for g in groups]
    offsets = np.cumsum([0] + sizes)
    widest = max(sizes, default=0)
    dtype = np.int16 if widest <= 2**15 else np.int32 if widest <= 2**31 else np.int64
    cells = np.empty((len(groups), len(codes)), dtype=dtype)
    columns = np.asfortranarray(codes)  # a group reads a few columns of every record (1,140 triples: 1.5 -> 0.15 s)
    for j, g in enumerate(groups):
        cells[j] = np.asarray(g.cell(columns), dtype=np.int64)
    answers = np.concatenate([np.asarray(g.counts, dtype=float) for g in groups])
    return cells, answers, np.array([1.0 / g.sigma2 for g in groups]), offsets


@njit(cache=True, nogil=True)
def _residuals(cells, offsets, weights, answers, inv_var, residual, weighted):
    """``residual = design @ weights - answers`` and ``weighted = (1 / sigma2) * residual``, group by group.

    Each cell is one group's, so it gets its records' weights added to zero in record order, as a
    compressed-column product adds them -- the same sums to the bit; the group's residuals and weighted residuals
    are then computed while its cells are still in the cache (one pass over the measured cells instead of four:
    zeroing, the product, the difference, the weighting).
    """
    for g in range(cells.shape[0]):
        start, stop = offsets[g], offsets[g + 1]
        residual[start:stop] = 0.0
        for j in range(cells.shape[1]):
            c = cells[g, j]
            if c >= 0:
                residual[start + c] += weights[j]
        scale = inv_var[g]
        for i in range(start, stop):
            difference = residual[i] - answers[i]
            residual[i] = difference
            weighted[i] = scale * difference


@njit(cache=True, nogil=True)
def _transposed_product(cells, offsets, values, out):
    """``out = design.T @ values``, group by group: each record's cells' values are added to zero in group order, as
    a compressed-row product adds them -- the same sums to the bit."""
    out[:] = 0.0
    for g in range(cells.shape[0]):
        start = offsets[g]
        for j in range(cells.shape[1]):
            c = cells[g, j]
            if c >= 0:
                out[j] += values[start + c]


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """The inner product by a plain loop: BLAS's threaded one took 8 ms on 50,000 entries on the shared 2-core
    machine (against 0.02 ms), and a fit takes four per step."""
    return float(np.einsum("i,i->", a, b))


class _SquaredError:
    """The loss ``sum_g ||g(w) - y_g||**2 / (2 sigma_g**2)`` of weights ``w = total * p`` on the support.

    :meth:`value` costs one product with the design (:func:`_design`) and
    :meth:`gradient` (in ``p``, at the point of the last value) one with its
    transpose, so a refused step pays one.  The vectors on the measured cells
    (as many as the covering step's marginals have cells: tens of millions on
    a wide table) are two buffers made once and filled in place, with the
    operations of the plain expressions, so the same floats.
    """

    def __init__(self, cells: np.ndarray, answers: np.ndarray, inv_var: np.ndarray, offsets: np.ndarray,
                 total: float):
        self.cells, self.answers, self.inv_var, self.total = cells, answers, inv_var, total
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self._residual, self._weighted = np.empty(len(answers)), np.empty(len(answers))

    def value(self, p: np.ndarray) -> float:
        """The loss at ``p``; its residual, weighted by 1/sigma2, is kept for :meth:`gradient`."""
        _residuals(self.cells, self.offsets, self.total * p, self.answers, self.inv_var, self._residual,
                   self._weighted)
        return 0.5 * _dot(self._residual, self._weighted)

    def gradient(self) -> np.ndarray:
        """The gradient in ``p`` at the point of the last :meth:`value`."""
        out = np.empty(self.cells.shape[1])
        _transposed_product(self.cells, self.offsets, self._weighted, out)
        return self.total * out


#: Armijo's constant: the decrease a step must show, as a share of the first-order decrease it predicts.
_ARMIJO = 1e-4
#: The most a step may grow after an accepted one: the Barzilai-Borwein step is capped at this multiple
#: (``math.inf``: uncapped, the fit runs toward the optimum; see :func:`mirror_descent`).
CAPPED_GROWTH = 2.0


def mirror_descent(loss: _SquaredError, start: np.ndarray, *, step: float, evaluations: int,
                   growth: float = CAPPED_GROWTH, on_step: Callable[[int], None] | None = None) -> np.ndarray:
    """Minimise ``loss`` over the simplex from ``start`` by entropic mirror descent, ``evaluations`` trial steps.

    ``step`` is the first step size.  A trial step is accepted when its
    loss falls by ``_ARMIJO`` of the decrease its gradient predicts
    (Armijo's rule); a refused one halves the step and costs one
    product, not two.  After an accepted step the next is Barzilai and
    Borwein's in the entropy's geometry,
    ``<log p' - log p, p' - p> / <grad' - grad, p' - p>`` (the inverse of
    the loss's curvature along the last step in the mirror map's metric;
    both products are positive, the entropy and the loss being convex),
    capped at ``growth`` times the last step.  The earlier rule (double
    after an accepted step, halve after a refused one) bounced off the
    largest stable step and had half its trials refused; this one predicts
    that step.  Capped (``growth`` 2), it keeps the slow path of small steps
    from the model's own weights, which regularises a fit to weak
    measurements; uncapped (``math.inf``) it reaches far lower losses in the
    same number of steps, which pays when the measurements are precise
    (docs/benchmarks.md#measure-defaults).  The result stays
    on the simplex: non-negative, summing to one.  ``on_step(k)``, when given, is called before the first trial step
    (``k = 0``) and after the ``k``-th (progress).
    """
    log_p = np.log(np.maximum(start, 1e-300))
    p = start
    value = loss.value(p)
    grad = loss.gradient()
    accepted = 0
    if on_step is not None:
        on_step(0)
    for done in range(1, evaluations + 1):
        logits = log_p - step * grad
        logits -= logits.max()
        trial = np.exp(logits)
        mass = trial.sum()
        trial /= mass
        log_trial = logits - np.log(mass)
        trial_value = loss.value(trial)
        if value - trial_value < _ARMIJO * _dot(grad, p - trial):
            step *= 0.5
        else:
            trial_grad = loss.gradient()
            moved = trial - p
            curvature = _dot(trial_grad - grad, moved)
            predicted = _dot(log_trial - log_p, moved) / curvature if curvature > 0 else CAPPED_GROWTH * step
            step = min(predicted, growth * step)
            p, log_p, value, grad = trial, log_trial, trial_value, trial_grad
            accepted += 1
        if on_step is not None:
            on_step(done)
    log.debug("mirror descent: %d of %d steps accepted, loss %.4g", accepted, evaluations, value)
    return p


def fit_weights(model: GraphicalModel, groups: Sequence[NoisyGroup], *, support: int, iters: int,
                generator: np.random.Generator, growth: float = CAPPED_GROWTH,
                redraw: Callable[[np.ndarray], np.ndarray] | None = None,
                on_step: Callable[[int], None] | None = None) -> WeightedSample:
    """Draw ``support`` records from ``model`` and fit weights on the distinct ones to every group.

    The distinct records drawn start with weights proportional to how often
    they were drawn (the model's own distribution, to within the draw), so
    a large draw costs no more columns than there are distinct records and
    the estimate keeps the resolution of the draw.  :func:`mirror_descent`
    (``iters`` trial steps, Barzilai-Borwein steps capped at ``growth``
    times the last) keeps the total at ``model.total``.  ``redraw``, when
    given, changes the draws before they become the support (numeric columns
    drawn again from a copula, docs/privacy.md §8.12).  ``on_step`` follows the fit's trial steps (progress).
    Post-processing: no privacy cost, nothing read but released answers.
    """
    draws = model.sample(support, generator)
    codes, drawn = np.unique(draws if redraw is None else redraw(draws), axis=0, return_counts=True)
    loss = _SquaredError(*_design(codes, groups), total=model.total)
    first = 1.0 / (model.total * model.total * float(loss.inv_var.max()) * max(1, len(groups)))  # a safe first step
    p = mirror_descent(loss, drawn / drawn.sum(), step=first, evaluations=iters, growth=growth, on_step=on_step)
    log.debug("reweighted sample: %d records, %d groups, %d cells", len(codes), len(groups), len(loss.answers))
    return WeightedSample(model.domain, codes, model.total * p)
