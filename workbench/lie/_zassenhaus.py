r"""Zassenhaus factors :math:`e^{A+B} = e^{A} e^{B} e^{C_2} e^{C_3} \cdots`, exact, by multi-modular word vectors.

Each :math:`C_n` is homogeneous of degree ``n``.  Comparing the degree-``n`` parts of both sides,

.. math:: C_n = \frac{(A+B)^n}{n!} - \bigl[e^{A} e^{B} e^{C_2} \cdots e^{C_{n-1}}\bigr]_n,

so every :math:`C_n` follows from the lower ones by one truncated product.  Elements of the free
algebra are held as dense *word vectors*, one array of length :math:`2^k` per degree ``k`` (the word
read as a binary number, ``A = 0`` first letter most significant); the product of two homogeneous
parts is an outer product, so the degree-``d`` part of a product costs :math:`(d+1)\,2^d` steps instead
of the :math:`4^d` word pairs of a sparse product.  The arithmetic is exact and vectorised: the whole
recursion runs in numpy ``int64`` modulo a few primes below :math:`2^{30}`, and each coefficient on a
Lyndon word is recovered by the Chinese remainder theorem from proven bounds (:func:`_bounds`) on its
denominator and its size, so the lift is the unique rational with those bounds, not a guess; one
further prime re-checks every lifted value.  The Lyndon coordinates then come from the engine's exact
triangular solve (:func:`workbench.lie._fast.lyndon_coordinates_from_values`).

Casas, Murua & Nadinic, *Comput. Phys. Commun.* 183 (2012) 2386 (Casas–Murua–Nadinic 2012) compute
the factors by a recursion in the free Lie algebra; their low-degree factors are the oracle of the
tests.  The word-vector recursion above is the elementary one (degree by degree from the product),
organised here for exact modular arithmetic.

The previous algorithm (truncated exp and log of exact elements over all words) is the tests' reference
(``tests/free_algebra_reference.py``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache, partial

import numpy as np

from workbench.lie._budget import check_budget, zassenhaus_seconds
from workbench.lie._fast import lyndon_coordinates_from_values
from workbench.lie._free import Word, check_degree
from workbench.lie._levels import kernel_available
from workbench.lie._series import LieSeries
from workbench.lie._words import lyndon_words

__all__ = ["zassenhaus"]

# The budget where the engine's compiled kernel is not built (its Python-integer solve is slower).
_PYTHON_BUDGET = partial(zassenhaus_seconds, kernel=False)


# --- exact bounds and primes -------------------------------------------------------------------------


def _valuation(n: int, p: int) -> int:
    count = 0
    while n % p == 0:
        n //= p
        count += 1
    return count


def _factorial_valuation(n: int, p: int) -> int:
    # Legendre: v_p(n!) = Σ_i ⌊n / p^i⌋.
    total, q = 0, p
    while q <= n:
        total += n // q
        q *= p
    return total


@cache
def _bounds(degree: int) -> tuple[tuple[int, ...], tuple[Fraction, ...]]:
    r"""Proven bounds ``(D, b)``: :math:`D_n C_n` has integer word coefficients, each at most :math:`D_n b_n`.

    A word coefficient of :math:`[e^A e^B e^{C_2} \cdots e^{C_{n-1}}]_n` is a sum, over the ways
    :math:`n = a + b + \sum_k k m_k` to cut the word into an ``A``-run of length ``a``, a ``B``-run of
    length ``b`` and :math:`m_k` consecutive blocks of length ``k`` (one way per choice of the
    numbers), of :math:`\frac{1}{a!\,b!}\prod_k \frac{1}{m_k!}\prod_{\text{blocks}} C_k(\text{block})`.
    Hence :math:`C_n` is integral after multiplication by the lcm :math:`D_n` of :math:`n!` and of all
    :math:`a!\,b!\prod_k m_k!\,D_k^{m_k}` (a max-plus recursion on the valuation of each prime
    :math:`p \le n`), and :math:`|C_n(w)| \le b_n = \frac1{n!} + [t^n]\,e^{2t}\prod_{k<n} e^{b_k t^k}`.
    Index ``n`` of each tuple is degree ``n`` (index 0 unused).
    """
    primes = [p for p in range(2, degree + 1) if all(p % q for q in range(2, math.isqrt(p) + 1))]
    denominators, sizes = [1, 1], [Fraction(0), Fraction(1)]
    for n in range(2, degree + 1):
        d = 1
        for p in primes:
            # best[s]: the largest v_p of a term's denominator using total length s so far.
            best = [
                max(_factorial_valuation(a, p) + _factorial_valuation(s - a, p) for a in range(s + 1))
                for s in range(n + 1)
            ]
            for k in range(2, n):
                vk = _valuation(denominators[k], p)
                best = [
                    max(best[s - m * k] + _factorial_valuation(m, p) + m * vk for m in range(s // k + 1))
                    for s in range(n + 1)
                ]
            d *= p ** max(best[n], _factorial_valuation(n, p))
        denominators.append(d)
        series = [Fraction(2**j, math.factorial(j)) for j in range(n + 1)]  # e^{2t}
        for k in range(2, n):
            factor = [Fraction(0)] * (n + 1)  # e^{b_k t^k}
            for m in range(n // k + 1):
                factor[m * k] = sizes[k] ** m / math.factorial(m)
            series = [sum((series[i] * factor[j - i] for i in range(j + 1)), Fraction(0)) for j in range(n + 1)]
        sizes.append(Fraction(1, math.factorial(n)) + series[n])
    return tuple(denominators), tuple(sizes)


def _is_prime(n: int) -> bool:
    # Deterministic Miller–Rabin: the bases 2, 3, 5, 7 decide every n < 3,215,031,751.
    if n < 2:
        return False
    for p in (2, 3, 5, 7):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in (2, 3, 5, 7):
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


@cache
def _primes(count: int) -> tuple[int, ...]:
    # The largest primes below 2^30: a product of two residues is below 2^60, so seven sum within int64.
    found, n = [], 2**30 - 1
    while len(found) < count:
        if _is_prime(n):
            found.append(n)
        n -= 2
    return tuple(found)


# --- the modular recursion ---------------------------------------------------------------------------


def _factors_mod(degree: int, p: int) -> list[np.ndarray]:
    """Word vectors of :math:`C_1, …, C_{degree}` modulo ``p`` (index ``n``: all ``2^n`` words of length ``n``)."""
    inverse = [0] + [pow(k, -1, p) for k in range(1, degree + 1)]
    inverse_factorial = [1] * (degree + 1)
    for k in range(1, degree + 1):
        inverse_factorial[k] = inverse_factorial[k - 1] * inverse[k] % p
    # product[m]: the degree-m part of e^A e^B e^{C_2} ⋯ e^{C_{n-1}}; e^A e^B holds A^a B^b / (a! b!).
    product = [np.ones(1, dtype=np.int64)]
    for m in range(1, degree + 1):
        part = np.zeros(2**m, dtype=np.int64)
        for b in range(m + 1):
            part[2**b - 1] = inverse_factorial[m - b] * inverse_factorial[b] % p
        product.append(part)
    factors = [np.zeros(0, dtype=np.int64), np.ones(2, dtype=np.int64)]
    for n in range(2, degree + 1):
        c = (inverse_factorial[n] - product[n]) % p
        factors.append(c)
        if n == degree:
            break
        powers = [None, c]  # powers[j] = C_n^j / j!, the degree-jn part of e^{C_n}
        for j in range(2, degree // n + 1):
            powers.append(np.multiply.outer(powers[-1], c).ravel() % p * inverse[j] % p)
        for m in range(degree, n - 1, -1):  # from the top: product[m - jn] is still the old one
            total = product[m].copy()
            pending = 1  # summands since the last reduction, each below p² < 2^60: seven fit in int64
            for j in range(1, m // n + 1):
                total += np.multiply.outer(product[m - j * n], powers[j]).ravel()
                pending += 1
                if pending == 7:
                    total %= p
                    pending = 1
            product[m] = total % p
    return factors


@cache
def _lyndon_codes(degree: int) -> np.ndarray:
    words = np.array(lyndon_words(2, degree), dtype=np.int64).reshape(-1, degree)
    return words @ (2 ** np.arange(degree - 1, -1, -1, dtype=np.int64))


def _lift(residues: list[list[int]], primes: tuple[int, ...], denominator: int) -> list[Fraction]:
    # CRT of D·C(w) from its residues (one list per prime), symmetric range, divided by D.
    modulus = math.prod(primes)
    weights = [(modulus // p) * pow(modulus // p, -1, p) for p in primes]
    half = modulus // 2
    out = []
    for column in zip(*residues, strict=True):
        x = sum(w * r for w, r in zip(weights, column, strict=True)) % modulus
        out.append(Fraction(x - modulus if x > half else x, denominator))
    return out


def zassenhaus(degree: int) -> LieSeries:
    r"""Zassenhaus factors :math:`e^{A+B} = e^{A} e^{B} e^{C_2} e^{C_3} \cdots`, each :math:`C_n` homogeneous.

    The returned series holds :math:`C_n` as its degree-``n`` component (degree 1 holds ``A + B``);
    use :meth:`LieSeries.component`.  :math:`C_n = (A+B)^n/n! - [e^A e^B e^{C_2}\cdots e^{C_{n-1}}]_n`,
    computed on all words by dense word vectors in exact multi-modular arithmetic (see the module
    docstring), then solved in the Lyndon basis from its Lyndon-word coefficients.  The work is
    estimated first and ``degree ≤ 21`` is allowed (``zassenhaus(16)`` takes about 0.15 s, 20 about
    3.6 s, 21 about 8.3 s; 22 would take about 24 s), ``degree ≤ 19`` where the engine's compiled kernel
    is not built (16 then takes 0.6 s); see :func:`workbench.lie._budget.zassenhaus_seconds`.

    Examples
    --------
    >>> zassenhaus(3).to_text()
    'A + B - 1/2 [A,B] + 1/6 [A,[A,B]] - 1/3 [[A,B],B]'
    """
    if kernel_available():
        degree = check_budget("degree", check_degree(degree), "zassenhaus", zassenhaus_seconds)
    else:
        degree = check_budget("degree", check_degree(degree), "zassenhaus (no compiled kernel)", _PYTHON_BUDGET)
    coordinates: dict[Word, Fraction] = {(0,): Fraction(1), (1,): Fraction(1)}
    if degree == 1:
        return LieSeries("zassenhaus", 2, degree, coordinates)
    denominators, sizes = _bounds(degree)
    need = 2 * max(d * s for d, s in zip(denominators[2:], sizes[2:], strict=True)) + 1
    count = 1
    while math.prod(_primes(count)) <= need:
        count += 1
    primes = _primes(count + 1)  # the last one only re-checks the lift
    residues: list[list[list[int]]] = [[] for _ in range(degree + 1)]  # [n][prime][Lyndon word]
    for p in primes:  # only the Lyndon-word residues are kept (all words of one prime at a time)
        factors = _factors_mod(degree, p)
        for n in range(2, degree + 1):
            residues[n].append((factors[n][_lyndon_codes(n)] * (denominators[n] % p) % p).tolist())
    check = primes[-1]
    for n in range(2, degree + 1):
        values = _lift(residues[n][:-1], primes[:-1], denominators[n])
        scaled = (v.numerator * (denominators[n] // v.denominator) for v in values)
        if any(x % check != r for x, r in zip(scaled, residues[n][-1], strict=True)):
            raise RuntimeError(f"zassenhaus: the lift of C_{n} disagrees with its check prime (a bound is wrong)")
        coordinates.update(lyndon_coordinates_from_values(2, n, values))
    return LieSeries("zassenhaus", 2, degree, {w: c for w, c in coordinates.items() if c})
