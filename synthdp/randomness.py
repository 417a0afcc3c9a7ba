"""The one explicit source of privacy-critical randomness (privacy note, section 2.6).

Every random choice that enters a privacy proof -- the RSPM noise, the
PRSMA partition, count noise and survivor, the exponential mechanism and
report-noisy-max -- is drawn from a :class:`PrivateRandom` that the caller
passes down explicitly.  No module of the private path touches numpy's
global random state, and every sampler consumes only exact uniform
integers (:meth:`PrivateRandom.randbelow`); the exact integer algorithms of
:mod:`synthdp.noise` turn those into the distributions the proofs need.

Two sources, one interface:

* ``PrivateRandom(None)`` draws from :func:`secrets.randbelow`, the
  operating system's CSPRNG.  Use it for every release.
* ``PrivateRandom(seed)`` draws from numpy's ``Generator(PCG64(seed))``:
  exact and unbiased uniform integers (``Generator.integers`` below
  ``2**62``, exact rejection sampling from 62-bit chunks above), so the
  *distributions* are exactly those of the proofs, and runs are
  reproducible.  PCG64 is **not** a cryptographic generator: an adversary
  who learns enough outputs can predict the rest.  Seeded streams are for
  experiments, tests and audits only, never for a release.

The data player's follow-the-perturbed-leader noise plays no role in any
privacy proof (section 2.6, last bullets), so it may use an ordinary
``numpy.random.Generator``; :meth:`PrivateRandom.numpy_generator` derives
one, documented as non-privacy-critical.
"""

from __future__ import annotations

import secrets

import numpy as np

#: Largest bound served by a single ``Generator.integers`` call (exclusive).
_NUMPY_BOUND = 2**62
#: Bits per chunk of the rejection sampler for larger bounds.
_CHUNK_BITS = 62


class PrivateRandom:
    """Exact uniform integers for privacy-critical sampling (section 2.6).

    ``seed=None`` uses the CSPRNG (:mod:`secrets`); an integer seed uses a
    reproducible, non-cryptographic PCG64 stream.  Either way every method
    returns exactly uniform values.
    """

    def __init__(self, seed: int | None = None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
        self._init(None if seed is None else np.random.SeedSequence(int(seed)))

    def _init(self, sequence: np.random.SeedSequence | None) -> None:
        self._sequence = sequence
        self._generator = None if sequence is None else np.random.Generator(np.random.PCG64(sequence))

    @classmethod
    def _from_sequence(cls, sequence: np.random.SeedSequence | None) -> "PrivateRandom":
        child = cls.__new__(cls)
        child._init(sequence)
        return child

    @property
    def cryptographic(self) -> bool:
        """Whether draws come from the CSPRNG (required for releases)."""
        return self._sequence is None

    def __repr__(self) -> str:
        kind = "CSPRNG (secrets)" if self.cryptographic else "PCG64, seeded, NOT cryptographic"
        return f"PrivateRandom({kind})"

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` for any Python integer ``n >= 1``; exact."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"randbelow needs an integer n >= 1, got {n!r}")
        n = int(n)
        if self._generator is None:
            return secrets.randbelow(n)
        if n < _NUMPY_BOUND:
            return int(self._generator.integers(0, n))
        return self._randbelow_chunked(n)

    def _randbelow_chunked(self, n: int) -> int:
        """Rejection sampling: a uniform ``bits``-bit integer, kept when below ``n``.

        ``bits = (n - 1).bit_length()`` so ``n > 2**(bits - 1)`` and each trial
        is accepted with probability above 1/2.  The ``bits``-bit integer is
        the top bits of a concatenation of uniform 62-bit chunks, hence uniform.
        """
        bits = (n - 1).bit_length()
        chunks = -(-bits // _CHUNK_BITS)
        while True:
            value = 0
            for _ in range(chunks):
                value = (value << _CHUNK_BITS) | int(self._generator.integers(0, 2**_CHUNK_BITS))
            value >>= chunks * _CHUNK_BITS - bits
            if value < n:
                return value

    def choice(self, k: int) -> int:
        """A uniform index in ``range(k)`` (e.g. PRSMA's uniform survivor, section 3.2 step 5)."""
        return self.randbelow(k)

    def permutation(self, n: int) -> np.ndarray:
        """A uniformly random permutation of ``range(n)`` (Fisher-Yates with :meth:`randbelow`).

        Used for PRSMA's random partition (section 3.2 step 1).  Each of the
        ``n!`` permutations has probability exactly ``1/n!``.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"permutation needs an integer n >= 0, got {n!r}")
        perm = list(range(int(n)))
        for i in range(len(perm) - 1, 0, -1):
            j = self.randbelow(i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return np.array(perm, dtype=np.int64)

    def spawn(self) -> "PrivateRandom":
        """An independent child stream (seeded: a spawned ``SeedSequence``; CSPRNG: the CSPRNG)."""
        return PrivateRandom._from_sequence(None if self._sequence is None else self._sequence.spawn(1)[0])

    def numpy_generator(self) -> np.random.Generator:
        """A numpy ``Generator`` for **non-privacy-critical** randomness only.

        Meant for the data player's FTPL perturbations and post-processing
        resamples, which no privacy proof uses (section 2.6).  Seeded: derived
        reproducibly from this stream's seed; CSPRNG: fresh OS entropy.  Never
        use it for noise whose privacy is claimed: its float samplers carry no
        guarantee (section 2.6, "numpy's float samplers").
        """
        if self._sequence is None:
            return np.random.default_rng()
        return np.random.default_rng(self._sequence.spawn(1)[0])
