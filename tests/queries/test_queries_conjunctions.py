"""Conjunctions (marginal cells) and complement closure: separator, answers, membership."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthdp.queries import ComplementClosed, Conjunction, Conjunctions, Not
from synthdp.queries.conjunctions import _TABLE_LIMIT
from synthdp.core.data import AggregatedData, weighted_bincount
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError

ADULT_SIZES = (85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2)


def _random(domain: Domain, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, s, size=n) for s in domain.sizes])
    return codes, rng.integers(-9, 10, size=n)


@pytest.mark.parametrize("sizes", [(1, 7, 8, 2), (3, 2, 4), (2, 2, 2, 2), (5, 3), (15, 16)])
def test_binary_code_separator_is_exhaustively_injective(sizes):
    dom = Domain.from_sizes({f"a{i}": s for i, s in enumerate(sizes)})
    for qc in (Conjunctions(dom, min_width=0), ComplementClosed(Conjunctions(dom, min_width=0))):
        queries = qc.enumerate()
        sep = qc.separator()
        assert sep.m == sum(int(s).bit_length() for s in sizes) + isinstance(qc, ComplementClosed)
        sig = qc.signature(queries)
        np.testing.assert_array_equal(qc.evaluate(queries, sep.points), sig)
        assert len(np.unique(sig, axis=0)) == len(queries) == qc.size()


def test_adult_separator_sizes():
    dom = Domain.from_sizes({f"a{i}": s for i, s in enumerate(ADULT_SIZES)})
    assert Conjunctions.marginals(dom, 3).separator().m == 67
    assert ComplementClosed(Conjunctions.marginals(dom, 3)).separator().m == 68
    assert ComplementClosed(Conjunctions(dom)).separator().m == 68
    assert dom.n_onehot + 1 == 589  # what one point per one-hot column would cost


@pytest.mark.parametrize("min_width, max_width", [(0, None), (1, 1), (2, 2), (1, 3), (3, 3)])
def test_answer_matches_brute_force_with_negative_weights(min_width, max_width):
    dom = Domain.from_sizes({"a": 3, "b": 2, "c": 4, "d": 1})
    codes, weights = _random(dom, 200, seed=min_width * 10 + (max_width or 0))
    for qc in (Conjunctions(dom, min_width=min_width, max_width=max_width),
               ComplementClosed(Conjunctions(dom, min_width=min_width, max_width=max_width))):
        queries = qc.enumerate()
        brute = qc.evaluate(queries, qc.features(codes)).astype(np.int64) @ weights
        np.testing.assert_array_equal(qc.answer(queries, codes, weights), brute)


def _brute_count(query, codes, weights):
    base = query.query if isinstance(query, Not) else query
    pos = sum((w for r, w in zip(codes, weights) if all(r[a] == v for a, v in base.literals)), start=0)
    return sum(weights) - pos if isinstance(query, Not) else pos


def test_answer_is_exact_for_huge_integer_weights():
    dom = Domain.from_sizes({"a": 3, "b": 2})
    qc = ComplementClosed(Conjunctions(dom, min_width=0))
    codes = np.array([[0, 1], [2, 0], [0, 1]])
    weights = np.array([2**70, -(2**70) + 1, 3], dtype=object)
    queries = qc.enumerate()
    assert [int(x) for x in qc.answer(queries, codes, weights)] == [_brute_count(q, codes, weights) for q in queries]


def test_wide_conjunctions_are_answered_without_a_table(monkeypatch):
    """Regression: answering a full-width ADULT conjunction tried to allocate a 6e17-cell table."""
    import synthdp.queries.conjunctions as conj

    built = []

    def spy(index, weights, size):
        assert size <= _TABLE_LIMIT, f"built a table of {size} cells"
        built.append(size)
        return weighted_bincount(index, weights, size)

    monkeypatch.setattr(conj, "weighted_bincount", spy)
    dom = Domain.from_sizes({f"a{i}": s for i, s in enumerate(ADULT_SIZES)})
    codes, weights = _random(dom, 400, seed=7)
    wide = [Conjunction(tuple(enumerate(map(int, codes[i])))) for i in range(3)]
    wide.append(Conjunction(tuple((a, 0) for a in range(len(ADULT_SIZES)))))
    narrow = [Conjunction(((0, int(codes[0, 0])), (8, 1)))]
    qc = Conjunctions(dom)
    queries = wide + narrow
    assert qc.answer(queries, codes, weights).tolist() == [_brute_count(q, codes, weights) for q in queries]
    assert built == [85 * 2]
    closed = ComplementClosed(qc)
    assert closed.answer([Not(wide[0])], codes, weights).tolist() == [_brute_count(Not(wide[0]), codes, weights)]


def test_marginal_answers_match_aggregated_tables():
    dom = Domain.from_sizes({"a": 3, "b": 2, "c": 4})
    codes, _ = _random(dom, 300, seed=3)
    data = AggregatedData.from_codes(dom, codes)
    qc = Conjunctions.marginals(dom, 2)
    for attrs in itertools.combinations(range(3), 2):
        table = data.marginal(attrs)
        cells = [Conjunction(tuple(zip(attrs, vals))) for vals in itertools.product(*(range(dom.sizes[a]) for a in attrs))]
        np.testing.assert_array_equal(qc.answers(cells, data), table.reshape(-1))


def test_contains_is_exact():
    dom = Domain.from_sizes({"a": 3, "b": 2, "c": 4})
    qc = Conjunctions.marginals(dom, 2, exact=False)
    assert qc.contains(Conjunction(((np.int64(0), np.int64(2)), (2, np.int32(3)))))
    rejected = [
        Conjunction(((2, 0), (0, 1))),          # unsorted
        Conjunction(((0, 1), (0, 2))),          # repeated attribute
        Conjunction(((0, 3),)),                 # value out of range
        Conjunction(((0, -1),)),
        Conjunction(((3, 0),)),                 # no such attribute
        Conjunction(((0, 0), (1, 0), (2, 0))),  # too wide
        Conjunction(()),                        # too narrow
        Conjunction(((0, 1.0),)),               # float value: equal to (0, 1) but not an index
        Conjunction(((0,),)),                   # malformed literal
        Conjunction([(0, 1)]),                  # literals not a tuple
        Not(Conjunction(((0, 1),))),            # a complement outside the closure
        ((0, 1),),                              # not a query object
    ]
    assert [q for q in rejected if qc.contains(q)] == []
    closed = ComplementClosed(qc)
    assert closed.contains(Not(Conjunction(((0, 1),))))
    assert not closed.contains(Not(Not(Conjunction(((0, 1),)))))


def test_width_validation_and_names():
    dom = Domain.from_sizes({"a": 3, "b": 2, "c": 4})
    assert Conjunctions.marginals(dom, 2).name == "marginals:2"
    assert Conjunctions(dom).name == "conjunctions"
    assert ComplementClosed(Conjunctions(dom)).name == "conjunctions+complements"
    for kwargs in ({"max_width": 4}, {"min_width": 3, "max_width": 2}, {"min_width": -1}):
        with pytest.raises(InputError):
            Conjunctions(dom, **kwargs)


def test_complement_closure_signature_and_anchor():
    dom = Domain(("a", "b"), (3, 2), (("x", "y", "z"), ("F", "T")))
    base = Conjunctions(dom)
    closed = ComplementClosed(base)
    q = Conjunction(((0, 2), (1, 1)))
    sig = closed.signature([q, Not(q)])
    assert (sig[0] ^ sig[1] == 1).all()
    point, value = base.anchor()
    assert (closed.separator().points[-1] == point).all() and value == 1
    assert sig[0, -1] == 1 and sig[1, -1] == 0
    assert closed.describe(Not(q)) == "NOT (a=z AND b=T)"
    assert base.describe(Conjunction(())) == "TRUE"
    assert closed.complement(closed.complement(q)) == q
    assert closed.size() == 2 * base.size()
