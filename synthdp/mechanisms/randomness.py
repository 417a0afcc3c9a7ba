"""The one explicit source of privacy-critical randomness (docs/privacy.md §2.6).

Every random choice that enters a privacy proof -- the RSPM noise, the
PRSMA partition, count noise and survivor, the exponential mechanism and
report-noisy-max -- is drawn from a :class:`PrivateRandom` that the caller
passes down explicitly.  No module of the private path touches numpy's
global random state, and every sampler consumes only exact uniform
integers (:meth:`PrivateRandom.randbelow` and, vectorised,
:meth:`PrivateRandom.randbelow_array`); the exact integer algorithms of
:mod:`synthdp.mechanisms.noise` turn those into the distributions the proofs need.
numpy serves only as a source of uniform integers (docs/privacy.md §2.6).

Two sources, one interface:

* ``PrivateRandom(None)`` draws from the operating system's CSPRNG
  (:mod:`secrets`): :func:`secrets.randbelow` for scalars,
  :func:`secrets.token_bytes` turned into exact uniform integers by
  rejection for arrays.  Nothing is buffered between calls, so a fork
  never duplicates unused randomness.  Use it for every release.
* ``PrivateRandom(seed)`` draws from numpy's ``PCG64(seed)``: arrays from
  ``Generator.integers`` (exact and unbiased), scalars by rejection from
  buffered raw 64-bit outputs of the same bit generator.  The
  *distributions* are exactly those of the proofs and runs are
  reproducible: the same seed and the same sequence of calls give the same
  draws.  (The scalar buffer was introduced with the vectorised samplers;
  a seeded run draws a different stream than before that change, with the
  same law.)  PCG64 is **not** a cryptographic generator: an adversary who
  learns enough outputs can predict the rest.  Seeded streams are for
  experiments, tests and audits only, never for a release.

The data player's follow-the-perturbed-leader noise plays no role in any
privacy proof (docs/privacy.md §2.6, "Which randomness is privacy-critical"), so it may use an ordinary
``numpy.random.Generator``; :meth:`PrivateRandom.numpy_generator` derives
one, documented as non-privacy-critical.
"""

from __future__ import annotations

import secrets

import numpy as np

#: Exclusive bound on ``n`` for :meth:`PrivateRandom.randbelow_array` (values fit int64 with room to spare).
ARRAY_BOUND = 2**62
#: Raw 64-bit PCG64 outputs fetched at a time for the seeded scalar path.
_BUFFER_WORDS = 4096
#: Unsigned word types for the CSPRNG array path, narrowest first (saves OS entropy for small bounds).
_WORD_TYPES = (np.uint8, np.uint16, np.uint32, np.uint64)


def _check_bound(n: int, name: str, limit: int | None = None) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 or (limit is not None and n >= limit):
        bound = "" if limit is None else f" and < 2**{limit.bit_length() - 1}"
        raise ValueError(f"{name} needs an integer n >= 1{bound}, got {n!r}")
    return int(n)


def _csprng_below(n: int, size: int) -> np.ndarray:
    """``size`` i.i.d. uniform integers in ``[0, n)`` from OS random bytes, by vectorised rejection.

    *Exactness.*  Let ``b = (n - 1).bit_length()`` and take words of the
    narrowest unsigned type with at least ``b`` bits.  The bytes of
    :func:`secrets.token_bytes` are i.i.d. uniform, so the masked words
    ``word & (2**b - 1)`` form an i.i.d. sequence uniform on ``[0, 2**b)``,
    continued across top-up batches by fresh bytes.  Its successive terms
    that are ``< n`` (each with probability ``n / 2**b > 1/2``) are i.i.d.
    uniform on ``[0, n)`` (plain rejection sampling), and the result is
    exactly the first ``size`` of them; accepted values beyond ``size`` are
    discarded unused.
    """
    bits = (n - 1).bit_length()
    word = next(w for w in _WORD_TYPES if np.iinfo(w).bits >= bits)
    mask = word((1 << bits) - 1)
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        count = -(-need * (1 << bits) // n)  # expected number of words for ``need`` acceptances
        words = np.frombuffer(secrets.token_bytes(count * np.dtype(word).itemsize), dtype=word) & mask
        kept = words[words <= n - 1][:need]  # n - 1 < 2**b fits the word type
        out[filled:filled + kept.size] = kept
        filled += kept.size
    return out


class PrivateRandom:
    """Exact uniform integers for privacy-critical sampling (docs/privacy.md §2.6).

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
        self._words: list[int] = []  # buffered raw 64-bit outputs of the seeded stream, consumed from the end

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
        n = _check_bound(n, "randbelow")
        if self._generator is None:
            return secrets.randbelow(n)
        return self._seeded_below(n)

    def _next_word(self) -> int:
        """The next raw 64-bit output of the seeded stream, fetched from PCG64 in blocks."""
        if not self._words:
            self._words = self._generator.bit_generator.random_raw(_BUFFER_WORDS).tolist()
        return self._words.pop()

    def _seeded_below(self, n: int) -> int:
        """Rejection sampling: a uniform ``bits``-bit integer, kept when below ``n``.

        ``bits = (n - 1).bit_length()`` so ``n > 2**(bits - 1)`` and each trial
        is accepted with probability above 1/2.  The ``bits``-bit integer is
        the top bits of a concatenation of uniform 64-bit words (raw PCG64
        outputs, each used once), hence uniform; the accepted value is
        uniform on ``[0, n)``.  Buffering the words changes which outputs are
        used, not their law.
        """
        bits = (n - 1).bit_length()
        if bits <= 64:  # the common case, one word per trial
            shift = 64 - bits
            while (value := self._next_word() >> shift) >= n:
                pass
            return value
        words = -(-bits // 64)
        while True:
            value = 0
            for _ in range(words):
                value = (value << 64) | self._next_word()
            value >>= words * 64 - bits
            if value < n:
                return value

    def randbelow_array(self, n: int, size: int) -> np.ndarray:
        """``size`` i.i.d. uniform integers in ``[0, n)`` as int64, for ``1 <= n < 2**62``; exact (docs/privacy.md §2.6).

        Seeded: ``Generator.integers(0, n, size)`` (exact, unbiased).
        CSPRNG: OS random bytes by vectorised rejection (see
        :func:`_csprng_below` for the exactness argument).
        """
        n = _check_bound(n, "randbelow_array", ARRAY_BOUND)
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise ValueError(f"randbelow_array needs an integer size >= 0, got {size!r}")
        if self._generator is None:
            return _csprng_below(n, int(size))
        return self._generator.integers(0, n, size=int(size), dtype=np.int64)

    def random_words(self, count: int) -> np.ndarray:
        """``count`` i.i.d. uniform 64-bit words (uint64), for compiled samplers that do their own rejection.

        Seeded: raw PCG64 outputs; CSPRNG: :func:`secrets.token_bytes`.  Nothing
        is kept back: a caller discards what it does not use.
        """
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"random_words needs an integer count >= 1, got {count!r}")
        if self._generator is None:
            return np.frombuffer(secrets.token_bytes(8 * int(count)), dtype=np.uint64).copy()
        return self._generator.bit_generator.random_raw(int(count))

    def choice(self, k: int) -> int:
        """A uniform index in ``range(k)`` (e.g. PRSMA's uniform survivor, docs/privacy.md §3.2 step 5)."""
        return self.randbelow(k)

    def permutation(self, n: int) -> np.ndarray:
        """A uniformly random permutation of ``range(n)`` (Fisher-Yates with :meth:`randbelow`).

        Used for PRSMA's random partition (docs/privacy.md §3.2 step 1).  Each of the
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
        resamples, which no privacy proof uses (docs/privacy.md §2.6).  Seeded: derived
        reproducibly from this stream's seed; CSPRNG: fresh OS entropy.  Never
        use it for noise whose privacy is claimed: its float samplers carry no
        guarantee (docs/privacy.md §2.6, "Why not numpy's laplace/geometric?").
        """
        if self._sequence is None:
            return np.random.default_rng()
        return np.random.default_rng(self._sequence.spawn(1)[0])
