"""The torch bridge: a per-call array namespace for numpy and torch inputs.

Every numeric function in the workbench infers its array namespace from its
inputs at call time (never from a global switch), so numpy and torch code can
run side by side.  Namespaces come from :mod:`array_api_compat`, which gives
both libraries the Array API surface (``xp.sum``, ``xp.exp``, ``xp.linalg``...).
dtype and device are carried from the inputs.  torch is only imported when a
torch tensor is passed in, or when :func:`to_backend` is asked for one, so
``import workbench`` stays light.

The few operations the Array API lacks (the dense matrix exponential) are
dispatched here, in one place.
"""

from __future__ import annotations

import importlib.util
import math
from typing import Any

import array_api_compat
import numpy as np

from workbench.memory import check_memory

__all__ = [
    "BACKENDS",
    "REQUIRED_OPERATIONS",
    "available_backends",
    "check_view_size",
    "distinct_entries",
    "host_array",
    "like",
    "matrix_exp",
    "namespace",
    "to_backend",
    "to_numpy",
    "unit_roundoff",
]

#: The backend labels understood by :func:`to_backend` and the check runner.
BACKENDS = ("numpy", "torch:cpu", "torch:cuda")

#: Namespace members the numeric code relies on; a test asserts every backend has them.
REQUIRED_OPERATIONS = (
    "abs",
    "all",
    "any",
    "asarray",
    "eye",
    "exp",
    "expm1",
    "isfinite",
    "linalg",
    "log",
    "matmul",
    "max",
    "min",
    "ones",
    "reshape",
    "sqrt",
    "sum",
    "where",
    "zeros",
)


def _is_array(x: Any) -> bool:
    return array_api_compat.is_numpy_array(x) or array_api_compat.is_torch_array(x)


def namespace(*arrays: Any, **named: Any):
    """Return the Array API namespace shared by ``arrays`` and ``named``.

    Python scalars and ``None`` are ignored; lists and tuples count as numpy.  Inputs passed by keyword are
    named in error messages by their keyword (a public function passes its parameters that way, so a refusal
    says ``W_Q must be …``); positional inputs are named by position.

    Parameters
    ----------
    *arrays
        The inputs of one public call.
    **named
        More inputs, each under the parameter name a message should use.

    Returns
    -------
    module
        ``array_api_compat.numpy`` or ``array_api_compat.torch``.

    Raises
    ------
    TypeError
        If numpy arrays and torch tensors are mixed in one call, or if an input is of an
        array library the workbench does not support.

    Examples
    --------
    >>> import numpy as np
    >>> namespace(np.ones(3), 2.0).__name__
    'array_api_compat.numpy'
    >>> namespace(W_Q="not an array")
    Traceback (most recent call last):
    ...
    TypeError: W_Q must be a numpy array or a torch tensor, got builtins.str
    """
    inputs = [*((f"argument {position}", x) for position, x in enumerate(arrays)), *named.items()]
    if all(isinstance(x, (np.ndarray, np.generic, float, int)) or x is None for _, x in inputs):
        return _numpy_namespace()  # fast path: the common all-numpy call
    kinds: dict[str, str] = {}
    for name, x in inputs:
        if x is None or isinstance(x, (bool, int, float, complex, list, tuple)):
            if isinstance(x, (list, tuple)):
                kinds.setdefault("numpy", f"{name} (list)")
            continue
        if array_api_compat.is_numpy_array(x):
            kinds.setdefault("numpy", f"{name} ({type(x).__name__})")
        elif array_api_compat.is_torch_array(x):
            kinds.setdefault("torch", f"{name} ({type(x).__name__})")
        else:
            raise TypeError(
                f"{name} must be a numpy array or a torch tensor, got {type(x).__module__}.{type(x).__name__}"
            )
    if len(kinds) > 1:
        raise TypeError(
            "inputs mix array libraries: numpy from "
            f"{kinds['numpy']} and torch from {kinds['torch']}; convert them to one library "
            "(workbench.backend.to_backend)"
        )
    if "torch" in kinds:
        import array_api_compat.torch as xp_torch

        return xp_torch
    return _numpy_namespace()


def _numpy_namespace():
    import array_api_compat.numpy as xp_numpy

    return xp_numpy


def available_backends() -> tuple[str, ...]:
    """Return the backends usable on this machine, in :data:`BACKENDS` order.

    ``numpy`` is always available; ``torch:cpu`` when torch is installed; ``torch:cuda``
    when torch also sees a CUDA device.  Checking for CUDA imports torch.

    Examples
    --------
    >>> available_backends()[0]
    'numpy'
    """
    found = ["numpy"]
    if importlib.util.find_spec("torch") is not None:
        found.append("torch:cpu")
        import torch

        if torch.cuda.is_available():
            found.append("torch:cuda")
    return tuple(found)


def to_backend(x: Any, backend: str):
    """Convert an array-like to ``backend`` (one of :data:`BACKENDS`), keeping float64.

    Parameters
    ----------
    x : array_like
        A numpy array, list or scalar.
    backend : {'numpy', 'torch:cpu', 'torch:cuda'}
        The target library and device.

    Returns
    -------
    numpy.ndarray or torch.Tensor

    Examples
    --------
    >>> to_backend([1.0, 2.0], "numpy").dtype
    dtype('float64')
    """
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    array = host_array("x", x) if not isinstance(x, np.ndarray) else x
    if backend == "numpy":
        return array
    import torch

    device = backend.split(":", 1)[1]
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("backend 'torch:cuda' needs a CUDA device, and torch sees none")
    return torch.as_tensor(array, device=device)


def to_numpy(x: Any) -> np.ndarray:
    """Return ``x`` as a numpy array (a torch tensor is detached and moved to the host).

    Examples
    --------
    >>> to_numpy([1, 2]).tolist()
    [1, 2]
    """
    return host_array("x", x)


def host_array(name: str, x: Any) -> np.ndarray:
    """``x`` as a numpy array (a torch tensor detached and moved to the host); a ragged list is a ``TypeError``.

    numpy's own refusal of a ragged nested list ("setting an array element with a sequence …") names no
    parameter; this one names ``name``.

    Examples
    --------
    >>> host_array("ids", [[1, 2], [3]])
    Traceback (most recent call last):
        ...
    TypeError: ids must be an array or a nested list of equal-length rows, got a ragged list
    """
    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    try:
        return np.asarray(x)
    except ValueError as exc:  # numpy refuses an inhomogeneous nested sequence with a ValueError
        raise TypeError(
            f"{name} must be an array or a nested list of equal-length rows, got a ragged {type(x).__name__}"
        ) from exc


def like(x: Any, reference: Any):
    """Return the host array ``x`` in the library, dtype and device of the array ``reference``.

    NaN and infinite entries are copied as they are; a finite entry beyond the range of a narrower
    floating dtype (1e300 into ``float32``) is a ``ValueError`` that names ``x``, never a new ``inf``.

    Examples
    --------
    >>> like(np.array([1.5]), np.zeros(1, dtype=np.float32)).dtype
    dtype('float32')
    """
    namespace(reference=reference)
    host = host_array("x", x)
    check_view_size("x", host)
    target = reference.dtype if array_api_compat.is_torch_array(reference) else host_array("reference", reference).dtype
    reference_complex = reference.is_complex() if array_api_compat.is_torch_array(reference) else target.kind == "c"
    if host.dtype.kind not in "fiubc":
        raise TypeError(f"x must be a numeric array, got dtype {host.dtype}")
    if host.dtype.kind == "c" and not reference_complex:
        raise TypeError(f"x must be real-valued to take the real dtype {target} of reference, got dtype {host.dtype}")
    if array_api_compat.is_torch_array(reference):
        import torch

        out = torch.as_tensor(host, dtype=reference.dtype, device=reference.device)
        narrower = (out.is_floating_point() or out.is_complex()) and host.dtype.kind in "fc"
        if narrower and torch.finfo(out.dtype).max < np.finfo(host.dtype).max:
            _check_cast("x", host, out.detach().cpu().numpy())
        return out
    if target.kind not in "fc":
        return host.astype(target, copy=False)
    with np.errstate(over="ignore"):  # an overflowing cast to a narrower float is refused just below
        out = host.astype(target, copy=False)
    _check_cast("x", host, out)
    return out


def check_view_size(name: str, x) -> None:
    """Refuse a view whose repeated strides make it read as more memory than the budget (see :mod:`.memory`).

    ``np.broadcast_to`` and ``torch.expand`` make views with a stride of 0: a 10⁹-row view of one point takes
    16 bytes but reads as 16 GB, and every routine that computes on it makes float64 arrays of that size.  Such
    a view is held to the memory budget at its full size before any work starts; an ordinary array, whose
    memory is already taken, is not.

    Examples
    --------
    >>> from workbench.memory import memory_limit
    >>> with memory_limit("1GiB"):
    ...     check_view_size("points", np.broadcast_to(np.zeros(2), (10**9, 2)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: points (a view of shape (1000000000, 2) with repeated strides) needs about 15 GiB, more than ...
    """
    strides = _strides(x)
    if strides is None:
        return
    shape = tuple(int(s) for s in x.shape)
    if not any(stride == 0 and size > 1 for stride, size in zip(strides, shape, strict=True)):
        return
    check_memory(
        f"{name} (a view of shape {shape} with repeated strides)",
        math.prod(shape) * 8.0,
        "pass the distinct rows instead",
    )


def _strides(x) -> tuple[int, ...] | None:
    if isinstance(x, np.ndarray):
        return x.strides
    if array_api_compat.is_torch_array(x) and str(x.layout) == "torch.strided":
        return tuple(x.stride())
    return None


def distinct_entries(x):
    """``x`` with every stride-0 axis cut to length 1: the entries a repeated view holds, each once.

    Checks of every entry (finite, nonnegative) are exact on this part, at the cost of the memory behind it.

    Examples
    --------
    >>> distinct_entries(np.broadcast_to(np.arange(3.0), (10**9, 3))).shape
    (1, 3)
    """
    strides = _strides(x)
    if strides is None or 0 not in strides:
        return x
    return x[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in strides)]


def _check_cast(name: str, host: np.ndarray, out: np.ndarray) -> None:
    # A finite entry that a narrower float dtype turns into ±inf (1e300 in float32) is a refusal, not an inf.
    if host.dtype.kind not in "fc" or out is host:
        return
    lost = np.isfinite(host) & ~np.isfinite(out)
    if lost.any():
        first = tuple(int(i) for i in np.argwhere(lost)[0])
        raise ValueError(
            f"{name} has entries beyond the range of {out.dtype} (largest |{name}| = {np.abs(host[lost]).max():.3g}, "
            f"first at index {first}); rescale {name} or use a wider dtype"
        )


def unit_roundoff(x: Any) -> float:
    r"""The unit roundoff :math:`u = \varepsilon/2` of the floating dtype of ``x`` (an array or a dtype).

    Single precision (``float32``, ``complex64``) gives :math:`2^{-24}`; everything else, double
    precision included, :math:`2^{-53}` (integers are computed in double precision here).

    Examples
    --------
    >>> unit_roundoff(np.zeros(2, dtype=np.float32)) == 2.0**-24, unit_roundoff(np.float64) == 2.0**-53
    (True, True)
    """
    dtype = x if isinstance(x, type) else getattr(x, "dtype", x)
    if not array_api_compat.is_torch_array(x) and "torch" not in str(type(dtype)):
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"x must be an array or a dtype, got {type(x).__name__}") from None
    return 2.0**-24 if str(dtype).rsplit(".", 1)[-1] in ("float32", "complex64") else 2.0**-53


def matrix_exp(matrix):
    """Dense matrix exponential of a matrix or a stack ``shape=[..., n, n]``.

    Dispatches to :func:`scipy.linalg.expm` (numpy) or :func:`torch.linalg.matrix_exp`
    (torch); both are scaling-and-squaring Padé methods (Al-Mohy & Higham 2009).

    Examples
    --------
    >>> import numpy as np
    >>> float(matrix_exp(np.zeros((2, 2)))[0, 0])
    1.0
    """
    xp = namespace(matrix=matrix)
    shape = tuple(int(s) for s in getattr(matrix, "shape", ()))
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"matrix must be a square matrix or a stack of them (shape [..., n, n]), got shape {shape}")
    kind = (
        "c" if array_api_compat.is_torch_array(matrix) and matrix.is_complex() else getattr(matrix.dtype, "kind", "f")
    )
    if kind not in "fiubc":
        raise TypeError(f"matrix must be a numeric array, got dtype {matrix.dtype}")
    if not bool(xp.all(xp.isfinite(matrix))):
        raise ValueError("matrix must be finite, got a NaN or infinite entry")
    if array_api_compat.is_torch_array(matrix):
        import torch

        result = torch.linalg.matrix_exp(matrix)
    else:
        import scipy.linalg

        with np.errstate(over="ignore", invalid="ignore"):  # a non-finite exponential is refused just below
            result = scipy.linalg.expm(matrix)
    if not bool(xp.all(xp.isfinite(result))):
        size = float(xp.max(xp.abs(matrix)))
        raise ValueError(
            f"matrix_exp(matrix) is not finite in {str(result.dtype).rsplit('.', 1)[-1]} for matrix with largest "
            f"|entry| {size:.3g}: the exponential overflows (or scaling and squaring loses it); rescale matrix"
        )
    return result
