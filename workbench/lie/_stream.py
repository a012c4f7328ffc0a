r"""A Lie series written as JSON while it is computed: the streaming form of ``workbench derive --format json``.

The document is exactly ``json.dumps(series.to_json(basis), indent=2)`` (the contract of DESIGN.md), but its
terms are written degree by degree as the engine produces them: in the Lyndon basis the BCH family never
builds its ``{word: Fraction}`` dict, only one integer level per degree
(:func:`~workbench.lie._bch.increasing_log_levels`), and brackets are rendered from the standard factorisations
of whole degrees at once (:func:`lyndon_brackets`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from functools import cache
from typing import TextIO

from workbench.lie._bases import BASES
from workbench.lie._bch import check_increasing_log, increasing_log_levels
from workbench.lie._fast import Level
from workbench.lie._free import NAMES, check_degree, check_integer
from workbench.lie._series import LieSeries
from workbench.lie._words import standard_factor_positions

__all__ = ["write_bch_json", "write_series_json"]

# One term of the "terms" list at json.dumps(indent=2) nesting; brackets (letters, commas, brackets) and
# coefficients (digits, '-', '/') never need JSON escapes.
_TERM = '    {\n      "bracket": "%s",\n      "coefficient": "%s",\n      "degree": %d%s\n    }'


@cache
def lyndon_brackets(n_letters: int, degree: int) -> tuple[str, ...]:
    """The standard bracketings ``P_w`` of the Lyndon words of ``degree`` as text, in Lyndon order (unchecked).

    Examples
    --------
    >>> lyndon_brackets(2, 4)
    ('[A,[A,[A,B]]]', '[A,[[A,B],B]]', '[[[A,B],B],B]')
    """
    if degree == 1:
        return tuple(NAMES[:n_letters])
    left_len, left, right = standard_factor_positions(n_letters, degree)
    lower = [(), *(lyndon_brackets(n_letters, ell) for ell in range(1, degree))]
    return tuple(
        f"[{lower[p][a]},{lower[degree - p][b]}]"
        for p, a, b in zip(left_len.tolist(), left.tolist(), right.tolist(), strict=True)
    )


def level_terms(n_letters: int, level: Level) -> Iterator[str]:
    """The JSON texts of one level's terms (Lyndon basis), in Lyndon order."""
    brackets = lyndon_brackets(n_letters, level.degree)
    d, degree = level.denominator, level.degree
    for k, v in zip(level.positions, level.numerators, strict=True):
        g = math.gcd(v, d)
        coefficient = str(v // g) if g == d else f"{v // g}/{d // g}"
        yield _TERM % (brackets[k], coefficient, degree, "")


def series_terms(series, basis: str) -> Iterator[str]:
    """The JSON texts of a computed :class:`~workbench.lie.LieSeries`'s terms in ``basis`` (any series)."""
    for term in series.to_json(basis)["terms"]:
        extra = f',\n      "h_power": {term["h_power"]}' if "h_power" in term else ""
        yield _TERM % (term["bracket"], term["coefficient"], term["degree"], extra)


def write_series_json(out: TextIO, series: LieSeries, basis: str = "lyndon") -> None:
    r"""Write a computed series as ``json.dumps(series.to_json(basis), indent=2)`` (plus a newline), term by term.

    Examples
    --------
    >>> import io, json
    >>> from workbench.lie import bch
    >>> out = io.StringIO()
    >>> write_series_json(out, bch(3))
    >>> out.getvalue() == json.dumps(bch(3).to_json(), indent=2) + "\n"
    True
    """
    _check_stream(out)
    if not isinstance(series, LieSeries):
        raise TypeError(f"series must be a LieSeries (bch(5), zassenhaus(6), …), got {type(series).__name__}")
    from workbench.validation import check_choice

    check_choice("basis", basis, BASES)
    header = {k: v for k, v in series.to_json("lyndon").items() if k != "terms"} | {"basis": basis}
    write_document(out, header, series_terms(series, basis))


def write_bch_json(out: TextIO, degree: int, n_factors: int = 2) -> None:
    r"""Write :math:`\log(e^{A_1}\cdots e^{A_k})` (``bch(degree)``, or ``bch_many(n_factors, degree)``) as JSON.

    The document is ``json.dumps(bch(degree).to_json(), indent=2)`` (Lyndon basis), written while the engine
    computes it: one integer level per degree, never the series' ``{word: Fraction}`` dict, so the cost is the
    engine's alone (``workbench derive bch --format json``).  The degree is held to the same memory ceiling as
    :func:`~workbench.lie.bch` (see :func:`~workbench.lie.bch_cost`).

    Examples
    --------
    >>> import io, json
    >>> from workbench.lie import bch_many
    >>> out = io.StringIO()
    >>> write_bch_json(out, 4, n_factors=3)
    >>> json.loads(out.getvalue()) == bch_many(3, 4).to_json()
    True
    """
    _check_stream(out)
    degree = check_degree(degree)
    n_factors = check_integer("n_factors", n_factors, 2, len(NAMES))
    name = "bch" if n_factors == 2 else f"bch{n_factors}"
    check_increasing_log(degree, n_factors, name)
    header = {"series": name, "degree": degree, "basis": "lyndon", "generators": list(NAMES[:n_factors])}
    levels = increasing_log_levels(n_factors, degree)
    write_document(out, header, (text for level in levels for text in level_terms(n_factors, level)))


def _check_stream(out) -> None:
    if not callable(getattr(out, "write", None)):
        raise TypeError(f"out must be a writable text stream (with .write), got {type(out).__name__}")


def write_document(out: TextIO, header: dict, terms: Iterable[str]) -> None:
    """Write ``{**header, "terms": [...]}`` as ``json.dumps(…, indent=2)`` would, one term's text at a time."""
    opening = json.dumps({**header, "terms": []}, indent=2, ensure_ascii=False)
    closing = "[]\n}"
    out.write(opening[: -len(closing)])
    first = True
    for text in terms:
        out.write("[\n" if first else ",\n")
        out.write(text)
        first = False
    out.write("[]\n}\n" if first else "\n  ]\n}\n")
