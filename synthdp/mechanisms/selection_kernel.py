"""Compiled rejection sampler of the exponential mechanism (docs/privacy.md §4.6).

The sampler of :func:`synthdp.mechanisms.selection.exponential_mechanism`, compiled
with numba: repeat -- draw ``j`` uniformly, accept with an exact
``Bernoulli(exp(-gamma_j))``, ``gamma_j = numerators[j] / scale`` -- and
return the first accepted ``j``.  ``Bernoulli(exp(-gamma))`` is the
product, stopped at its first 0, of ``floor(gamma)`` draws of
``Bernoulli(exp(-1))`` and one ``Bernoulli(exp(-(gamma mod 1)))``, each
by the loop of Canonne-Kamath-Steinke (docs/privacy.md §2.6): draw
``Bernoulli(g / k)`` for ``k = 1, 2, ...`` until the first 0 and return
1 iff that ``k`` is odd.  (For ``g = 1`` the ``k = 1`` draw is certain and
is skipped.)

*Randomness.*  The kernel reads i.i.d. uniform 64-bit words from a buffer
filled by :meth:`synthdp.mechanisms.randomness.PrivateRandom.random_words`; a uniform
integer below ``n`` is the top ``bit_length(n - 1)`` bits of a word,
rejected when ``>= n`` (exact rejection sampling, each word used once).
When the buffer runs out the kernel returns :data:`NEED_WORDS` with its
whole state (the proposal in flight included) in ``state``; the caller
refills the buffer and calls again, which continues the same run.  When an
integer bound ``scale * k`` would leave the int64 range it returns
:data:`OVERFLOW`, and the caller finishes that one coin in exact Python
integers from the state and goes on.  So the accepted index has exactly
the law of the sequential sampler.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Return codes of :func:`run` besides an accepted index.
NEED_WORDS, OVERFLOW = -1, -2
#: Slots of the state array: next word, phase (0 new proposal, 1 in a Bernoulli(exp(-1)) draw,
#: 2 in the fractional draw), proposal, whole draws left, CKS index k.
POS, PHASE, INDEX, WHOLE, K = range(5)
#: Largest ``scale * k`` handled in the kernel.
BOUND = 2**62


@njit(cache=True, nogil=True)
def _bit_length(v):
    """Number of bits of ``v >= 0`` (binary search over the 64 bits)."""
    bits = 0
    for step in (32, 16, 8, 4, 2, 1):
        if v >> step:
            v >>= step
            bits += step
    return bits + v


@njit(cache=True, nogil=True)
def _below(n, words, state):
    """A uniform integer in ``[0, n)`` (``1 <= n < 2**62``), or -1 when the buffer is empty."""
    if n == 1:
        return 0
    shift = np.uint64(64 - _bit_length(n - 1))
    while state[POS] < len(words):
        value = np.int64(words[state[POS]] >> shift)
        state[POS] += 1
        if value < n:
            return value
    return -1


@njit(cache=True, nogil=True)
def run(numerators, scale, words, state):
    """Continue the sampler; an accepted index, :data:`NEED_WORDS` or :data:`OVERFLOW` (see module docstring)."""
    n = len(numerators)
    while True:
        phase = state[PHASE]
        if phase == 0:
            j = _below(n, words, state)
            if j < 0:
                return NEED_WORDS
            state[INDEX] = j
            state[WHOLE] = numerators[j] // scale
            state[PHASE] = 1 if state[WHOLE] > 0 else 2
            state[K] = 2 if state[WHOLE] > 0 else 1
        elif phase == 1:
            u = _below(state[K], words, state)  # Bernoulli(1 / k)
            if u < 0:
                return NEED_WORDS
            if u < 1:
                state[K] += 1
                continue
            if state[K] % 2 == 0:  # this Bernoulli(exp(-1)) is 0: reject the proposal
                state[PHASE] = 0
                continue
            state[WHOLE] -= 1
            state[PHASE] = 1 if state[WHOLE] > 0 else 2
            state[K] = 2 if state[WHOLE] > 0 else 1
        else:
            if state[K] >= BOUND // scale:
                return OVERFLOW
            u = _below(scale * state[K], words, state)  # Bernoulli(frac / (scale k))
            if u < 0:
                return NEED_WORDS
            if u < numerators[state[INDEX]] % scale:
                state[K] += 1
                continue
            state[PHASE] = 0
            if state[K] % 2 == 1:
                return state[INDEX]
