"""The population statement (transfer theorem of Jung et al. 2020) computed from public quantities."""

from __future__ import annotations

import itertools
import math

import pytest

from synthdp.core.errors import InputError
from synthdp.transfer import best_c_d, population_statement


def test_bound_matches_the_theorem_with_the_best_c_d():
    s = population_statement(0.05, 1e-9, sample_error=0.04, sample_failure=0.01, failure=0.05,
                             relation="replace-one")
    assert s.sample_failure / s.c + s.delta_replace_one / s.d == pytest.approx(0.05)
    assert s.population_error == pytest.approx(0.04 + math.expm1(0.05) + s.c + 2 * s.d)
    assert not s.vacuous and f"{s.population_error:.4g}" in s.text and "0.95" in s.text


def test_best_c_d_is_the_minimum_over_a_grid():
    beta, delta, target = 0.02, 1e-4, 0.1
    c, d, slack = best_c_d(beta, delta, target)
    assert slack == pytest.approx(c + 2 * d)
    grid = [10 ** (k / 20) for k in range(-120, 21)]
    feasible = [cc + 2 * dd for cc, dd in itertools.product(grid, grid) if beta / cc + delta / dd <= target]
    assert slack <= min(feasible) * (1 + 1e-9)
    assert min(feasible) <= slack * 1.1  # the grid gets close: the formula is the minimum, not a loose bound


def test_pure_privacy_needs_no_d():
    s = population_statement(0.02, 0.0, sample_error=0.05, sample_failure=0.01, failure=0.1, relation="replace-one")
    assert s.d == 0 and s.c == pytest.approx(0.1)
    assert s.population_error == pytest.approx(0.05 + math.expm1(0.02) + 0.1)


def test_add_remove_is_read_as_replace_one():
    s = population_statement(0.03, 1e-9, sample_error=0.05, sample_failure=0.01, failure=0.05)
    assert s.epsilon_replace_one == pytest.approx(0.06)
    assert s.delta_replace_one == pytest.approx((1 + math.exp(0.03)) * 1e-9)
    r = population_statement(0.06, s.delta_replace_one, sample_error=0.05, sample_failure=0.01, failure=0.05,
                             relation="replace-one")
    assert s.population_error == pytest.approx(r.population_error)


@pytest.mark.parametrize("eps", [math.log(2), 1.0, 3.0])
def test_vacuous_bounds_are_said_plainly(eps):
    s = population_statement(eps, 1e-9, sample_error=0.0, sample_failure=0.0, failure=0.05, relation="replace-one")
    assert s.vacuous and s.population_error >= 1
    assert s.text.startswith("Population statement: none")


@pytest.mark.parametrize("kw, name", [
    ({"epsilon": float("nan")}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"delta": 1.0}, "delta"),
    ({"sample_error": -0.1}, "sample_error"),
    ({"sample_failure": float("inf")}, "sample_failure"),
    ({"failure": 0.0}, "failure"),
    ({"relation": "swap"}, "relation"),
])
def test_bad_input_names_the_parameter(kw, name):
    args = dict(epsilon=0.1, delta=1e-9, sample_error=0.05, sample_failure=0.01, failure=0.05)
    args.update(kw)
    with pytest.raises(InputError, match=name):
        population_statement(args.pop("epsilon"), args.pop("delta"), **args)
