r"""Primitives of :mod:`workbench.nn`: the one offsets validator and the type checks of a layer's input.

Package-internal helpers (no ``__all__`` entry), shared by the banded generators, the exp-Markov and
heat-kernel layers, the gauge transport (offsets), and the Givens, SPD and symplectic layers (input checks).

References
----------
Lie-Exponential Roadmap, "Multiscale banded synthesis" (offsets :math:`\delta`) [SEED].
"""

from __future__ import annotations

from numbers import Integral

import torch

from workbench.memory import check_memory
from workbench.validation import check_finite, check_integer

__all__ = []  # package-internal helpers only


def check_finite_result(what: str, result: torch.Tensor, **inputs: torch.Tensor) -> torch.Tensor:
    """``result`` if every entry is finite; else a ``ValueError`` naming each of ``inputs`` with its largest entry.

    For results of finite inputs that left the float range (a product of entries near 1e300): the message
    follows :func:`workbench.validation.check_finite_output` (whose positional ``x`` cannot also name an input
    called ``x``, the usual name of a layer's input), so the caller learns which argument to rescale.
    """
    bad = ~torch.isfinite(result.detach())
    if not bool(bad.any()):
        return result
    count = int(bad.sum())
    first = tuple(int(i) for i in bad.nonzero()[0])
    plural = "entry" if count == 1 else "entries"
    dtype = str(result.dtype).rsplit(".", 1)[-1]
    shown = ", ".join(f"{name} (max |entry| {float(x.detach().abs().max()):.3g})" for name, x in inputs.items())
    raise ValueError(
        f"{what} overflows {dtype} ({count} non-finite {plural}, first at index {first}) for {shown}; "
        "use smaller inputs"
    )


def check_offsets(offsets, *, n: int | None = None, causal: bool = False, positive: bool = False) -> tuple[int, ...]:
    r"""Offsets as a tuple of distinct nonzero ints; the one offsets validator of :mod:`workbench.nn`.

    ``TypeError`` for something that is not a sequence of integers; ``ValueError`` for bad values: empty, zero,
    repeated, positive when ``causal``, negative when ``positive``, or (if ``n`` is given) :math:`|\delta| > n-1`.
    Without ``n`` an offset may exceed the sequence (its rates are then dropped by :class:`BandedGenerator`).
    """
    if isinstance(offsets, (str, bytes)):
        values = None
    else:
        try:
            values = list(offsets)
        except TypeError:
            values = None
    if values is None:
        raise TypeError(f"offsets must be a non-empty sequence of distinct nonzero integers, got {offsets!r}")
    for o in values:
        if isinstance(o, bool) or not isinstance(o, Integral):
            raise TypeError(f"offsets must hold integers, got {o!r} in {offsets!r}")
    values = [int(o) for o in values]
    if not values or any(o == 0 for o in values) or len(set(values)) != len(values):
        raise ValueError(f"offsets must be a non-empty sequence of distinct nonzero integers, got {tuple(values)}")
    if n is not None:
        for o in values:
            if abs(o) > n - 1:
                raise ValueError(f"offsets must be nonzero integers with |delta| <= n - 1 = {n - 1}, got {o}")
    if causal and any(o > 0 for o in values):
        raise ValueError(
            f"offsets must all be negative when causal=True (position i reads only j = i + offset < i), got {values}"
        )
    if positive and any(o < 0 for o in values):
        raise ValueError(f"offsets must be positive distances of the symmetric band, got {values}")
    return tuple(values)


#: Input dtypes of the layers that form ``matrix_exp`` in the input's dtype (half precision overflows or loses W).
EXP_DTYPES = (torch.float32, torch.float64)


def check_width(name: str, value, low: int, *, matrices: int = 1) -> int:
    """An integer width ``>= low`` whose ``matrices`` float64 ``value × value`` matrices fit in memory."""
    value = check_integer(name, value, low)
    check_memory(f"{matrices} {name}×{name} weight matrices ({name} = {value})", 8.0 * matrices * value * value)
    return value


def check_layer_input(x, *, dtypes: tuple[torch.dtype, ...] | None = None) -> None:
    """Type checks of a layer's input: a real floating torch tensor (``dtypes`` restricts the floating dtypes)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"x must be a real floating-point tensor, got dtype {x.dtype}")
    if dtypes is not None and x.dtype not in dtypes:
        names = " or ".join(str(t) for t in dtypes)
        raise TypeError(
            f"x must have dtype {names} (the layer forms its matrix exponential in the input's dtype), "
            f"got dtype {x.dtype}"
        )


def check_exp_map_input(x, d: int) -> None:
    r"""Checks of the input of a map :math:`x \mapsto e^{M}x` formed densely (SPD, symplectic).

    ``x`` float32/float64 (:data:`EXP_DTYPES`), last dimension ``d``, finite.
    """
    check_layer_input(x, dtypes=EXP_DTYPES)
    if x.ndim < 1 or x.shape[-1] != d:
        raise ValueError(f"x must have last dimension {d}, got shape {tuple(x.shape)}")
    check_finite("x", x.detach())


def check_dtype_device(dtype, device, *, dtypes: tuple[torch.dtype, ...] | None = None):
    """``(dtype, device)`` of a ``to(dtype=..., device=...)`` request, checked: each ``None`` or a valid value.

    ``dtype`` is a floating torch dtype (one of ``dtypes`` when given); ``device`` anything ``torch.device``
    accepts (``"cpu"``, ``"cuda:0"``, an index, a ``torch.device``) that names a device present here.
    """
    if dtype is not None:
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"dtype must be None or a floating torch dtype (e.g. torch.float64), got {dtype!r}")
        if dtypes is not None and dtype not in dtypes:
            names = " or ".join(str(t) for t in dtypes)
            raise TypeError(f"dtype must be None, {names}, got {dtype}")
    if device is not None:
        if isinstance(device, bool) or not isinstance(device, (str, int, torch.device)):
            raise TypeError(f"device must be None, a string, an index or a torch.device, got {type(device).__name__}")
        try:
            device = torch.device(device)
            torch.empty(0, device=device)  # present on this machine (a CUDA index in range, a built backend)
        except (RuntimeError, ValueError, TypeError, AssertionError) as exc:
            raise ValueError(
                f"device must name a torch device present here (e.g. 'cpu', 'cuda:0'), got {device!r}: {exc}"
            ) from None
    return dtype, device
