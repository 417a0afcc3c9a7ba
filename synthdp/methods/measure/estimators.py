"""Estimation from noisy marginals: a graphical model fitted by mirror descent (docs/privacy.md §8.7).

The model is the one of private-pgm's estimator (McKenna, Sheldon, Miklau
2019, "Graphical-model based estimation and inference for differential
privacy", Algorithm 1): log-potentials on the maximal cliques of a junction
tree of the measured attribute sets, fitted by entropic mirror descent with
an Armijo step on the weighted squared error
``sum_r ||mu_r - y_r||**2 / (2 sigma_r**2)``; inference is sum-product message
passing in log space.  The junction tree is built as private-pgm's library
builds it (:mod:`synthdp.methods.measure.junction_tree`), so a model has the same
cliques as there; inference, fitting and sampling run in numpy, without that
library's JAX, whose compilation per new clique structure (seconds to
minutes) would dominate a run that adds one clique per round.

Everything here is post-processing of released measurements: the estimator
sees only the noisy counts, their attribute sets and their noise scales,
and its settings (:class:`EstimatorSettings`) are fixed constants, never
tuned on the data inside a run.  The model's total is the minimum-variance
combination of the measured totals, so it comes from the noisy counts and
never from the true number of records (§8.6).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy.special import logsumexp

from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.methods.measure.coarse import GroupMaps, group_spread, group_sum, label_spread, label_sum
from synthdp.methods.measure.junction_tree import Clique, junction_cliques

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EstimatorSettings:
    """Public estimator settings (chosen on NLTCS and BR2000; docs/privacy.md §8.7)."""

    #: Mirror-descent iterations per round (warm-started from the previous round's model).
    iters: int = 50
    #: Iterations of the final fit whose model the records are drawn from.
    final_iters: int = 500
    #: Records drawn from the model to score attribute sets that no clique of the model holds.
    scoring_sample: int = 50_000
    #: A numeric column's ordered cells at each end get a structural zero while each, and the block they form,
    #: reads below this many noise standard deviations and, unless wider than the cells between, the readings drop
    #: by as many deviations of the difference below the cell that stops the run (docs/privacy.md §8.7, empty
    #: tails); 0: off.  Chosen among
    #: 2, 3 and 4 on the generated tables of ``synthdp bench numeric`` (dependent, skewed, amounts), and kept against
    #: 2.5 with the copula (docs/benchmarks.md#measure-defaults).
    tail_sds: float = 3.0
    #: With a finite value, the drop test cuts a block of cells only when their summed reading is below this many
    #: deviations of such a sum: a block that shows mass is a tail thinning out (docs/privacy.md §8.7, a cut block
    #: that shows mass).  Infinite (the default): any block.  An option, not the default: at 1 it took
    #: ``credit_data``'s largest KS from 0.303 to 0.173 but moved two tables' Pearson error on seeds 0-2 by more
    #: than their spread (docs/benchmarks.md, small tables).
    tail_mass_sds: float = math.inf

    def __post_init__(self) -> None:
        if isinstance(self.tail_sds, bool) or not isinstance(self.tail_sds, (int, float)) \
                or not 0 <= self.tail_sds < math.inf:
            raise InputError(f"tail_sds must be a number >= 0 (0: no structural zeros), got {self.tail_sds!r}")
        if isinstance(self.tail_mass_sds, bool) or not isinstance(self.tail_mass_sds, (int, float)) \
                or not self.tail_mass_sds > 0:
            raise InputError(f"tail_mass_sds must be a number > 0 (inf: the drop test may cut any block), "
                             f"got {self.tail_mass_sds!r}")


@dataclass(frozen=True)
class NoisyMarginal:
    """A released measurement: noisy counts (flattened, row-major) on sorted ``attrs`` with noise scale ``sigma2``.

    How it reads the fine cells of the marginal on ``attrs``: every cell (both None); ``groups``, a coarse
    measurement (docs/privacy.md §8.11), each attribute with a map through its groups of consecutive codes (None:
    read finely), its counts on the groups; ``labels``, a level of a refined reading (§11.1), a public partial
    partition: per fine cell (flattened), the measured cell it lies in, or -1 when it is not read.
    """

    attrs: Clique
    counts: np.ndarray
    sigma2: float
    groups: GroupMaps | None = None
    labels: np.ndarray | None = None

    def read(self, fine: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """Counts on ``attrs`` (flattened; ``shape`` their sizes) as this measurement reads them: a table, through its
        groups when coarse; by label (flattened) for a partial partition."""
        if self.labels is not None:
            return label_sum(self.labels, fine, self.counts.size)
        return fine.reshape(shape) if self.groups is None else group_sum(fine.reshape(shape), self.groups)

    def spread(self, values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """The adjoint of :meth:`read`: values on the measured cells carried back onto the fine cells (shape
        ``shape``)."""
        if self.labels is not None:
            return label_spread(self.labels, values).reshape(shape)
        return values.reshape(shape) if self.groups is None else group_spread(values, self.groups)


def model_cells(domain: Domain, cliques: Sequence[Clique]) -> int:
    """Cells of the junction tree of ``cliques`` (the size of the model that would hold them)."""
    return sum(domain.cells(c) for c in junction_cliques(domain, cliques)[0])


def _logsumexp(a: np.ndarray, axis: tuple[int, ...] | None = None):
    """``log(sum(exp(a)))`` over ``axis`` (every axis when None), with ``scipy.special.logsumexp``'s exact steps.

    The largest term is kept apart for accuracy (Blanchard, Higham and Higham
    2021): ``log1p(sum(exp(a - max)) over the other terms / k) + log(k) + max``
    with ``k`` the number of terms equal to the maximum.  The same floating-
    point operations in the same order as scipy's, so the same bits, without
    its per-call overhead, which dominated the fit on small cliques.  Anything
    but a finite C-ordered float64 array and result is left to scipy.
    """
    if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.ndim and a.size and a.flags.c_contiguous):
        return logsumexp(a, axis=axis)
    axes = tuple(range(a.ndim)) if axis is None else axis
    top = np.maximum.reduce(a, axis=axes, keepdims=True)  # what np.max and np.sum call, without their wrappers
    at_top = a == top
    rest = np.where(at_top, -np.inf, a)
    count = np.add.reduce(at_top.astype(np.float64), axis=axes, keepdims=True, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.add.reduce(np.exp(rest - top), axis=axes, keepdims=True, dtype=np.float64)
        terms = np.where(terms == 0, terms, terms / count)
        out = np.log1p(terms) + np.log(count) + top
    if not np.isfinite(out).all():
        return logsumexp(a, axis=axis)
    out = np.squeeze(out, axis=axes)
    return out[()] if out.ndim == 0 else out


def _shape(domain: Domain, attrs: Clique) -> tuple[int, ...]:
    return tuple(domain.sizes[a] for a in attrs)


def _broadcast_shape(domain: Domain, attrs: Clique, into: Clique) -> tuple[int, ...]:
    """The shape that makes an array on ``attrs`` (a subset of ``into``) broadcast against arrays on ``into``."""
    return tuple(domain.sizes[a] if a in attrs else 1 for a in into)


def _expand(array: np.ndarray, attrs: Clique, into: Clique) -> np.ndarray:
    """``array`` on ``attrs`` (a sorted subset of sorted ``into``) broadcastable against arrays on ``into``."""
    return array.reshape([array.shape[attrs.index(a)] if a in attrs else 1 for a in into])


def _axes(attrs: Clique, keep: Clique) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(attrs) if a not in keep)


class GraphicalModel:
    """Log-potentials on a junction tree; marginals in counts scaled to the model's own ``total``."""

    def __init__(self, domain: Domain, cliques: list[Clique], parent: list[int | None],
                 potentials: list[np.ndarray], total: float):
        self.domain, self.cliques, self.parent, self.total = domain, cliques, parent, float(total)
        self.potentials = potentials
        # The tree's fixed structure, worked out once: per clique, the separator with its parent, the axes that
        # sum the clique and the parent down to it, and the shapes that broadcast a message into each.
        self._links = []
        for c, p in zip(cliques, parent):
            sep = () if p is None else tuple(a for a in c if a in cliques[p])
            self._links.append((p, sep, _axes(c, sep), None if p is None else _axes(cliques[p], sep),
                                None if p is None else _broadcast_shape(domain, sep, cliques[p]),
                                _broadcast_shape(domain, sep, c)))
        self._holders: dict[Clique, tuple[int, tuple[int, ...]] | None] = {}  # holder() and counts()' axes per set
        self.marginals = self._calibrate(potentials)
        #: The log-potentials as one factor per measured attribute set, and mirror descent's last step size:
        #: what a warm-started fit carries over.
        self.factors: dict[Clique, np.ndarray] = {}
        self.step: float | None = None

    # ----- inference ------------------------------------------------------
    def _calibrate(self, theta: list[np.ndarray]) -> list[np.ndarray]:
        """Clique marginals (counts) by two-pass sum-product in log space."""
        k = len(self.cliques)
        up: list[np.ndarray | None] = [None] * k
        belief = [t.copy() for t in theta]
        for i in reversed(range(k)):  # leaves first: message to the parent over the separator
            p, sep, own_axes, _, into_parent, _ = self._links[i]
            if p is None:
                continue
            up[i] = _logsumexp(belief[i], axis=own_axes) if sep else np.asarray(_logsumexp(belief[i]))
            belief[p] = belief[p] + np.asarray(up[i]).reshape(into_parent)
        for i in range(k):  # root first: the parent's belief without this child's message
            p, sep, _, parent_axes, into_parent, into_child = self._links[i]
            if p is None:
                continue
            cavity = belief[p] - np.asarray(up[i]).reshape(into_parent)
            down = _logsumexp(cavity, axis=parent_axes) if sep else np.asarray(_logsumexp(cavity))
            belief[i] = belief[i] + np.asarray(down).reshape(into_child)
        out = []
        for b in belief:
            out.append(self.total * np.exp(b - _logsumexp(b)))
        return out

    def holder(self, attrs: Clique) -> int | None:
        """Index of the first model clique that contains ``attrs`` (None if none does)."""
        found = self._held(attrs)
        return None if found is None else found[0]

    def _held(self, attrs: Clique) -> tuple[int, tuple[int, ...]] | None:
        """The first clique holding ``attrs`` and the axes summing it down to them (cached: the cliques are fixed)."""
        key = tuple(attrs)
        if key not in self._holders:
            want = set(key)
            i = next((i for i, c in enumerate(self.cliques) if want <= set(c)), None)
            self._holders[key] = None if i is None else (i, _axes(self.cliques[i], key))
        return self._holders[key]

    def counts(self, attrs: Clique, marginals: list[np.ndarray] | None = None) -> np.ndarray:
        """Model counts on sorted ``attrs`` (flattened), which some clique must contain."""
        i, axes = self._held(attrs)
        table = (self.marginals if marginals is None else marginals)[i]
        return table.sum(axis=axes).reshape(-1)

    def counts_as(self, measured: NoisyMarginal) -> np.ndarray:
        """Model counts on ``measured``'s attributes as it reads them: through its groups when coarse (flattened)."""
        return measured.read(self.counts(measured.attrs), _shape(self.domain, measured.attrs)).reshape(-1)

    # ----- sampling (post-processing) ---------------------------------------
    def given(self, evidence: Mapping[int, int]) -> "GraphicalModel | None":
        """The model conditioned on ``evidence`` (attribute -> code), or None when it puts no mass there.

        One attribute at a time, each checked to keep mass given the ones before (the mass of the evidence is the
        product of those conditionals), the attribute's other codes get a structural zero on the first clique that
        holds it and the tree is calibrated again: its marginals are the exact conditional distribution that
        :meth:`sample` draws from.  The zero is exact: a code with mass in floating point holds an assignment
        within about 800 of the largest log-density, so every excluded one, :data:`EXCLUDED_LOG_POTENTIAL` below
        that at least, has ``exp`` 0 beside it.  Reads the released model alone: post-processing
        (docs/privacy.md §10.9).
        """
        model = self
        for a, code in evidence.items():
            if not model.counts((a,))[code] > 0:
                return None
            others = {a: np.arange(self.domain.sizes[a]) != code}
            clamp = _structural_zeros(self.domain, self.cliques, others)
            model = GraphicalModel(self.domain, self.cliques, self.parent,
                                   [p + z for p, z in zip(model.potentials, clamp)], self.total)
        return model

    def sample(self, rows: int, generator: np.random.Generator) -> np.ndarray:
        """``rows`` records drawn clique by clique down the tree, as an ``(rows, d)`` code matrix.

        The root's cells and each clique's new attributes given its separator
        are drawn with stratified uniforms (``(rank + U) / group size`` within
        each group of records sharing the conditioning values, after a random
        shuffle), which keeps the sample's counts within about one of the
        model's expected counts per group: randomized rounding, as private-pgm does.
        The records are built column by column (column-major, then returned row-major).
        """
        codes = np.zeros((rows, len(self.domain)), dtype=np.int64, order="F")
        for i, clique in enumerate(self.cliques):
            p = self.parent[i]
            sep = () if p is None else tuple(a for a in clique if a in self.cliques[p])
            new = tuple(a for a in clique if a not in sep)
            table = self.marginals[i]
            order = [clique.index(a) for a in sep + new]
            cond = np.transpose(table, order).reshape(self.domain.cells(sep), self.domain.cells(new))
            sums = cond.sum(axis=1, keepdims=True)
            cond = np.where(sums > 0, cond / np.where(sums > 0, sums, 1), 1.0 / cond.shape[1])
            group = self.domain.flat_index(codes, sep) if sep else np.zeros(rows, dtype=np.int64)
            shuffled = generator.permutation(rows)
            keys = group[shuffled]
            if cond.shape[0] <= 1 << 16:  # 16-bit keys get numpy's radix sort: the same stable order, sooner
                keys = keys.astype(np.uint16)
            by_group = shuffled[np.argsort(keys, kind="stable")]
            sizes = np.bincount(group, minlength=cond.shape[0])
            starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            g_sorted = group[by_group]
            rank = np.arange(rows) - starts[g_sorted]
            u = (rank + generator.random(rows)) / sizes[g_sorted]
            cum = np.cumsum(cond, axis=1)
            cum[:, -1] = 1.0
            flat = np.searchsorted(cum.reshape(-1) + np.repeat(np.arange(cond.shape[0]), cond.shape[1]),
                                   g_sorted + u, side="right")
            cell = np.minimum(flat - g_sorted * cond.shape[1], cond.shape[1] - 1)
            values = np.unravel_index(cell, _shape(self.domain, new)) if new else ()
            for a, v in zip(new, values):
                codes[by_group, a] = v
        return np.ascontiguousarray(codes)


def estimate_total(measurements: Sequence[NoisyMarginal]) -> float:
    """Minimum-variance combination of the measured totals (each ``sum(y_r)``, variance ``sigma_r**2 cells_r``) of the
    measurements that read every record: a level of a refined reading (docs/privacy.md §11.1) reads only the cells
    it chose, so its sum is not a total."""
    whole = [m for m in measurements if m.labels is None]
    weights = np.array([1.0 / (m.sigma2 * m.counts.size) for m in whole])
    totals = np.array([float(np.sum(m.counts)) for m in whole])
    return max(1.0, float(weights @ totals / weights.sum()))


def _residual(m: NoisyMarginal, fitted: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``m``'s residual against the model's counts ``fitted`` on its attributes (flattened), as ``m`` reads them, and
    the residual carried back onto those counts (shape ``shape``): through the groups of a coarse measurement, the
    model's counts summed and the residual spread back (docs/privacy.md §8.11)."""
    read = m.read(fitted, shape)
    diff = read.reshape(-1) - m.counts
    return diff, m.spread(diff.reshape(read.shape), shape)


#: The log-potential of a structural zero: ``exp`` of it is 0 in floating point, and it stays finite, so message
#: passing never forms ``inf - inf``.
EXCLUDED_LOG_POTENTIAL = -1e4


def _structural_zeros(domain: Domain, cliques: list[Clique], excluded: Mapping[int, np.ndarray]) -> list[np.ndarray]:
    """Per clique, the log-potential that puts no mass on the ``excluded`` codes (a mask over each attribute's
    codes), each attribute's on the first clique that holds it (docs/privacy.md §8.7, empty tails)."""
    theta = [np.zeros(_shape(domain, c)) for c in cliques]
    for a, mask in excluded.items():
        home = next(j for j, c in enumerate(cliques) if a in c)
        theta[home] = theta[home] + _expand(np.where(mask, EXCLUDED_LOG_POTENTIAL, 0.0), (a,), cliques[home])
    return theta


def fit(domain: Domain, measurements: Sequence[NoisyMarginal], iters: int,
        warm_start: GraphicalModel | None = None, *,
        excluded: Mapping[int, np.ndarray] | None = None) -> GraphicalModel:
    """Fit the model by entropic mirror descent with an Armijo step (warm-started from ``warm_start``).

    The log-potentials are a sum of one factor per measured attribute set
    (mirror descent from zero only ever adds gradients on those sets), so a
    warm start carries the factors over whatever junction tree the new
    measurements need.  ``excluded``: per attribute, a mask of codes that
    get no mass (structural zeros: the empty tails of
    :func:`synthdp.methods.measure.tails.empty_tails`).
    """
    total = estimate_total(measurements)
    sets = sorted({m.attrs for m in measurements}, key=lambda s: (len(s), s))
    cliques, parent = junction_cliques(domain, sets)
    old = {} if warm_start is None else warm_start.factors
    factors = {r: old.get(r, np.zeros(_shape(domain, r))) for r in sets}
    homes = {r: next(j for j, c in enumerate(cliques) if set(r) <= set(c)) for r in sets}

    zeros = _structural_zeros(domain, cliques, excluded or {})

    def potentials(phi: dict[Clique, np.ndarray]) -> list[np.ndarray]:
        theta = [z.copy() for z in zeros]
        for r, f in phi.items():
            theta[homes[r]] = theta[homes[r]] + _expand(f, r, cliques[homes[r]])
        return theta

    model = GraphicalModel(domain, cliques, parent, potentials(factors), total)
    inv_var = [1.0 / m.sigma2 for m in measurements]

    def loss_grad(marginals):
        """The loss, its gradient per measured set, and the model's counts on each set (read again by the step test)."""
        fitted = {r: model.counts(r, marginals) for r in sets}
        loss, grads = 0.0, {r: np.zeros(_shape(domain, r)) for r in sets}
        for m, w in zip(measurements, inv_var):
            diff, back = _residual(m, fitted[m.attrs], _shape(domain, m.attrs))
            loss += 0.5 * w * float(diff @ diff)
            grads[m.attrs] = grads[m.attrs] + w * back
        return loss, grads, fitted

    lipschitz = max(sum(w for m, w in zip(measurements, inv_var) if set(m.attrs) <= set(c)) for c in cliques)
    alpha = 2.0 / (max(lipschitz, 1e-300) * total)
    if warm_start is not None and warm_start.step is not None:
        alpha = max(alpha, warm_start.step)
    marginals = model.marginals
    loss, grads, fitted = loss_grad(marginals)
    for _ in range(iters):
        trial = {r: f - alpha * grads[r] for r, f in factors.items()}
        trial_marginals = model._calibrate(potentials(trial))
        trial_loss, trial_grads, trial_fitted = loss_grad(trial_marginals)
        gain = sum(float(np.sum(g * (fitted[r] - trial_fitted[r]).reshape(g.shape))) for r, g in grads.items())
        if loss - trial_loss >= 0.5 * alpha * gain:
            factors, marginals, loss, grads, fitted = trial, trial_marginals, trial_loss, trial_grads, trial_fitted
            alpha *= 1.01
        else:
            alpha *= 0.5
    model.marginals, model.factors, model.step = marginals, factors, alpha
    model.potentials = potentials(factors)
    log.debug("estimator: %d cliques, %d cells, loss %.4g", len(cliques), sum(t.size for t in model.potentials), loss)
    return model
