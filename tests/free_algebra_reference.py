"""The free associative algebra over all words, in exact Fractions: the tests' independent reference.

Truncated products, exponentials and logarithms of elements ``{word: Fraction}``, with no Lyndon words and no
engine: the slow, obvious algorithm the Lie engine's results are compared with (the package's Zassenhaus
factors were computed this way before the engine did them).
"""

from collections import defaultdict
from fractions import Fraction


def product(x: dict, y: dict, degree: int) -> dict:
    out: dict = defaultdict(Fraction)
    for u, a in x.items():
        for v, b in y.items():
            if len(u) + len(v) <= degree:
                out[u + v] += a * b
    return {w: c for w, c in out.items() if c}


def exp(x: dict, degree: int) -> dict:
    # x has no constant term, so x^k starts at degree k.
    total, power = {(): Fraction(1)}, {(): Fraction(1)}
    for k in range(1, degree + 1):
        power = {w: c / k for w, c in product(power, x, degree).items()}
        for w, c in power.items():
            total[w] = total.get(w, Fraction(0)) + c
    return {w: c for w, c in total.items() if c}


def log(y: dict, degree: int) -> dict:
    z = {w: c for w, c in y.items() if w}  # y = 1 + z
    total: dict = defaultdict(Fraction)
    power = {(): Fraction(1)}
    for k in range(1, degree + 1):
        power = product(power, z, degree)
        for w, c in power.items():
            total[w] += Fraction((-1) ** (k + 1), k) * c
    return {w: c for w, c in total.items() if c}
