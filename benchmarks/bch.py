"""BCH in the Lyndon basis: the exact engine against a naive sympy expansion of log(e^A e^B).

Baseline: what a user would write in sympy — noncommutative symbols, the truncated series
log(1 + X) = Σ (−1)^{k+1} X^k / k with X = e^A e^B − 1, expanded degree by degree (this yields word
coefficients only; projecting them onto a Lie basis would cost more on top).  Each measurement runs in
a fresh interpreter; the baseline is abandoned past its time limit.  Both sides are checked to agree
(the engine's series expanded to words equals sympy's, compared by fingerprint) wherever the baseline
finishes; the engine is timed on ``bch(degree)`` alone, the expansion for the check is not counted.
"""

from __future__ import annotations

import hashlib
import platform

from benchmarks._timing import timed_in_fresh_process

#: The ``run`` keywords ``workbench bench bch`` accepts (``--max-degree``).
OPTIONS = ("max_degree",)

#: Highest degree ``run`` accepts.  RESULTS.md measures degree 20 at ~5 s and ~0.3 GB, and every two degrees
#: cost ~5x more time and memory, so degree 24 is already minutes and gigabytes per measurement.
MAX_DEGREE = 24


def _fingerprint(words: dict[str, str]) -> str:
    return hashlib.sha256(repr(sorted(words.items())).encode()).hexdigest()


def engine(degree: int, expand: bool) -> dict:
    import resource
    import time

    from workbench.lie import bch

    start = time.perf_counter()
    series = bch(degree)
    out = {
        "seconds": time.perf_counter() - start,
        "nonzero": sum(series.nonzero_per_degree()),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # whole interpreter, Linux KiB
    }
    if expand:  # only where the baseline can be compared: word expansion is not part of the timing target
        out["words"] = _fingerprint({"".join("AB"[i] for i in w): str(c) for w, c in series.to_words().items()})
    return out


def naive_sympy(degree: int) -> dict:
    import sympy as sp

    a, b = sp.symbols("A B", commutative=False)
    t = sp.Symbol("t")

    def t_power(term):
        return sp.degree(sp.Mul(*term.args_cnc()[0]), t)

    def truncate(expr):
        return sp.Add(*[term for term in sp.Add.make_args(sp.expand(expr)) if t_power(term) <= degree])

    exp_a = sum((a**p * t**p / sp.factorial(p) for p in range(degree + 1)), sp.Integer(0))
    exp_b = sum((b**q * t**q / sp.factorial(q) for q in range(degree + 1)), sp.Integer(0))
    x = truncate(exp_a * exp_b) - 1
    total, power = sp.Integer(0), sp.Integer(1)
    for k in range(1, degree + 1):
        power = truncate(power * x)
        total += sp.Rational((-1) ** (k + 1), k) * power
    total = sp.expand(total.subs(t, 1))
    words = {}
    for term in sp.Add.make_args(total):
        coefficient, factors = term.args_cnc()
        word = "".join(str(f.as_base_exp()[0]) * int(f.as_base_exp()[1]) for f in factors)
        words[word] = str(sp.Mul(*coefficient))
    return {"words": _fingerprint(words)}


def run(max_degree: int = 12, baseline_limit: float = 60.0, engine_limit: float = 600.0) -> dict:
    if isinstance(max_degree, bool) or not isinstance(max_degree, int) or not 2 <= max_degree <= MAX_DEGREE:
        raise ValueError(f"max_degree must be an integer in [2, {MAX_DEGREE}], got {max_degree!r}")
    rows = []
    baseline_alive = True
    for degree in range(2, max_degree + 1):
        ours = timed_in_fresh_process(engine, (degree, baseline_alive), engine_limit)
        if ours is None:
            rows.append([degree, "> limit", "—", "—", "—", "—"])
            break
        _, result = ours
        seconds = result["seconds"]
        base_seconds, agree = None, "—"
        if baseline_alive:
            base = timed_in_fresh_process(naive_sympy, (degree,), baseline_limit)
            if base is None:
                baseline_alive = False
            else:
                base_seconds = base[0]
                agree = "yes" if base[1]["words"] == result["words"] else "NO"
        ratio = f"{base_seconds / seconds:.0f}×" if base_seconds else "—"
        rows.append([
            degree,
            f"{seconds:.3f}",
            f"{result['peak_mb']:.0f}",
            f"{base_seconds:.2f}" if base_seconds else f"> {baseline_limit:g}",
            ratio,
            f"{result['nonzero']} nonzero; agree: {agree}",
        ])  # fmt: skip
    return {
        "title": "BCH log(e^A e^B), Lyndon basis: exact engine vs naive sympy expansion",
        "columns": ["degree", "engine s", "engine peak MB", "sympy s", "sympy/engine", "check"],
        "rows": rows,
        "notes": f"{platform.machine()}, fresh interpreter per measurement; sympy abandoned past {baseline_limit:g} s",
    }
