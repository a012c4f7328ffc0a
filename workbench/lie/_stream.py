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
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import TextIO

from workbench.lie._fast import Level
from workbench.lie._free import NAMES
from workbench.lie._words import standard_factor_positions

__all__ = ["write_series_json"]

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
    for k, v in zip(level.positions.tolist(), level.numerators.tolist(), strict=True):
        g = math.gcd(v, d)
        coefficient = str(v // g) if g == d else f"{v // g}/{d // g}"
        yield _TERM % (brackets[k], coefficient, degree, "")


def series_terms(series, basis: str) -> Iterator[str]:
    """The JSON texts of a computed :class:`~workbench.lie.LieSeries`'s terms in ``basis`` (any series)."""
    for term in series.to_json(basis)["terms"]:
        extra = f',\n      "h_power": {term["h_power"]}' if "h_power" in term else ""
        yield _TERM % (term["bracket"], term["coefficient"], term["degree"], extra)


def write_series_json(out: TextIO, header: dict, terms: Iterable[str]) -> None:
    r"""Write ``{**header, "terms": [...]}`` as ``json.dumps(…, indent=2)`` would, one term at a time.

    ``terms`` yields each term's JSON text at the list's nesting (:func:`level_terms`, :func:`series_terms`),
    so a long series is written while it is produced and never held as one document.

    Examples
    --------
    >>> import io, json
    >>> from workbench.lie import bch
    >>> out = io.StringIO()
    >>> series = bch(3)
    >>> header = {k: v for k, v in series.to_json().items() if k != "terms"}
    >>> write_series_json(out, header, series_terms(series, "lyndon"))
    >>> out.getvalue() == json.dumps(series.to_json(), indent=2) + "\n"
    True
    """
    if not callable(getattr(out, "write", None)):
        raise TypeError(f"out must be a writable text stream (with .write), got {type(out).__name__}")
    if not isinstance(header, Mapping) or not all(isinstance(k, str) for k in header) or "terms" in header:
        raise TypeError(
            f"header must be a dict of str keys without 'terms' (the document's other fields), got {header!r}"
        )
    if isinstance(terms, str | bytes) or not isinstance(terms, Iterable):
        raise TypeError(f"terms must be an iterable of JSON texts (one per term), got {type(terms).__name__}")
    try:
        opening = json.dumps({**header, "terms": []}, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"header must hold JSON values (strings, numbers, lists), got {header!r}: {error}") from None
    closing = "[]\n}"
    out.write(opening[: -len(closing)])
    first = True
    for i, text in enumerate(terms):
        if not isinstance(text, str):
            raise TypeError(f"terms[{i}] must be a term's JSON text (str), got {type(text).__name__}")
        out.write("[\n" if first else ",\n")
        out.write(text)
        first = False
    out.write("[]\n}\n" if first else "\n  ]\n}\n")
