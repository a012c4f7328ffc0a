r"""Zassenhaus factors :math:`e^{A+B} = e^{A} e^{B} e^{C_2} e^{C_3} \cdots`, in truncated exact arithmetic.

Each :math:`C_n` is homogeneous of degree ``n``.  The factors are computed degree by degree over all
words of the free associative algebra (truncated products, exponentials and logarithms of exact
``Fraction`` elements, never floats), then decomposed in the Lyndon basis; the recursion is stated at
:func:`zassenhaus`.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from workbench.lie._bases import lyndon_coordinates_unchecked
from workbench.lie._budget import check_budget, zassenhaus_seconds
from workbench.lie._free import Word, check_degree
from workbench.lie._series import LieSeries

__all__ = ["zassenhaus"]


def _truncated_product(x: dict, y: dict, degree: int) -> dict:
    out: dict[Word, Fraction] = defaultdict(Fraction)
    for u, a in x.items():
        room = degree - len(u)
        for v, b in y.items():
            if len(v) <= room:
                out[u + v] += a * b
    return {w: c for w, c in out.items() if c}


def _truncated_exp(x: dict, degree: int) -> dict:
    # x has no constant term, so x^k starts at degree k.
    total = {(): Fraction(1)}
    power = {(): Fraction(1)}
    for k in range(1, degree + 1):
        power = {w: c / k for w, c in _truncated_product(power, x, degree).items()}
        for w, c in power.items():
            total[w] = total.get(w, Fraction(0)) + c
    return {w: c for w, c in total.items() if c}


def _truncated_log(y: dict, degree: int) -> dict:
    z = {w: c for w, c in y.items() if w}  # y = 1 + z
    total: dict[Word, Fraction] = defaultdict(Fraction)
    power = {(): Fraction(1)}
    for k in range(1, degree + 1):
        power = _truncated_product(power, z, degree)
        for w, c in power.items():
            total[w] += Fraction((-1) ** (k + 1), k) * c
    return {w: c for w, c in total.items() if c}


def zassenhaus(degree: int) -> LieSeries:
    r"""Zassenhaus factors :math:`e^{A+B} = e^{A} e^{B} e^{C_2} e^{C_3} \cdots`, each :math:`C_n` homogeneous.

    The returned series holds :math:`C_n` as its degree-``n`` component (degree 1 holds ``A + B``);
    use :meth:`LieSeries.component`.  Recursion: :math:`R_1 = \log(e^{-B}e^{-A}e^{A+B})`,
    :math:`C_n = (R_{n-1})_n`, :math:`R_n = \log(e^{-C_n} e^{R_{n-1}})`, in truncated exact arithmetic
    over all words, which limits it to moderate degrees: the work (about :math:`d\,4^{d+1}` word pairs)
    is estimated first and ``degree ≤ 11`` is allowed (``zassenhaus(11)`` takes about 9.5 s, 12 would
    take about 40 s; see :mod:`workbench.lie._budget`).

    Examples
    --------
    >>> zassenhaus(3).to_text()
    'A + B - 1/2 [A,B] + 1/6 [A,[A,B]] - 1/3 [[A,B],B]'
    """
    degree = check_budget("degree", check_degree(degree), "zassenhaus", zassenhaus_seconds)
    a, b = {(0,): Fraction(1)}, {(1,): Fraction(1)}
    product = _truncated_product(
        _truncated_product(
            _truncated_exp({(1,): Fraction(-1)}, degree), _truncated_exp({(0,): Fraction(-1)}, degree), degree
        ),
        _truncated_exp({(0,): Fraction(1), (1,): Fraction(1)}, degree),
        degree,
    )
    remainder = _truncated_log(product, degree)
    coordinates = {**lyndon_coordinates_unchecked(dict(a)), **lyndon_coordinates_unchecked(dict(b))}
    for n in range(2, degree + 1):
        c_n = {w: c for w, c in remainder.items() if len(w) == n}
        coordinates.update(lyndon_coordinates_unchecked(dict(c_n)))
        if n < degree:
            negative = {w: -c for w, c in c_n.items()}
            remainder = _truncated_log(
                _truncated_product(_truncated_exp(negative, degree), _truncated_exp(remainder, degree), degree),
                degree,
            )
    return LieSeries("zassenhaus", 2, degree, {w: c for w, c in coordinates.items() if c})
