r"""Krylov approximation of :math:`e^{tA}B` with time stepping: Lanczos (symmetric) or Arnoldi.

For a unit vector :math:`v`, :math:`m` steps of the Arnoldi process give an orthonormal
:math:`V_{m+1} = [v_1, \dots, v_{m+1}]` and an upper Hessenberg :math:`H_m` with
:math:`AV_m = V_m H_m + h_{m+1,m} v_{m+1} e_m^\top` (tridiagonal and symmetric for symmetric
:math:`A`: the Lanczos process).  Saad's *corrected* approximation is

.. math::

    e^{\tau A}v \approx V_m e^{\tau H_m} e_1 + \tau h_{m+1,m}\,
    \bigl(e_m^\top \varphi_1(\tau H_m) e_1\bigr)\, v_{m+1},
    \qquad \varphi_1(z) = \frac{e^z - 1}{z},

and its error expands as :math:`\tau h_{m+1,m} \sum_{j \ge 2} (e_m^\top\varphi_j(\tau H_m)e_1)\,
(\tau A)^{j-1} v_{m+1}` (Saad 1992, Theorem 5.1).  Both the approximation and the first two terms
come from one small exponential: with the augmented matrix

.. math::

    \bar H = \begin{pmatrix} H_m & 0 & 0 \\ h_{m+1,m} e_m^\top & 0 & 0 \\ 0 & 1 & 0 \end{pmatrix}
    \in \mathbb R^{(m+2)\times(m+2)},\qquad
    F = e^{\tau \bar H},

the approximation is :math:`\beta V_{m+1} F_{1:m+1,\,1}` and the a-posteriori estimates are
:math:`\mathrm{err}_1 = \beta |F_{m+1,1}|` (the correction) and :math:`\mathrm{err}_2 = \beta
|F_{m+2,1}|\,\lVert A v_{m+1}\rVert` (the first neglected term) (Sidje 1998, §2–3, Expokit).

Large :math:`\lVert tA\rVert` is handled by time stepping: :math:`e^{tA}B` is advanced by sub-steps
:math:`\tau` chosen so that each local error estimate is at most :math:`\tau/|t|` times the
tolerance, with Expokit's step-size controller.  Two departures from Expokit: the space may stop
growing before :math:`m` once it already reaches :math:`t` (checked at a few dimensions, at no extra
product), and for Lanczos the leading part of :math:`e^{\tau H}e_1` comes from the eigenvalues of the
tridiagonal :math:`H` (full relative accuracy; scaling and squaring loses digits at large
:math:`\tau\lVert H\rVert`).

References
----------
Y. Saad, "Analysis of some Krylov subspace approximations to the matrix exponential operator",
SIAM J. Numer. Anal. 29 (1992) 209–228, §4–5.  R. B. Sidje, "Expokit: a software package for computing
matrix exponentials", ACM Trans. Math. Softw. 24 (1998) 130–156, §2–3 (the estimates and the step
control).  M. Hochbruck and C. Lubich, SIAM J. Numer. Anal. 34 (1997) 1911–1925 (convergence).
"""

from __future__ import annotations

import math
import warnings
from contextlib import nullcontext

import array_api_compat
import numpy as np
import scipy.linalg

from workbench.backend import like, namespace, to_numpy, unit_roundoff
from workbench.expmv._blocks import as_block, finish, scale_by_power_of_two
from workbench.expmv._linear import AccuracyWarning, LinearMap, as_linear_map
from workbench.validation import check_in_range, check_integer

__all__ = ["expmv_krylov"]

# Expokit's step-size controller: safety factor γ and the rounding of τ to two significant digits.
_GAMMA = 0.9

#: The factor on the sampled rounding amplification of a non-normal step (:func:`_sensitivity`): a random
#: direction sees a directional derivative below the derivative's norm, by up to ~10× in the tests' cases.
_SENSITIVITY_MARGIN = 10.0


def _round_step(tau: float) -> float:
    """Round a step up to two significant digits (Expokit), which keeps steps from drifting in the last digits."""
    if not math.isfinite(tau) or tau <= 0.0:
        return tau
    unit = 10.0 ** (math.floor(math.log10(tau)) - 1)
    return math.ceil(tau / unit) * unit


def _contiguous(x):
    """A C-contiguous copy of a transposed view (for the products of sparse operators)."""
    if array_api_compat.is_torch_array(x):
        return x.contiguous()
    return np.ascontiguousarray(x)


def _column_norms(xp, x, axis: int):
    r"""Euclidean norms along ``axis``, scaled by the largest entry so that they neither underflow nor overflow.

    :math:`\lVert x\rVert = s\,\lVert x/s\rVert` with :math:`s = \max|x_i|`: a plain sum of squares
    loses :math:`|x| < 10^{-154}` to underflow and overflows past :math:`10^{154}` (reproducer 4:
    ``B = [1e-170, 0]`` came back unchanged).
    """
    size = xp.abs(x)  # real, also for a complex block
    peak = xp.max(size, axis=axis)
    safe = xp.where(peak > 0, peak, xp.ones_like(peak))
    scaled = size / (safe[None, :] if axis == 0 else safe[:, None])
    return peak * xp.sqrt(xp.sum(scaled * scaled, axis=axis))


def _host_norm(x: np.ndarray) -> float:
    """The Frobenius norm of a host array, scaled like :func:`_column_norms`."""
    size = np.abs(x)
    peak = float(np.max(size)) if x.size else 0.0
    if peak == 0.0 or not math.isfinite(peak):
        return peak
    return peak * float(np.sqrt(np.sum((size / peak) ** 2)))


#: Krylov dimensions at which the process pauses to ask whether the space is already large enough.
_CHECKPOINTS = (4, 6, 8, 10, 12, 15, 18, 22, 26, 30, 36, 42, 50, 60, 70, 85, 100, 120, 150, 200, 250, 300, 400)


def _krylov_basis(op: LinearMap, w, beta, m: int, lanczos: bool, basis, enough=None):
    r"""Run up to ``m`` Arnoldi (or Lanczos) steps for every column of ``w`` at once.

    ``basis`` (shape ``[k, m+1, n]``) receives :math:`v_1, \dots, v_{d+1}` as rows.  At the dimensions
    in ``_CHECKPOINTS`` the product :math:`Av_{d+1}` that would extend the space also gives
    :math:`\lVert Av_{d+1}\rVert`, all the error estimate needs: ``enough(H, d, av_norm)`` may then
    stop the process at dimension :math:`d` without a wasted product.

    Returns ``(H, av_norm, d, products, invariant)``: ``H`` on the host, shape ``[k, d+1, d]``;
    ``av_norm`` the host vector :math:`\lVert Av_{d+1}\rVert`; ``invariant`` when every column's
    process ended (a new vector below ``16·√m·u`` times :math:`\lVert Av_j\rVert`): the space is
    invariant and the approximation exact.  A column that ends alone gets zero vectors from there
    on, so its :math:`H` stays decoupled and it contributes no error.
    """
    xp = namespace(w)
    k = int(w.shape[1])
    device = array_api_compat.device(w)
    eps = unit_roundoff(w)
    threshold = 16.0 * math.sqrt(m) * eps
    safe_beta = xp.where(beta > 0, beta, xp.ones_like(beta))
    v = xp.where(beta[None, :] > 0, w / safe_beta[None, :], xp.zeros_like(w))  # [n, k]
    basis[:, 0, :] = xp.permute_dims(v, (1, 0))
    h_cols = []  # columns of H, each [k, m+1] on the device
    complex_data = "complex" in str(w.dtype)
    host_dtype = np.complex128 if complex_data and not lanczos else np.float64

    def host(d):
        # Lanczos on a Hermitian A has a real tridiagonal H (α_j = v_j*Av_j is real, β_j a norm).
        parts = [to_numpy(c[:, : d + 1]) for c in h_cols]
        parts = [p.real if host_dtype is np.float64 else p for p in parts]
        return np.stack([np.asarray(p, dtype=host_dtype) for p in parts], axis=2)

    for j in range(m + 1):
        av = op._matmat(v)
        row = _contiguous(xp.permute_dims(av, (1, 0)))  # [k, n]
        scale = _column_norms(xp, row, 1)
        if j == m or (enough is not None and j in _CHECKPOINTS):
            av_norm = np.asarray(to_numpy(scale), dtype=np.float64)
            if j == m or enough(host(j), j, av_norm):
                return host(j), av_norm, j, j + 1, False
        coeff = xp.zeros((k, m + 1), dtype=w.dtype, device=device)
        if lanczos:
            # Three-term recurrence without reorthogonalization: exp(τA)v converges regardless
            # (Druskin, Greenbaum & Knizhnerman 1998), at O(nk) per step.
            if j > 0:
                previous = h_cols[-1][:, j]  # h_{j+1,j} = h_{j,j+1}
                row = row - previous[:, None] * basis[:, j - 1, :]
                coeff[:, j - 1] = previous
            current = xp.conj(basis[:, j, :]) if complex_data else basis[:, j, :]
            alpha = xp.sum(current * row, axis=1)
            row = row - alpha[:, None] * basis[:, j, :]
            coeff[:, j] = alpha
        else:
            # Classical Gram–Schmidt, twice (CGS2): batched matrix–vector products (c = V*w).
            span = basis[:, : j + 1, :]
            span_h = xp.conj(span) if complex_data else span
            c1 = xp.matmul(span_h, row[:, :, None])[:, :, 0]
            row = row - xp.matmul(xp.permute_dims(span, (0, 2, 1)), c1[:, :, None])[:, :, 0]
            c2 = xp.matmul(span_h, row[:, :, None])[:, :, 0]
            row = row - xp.matmul(xp.permute_dims(span, (0, 2, 1)), c2[:, :, None])[:, :, 0]
            coeff[:, : j + 1] = c1 + c2
        norm = _column_norms(xp, row, 1)
        ended = norm <= threshold * scale
        norm = xp.where(ended, xp.zeros_like(norm), norm)
        coeff[:, j + 1] = norm
        h_cols.append(coeff)
        safe = xp.where(ended, xp.ones_like(norm), norm)
        basis[:, j + 1, :] = xp.where(ended[:, None], xp.zeros_like(row), row / safe[:, None])
        if bool(xp.all(ended)):
            return host(j + 1), np.zeros(k), j + 1, j + 1, True
        v = _contiguous(xp.permute_dims(basis[:, j + 1, :], (1, 0)))
    raise AssertionError("unreachable")  # pragma: no cover


def _first_column(h: np.ndarray, size: int, m: int, step: float, invariant: bool, symmetric: bool) -> np.ndarray:
    r"""The first column of :math:`e^{\tau\bar H}` (of :math:`e^{\tau H}` for an invariant space).

    ``step`` is the signed :math:`\tau`; the batch runs over the columns of the block.  The two last
    entries (the correction and the estimate) come from :func:`scipy.linalg.expm` of the augmented
    matrices, whose Padé approximant keeps these tiny entries to relative accuracy (an eigenvector sum
    would not: it cancels down to :math:`u\max_i|\varphi_1(\tau\theta_i)|`).  For symmetric
    (Lanczos) :math:`H = U\Theta U^\top` the leading part :math:`e^{\tau H}e_1 = Ue^{\tau\Theta}U^\top
    e_1` is taken from the eigenvalues instead: each component to full relative accuracy, where
    scaling and squaring loses up to two digits once :math:`\tau\lVert H\rVert` is large.
    """
    k = h.shape[0]
    dim = size if invariant else m
    if invariant:
        out = None
    else:
        augmented = np.zeros((k, m + 2, m + 2), dtype=h.dtype)
        augmented[:, : m + 1, :m] = h
        augmented[:, m + 1, m] = 1.0
        out = scipy.linalg.expm(step * augmented)[:, :, 0]
    if symmetric:
        theta, u = np.linalg.eigh(step * h[:, :dim, :dim])
        top = np.matmul(u, (np.exp(theta) * np.conj(u[:, 0, :]))[:, :, None])[:, :, 0]
    elif invariant:
        top = scipy.linalg.expm(step * h[:, :dim, :dim])[:, :, 0]
    else:
        return out
    if out is None:
        return top
    out[:, :dim] = top
    return out


def _schur_first_column(a: np.ndarray) -> np.ndarray:
    r"""The first column of :math:`e^{a}` for each matrix of the batch, through a complex Schur form.

    With :math:`a = ZTZ^*` (:math:`Z` unitary, :math:`T` triangular), :math:`e^{a}e_1 = Z\,e^{T}(Z^*e_1)`: a
    second algorithm beside scaling and squaring on :math:`a` itself, which can lose every digit on a
    non-normal Hessenberg matrix.  For :math:`A = -\operatorname{diag}(1, \dots, 5) + 1000\,N` (:math:`N` the
    shift), :math:`t = 1`, :math:`b = \mathbf 1`, the Krylov result by scaling and squaring was off by a factor
    1,400, through the Schur form by 7e-6, while :math:`e^{tH}` of the same :math:`H` computed exactly is within
    7e-7 of the truth.  :func:`_sensitivity` compares the two.
    """
    out = np.empty(a.shape[:2], dtype=np.complex128)
    for i, matrix in enumerate(a):
        triangular, unitary = scipy.linalg.schur(matrix, output="complex")
        out[i] = unitary @ (scipy.linalg.expm(triangular) @ np.conj(unitary[0, :]))
    return out if np.iscomplexobj(a) else out.real


def _sensitivity(h: np.ndarray, size: int, step: float, invariant: bool, f: np.ndarray, roundoff: float) -> float:
    r"""How far the step's small exponential may be off, relative, when :math:`H` is non-normal.

    Arnoldi (CGS2) delivers :math:`H = V^*AV + E` with :math:`\lVert E\rVert \approx u\lVert A\rVert`, and
    :math:`e^{\tau H}` may amplify :math:`E` far beyond :math:`u|\tau|\lVert A\rVert` when :math:`H` is
    non-normal (the hump of :math:`\lVert e^{sH}\rVert`); scaling and squaring may add errors of its own
    there.  Two readings of the column ``f`` (computed by :func:`_first_column`), the larger returned (the worst
    column of the block):

    * perturbations of that size in two fixed pseudo-random directions, the exponential recomputed: samples of
      the first-order change, times :data:`_SENSITIVITY_MARGIN` (a random direction sees less than the
      derivative's norm);
    * the distance to the same column through a complex Schur form (:func:`_schur_first_column`), a second
      algorithm: where the two disagree, at least one is wrong by that much.

    An estimate, not a bound; infinite when a recomputation overflows.
    """
    rows = size if invariant else size + 1
    dim = size if invariant else size + 2
    base = np.zeros((h.shape[0], dim, dim), dtype=h.dtype)
    base[:, :rows, :size] = h[:, :rows, :size]
    if not invariant:
        base[:, size + 1, size] = 1.0
    base = step * base
    used = size if invariant else size + 1
    reference = f[:, :used]
    scale = roundoff * np.sqrt(dim) * np.array([_host_norm(m) for m in base])[:, None, None]
    rng = np.random.default_rng(dim)
    with np.errstate(over="ignore", invalid="ignore"):
        others = [_schur_first_column(base)[:, :used]]
        for _ in range(2):
            direction = rng.standard_normal(base.shape)
            direction *= scale / np.linalg.norm(direction, axis=(1, 2), keepdims=True)
            others.append(scipy.linalg.expm(base + direction)[:, :used, 0])
        worst = 0.0
        for i, column in enumerate(reference):
            size_f = _host_norm(column)
            if size_f == 0.0:
                continue  # a zero column has nothing to lose
            readings = [_host_norm(other[i] - column) / size_f for other in others]
            worst = max(worst, readings[0], _SENSITIVITY_MARGIN * max(readings[1:]))
    return worst if math.isfinite(worst) else math.inf


def _local_error(f: np.ndarray, beta: np.ndarray, av_norm: np.ndarray, m: int) -> tuple[float, float]:
    r"""Expokit's local error estimate for the corrected scheme and the exponent for the step update.

    With :math:`\mathrm{err}_1, \mathrm{err}_2` taken over the block in the Frobenius sense:
    :math:`\mathrm{err}_2` when the expansion decays fast (:math:`\mathrm{err}_1 > 10\,\mathrm{err}_2`),
    the geometric tail :math:`\mathrm{err}_1\mathrm{err}_2/(\mathrm{err}_1-\mathrm{err}_2)` when it
    decays, and :math:`\mathrm{err}_1` (with the order lowered by one) when it does not.
    """
    err1 = _host_norm(beta * np.abs(f[:, m]))
    err2 = _host_norm(beta * np.abs(f[:, m + 1]) * av_norm)
    if err1 > 10.0 * err2:
        return err2, 1.0 / m
    if err1 > err2:
        return err1 * err2 / (err1 - err2), 1.0 / m
    return err1, 1.0 / max(m - 1, 1)


def expmv_krylov(
    op,
    B,
    t: float,
    *,
    tol: float = 2.0**-53,
    m: int = 30,
    lanczos: bool | None = None,
    max_steps: int = 1000,
    max_rejections: int = 20,
):
    r"""Apply :math:`e^{tA}` to a block by Krylov projection with time stepping (Expokit's scheme).

    All :math:`k` columns of ``B`` run their own Krylov process, advanced together: one block product
    :math:`AX` per Krylov step serves every column, the small exponentials are one batched call, and
    the columns share the time steps.  Each step builds a space of dimension up to :math:`m` from the
    current block :math:`W \approx e^{t_{now}A}B`, uses the corrected approximation (module
    docstring), and accepts the step :math:`\tau` when the local estimate (Expokit's combination of
    :math:`\mathrm{err}_1, \mathrm{err}_2`, Frobenius over the block) meets

    .. math::

        \mathrm{err}_{loc} \le \frac{\tau}{|t|}\,\mathrm{tol}\,
        \min\bigl(\lVert W\rVert_F, \lVert W_{new}\rVert_F\bigr),

    otherwise shrinks :math:`\tau \leftarrow \gamma\tau(\text{allowed}/\mathrm{err}_{loc})^{1/m}`
    (:math:`\gamma = 0.9`) and retries on the same basis (no new products).  The next step starts
    from the same formula.  The norm after the step is free (the basis is orthonormal) and guards the
    relative error when the flow damps the solution (heat flow to equilibrium).  At dimensions 4, 6,
    8, 10, 12, 15, … the process asks whether the space already reaches :math:`t` within tolerance
    (on the first step, and when the controller expects to finish): short times and loose tolerances
    then cost fewer products than :math:`m`.  A space that turns out invariant (breakdown) gives the
    exact result at once.

    **Error contract (a-posteriori).**  ``info["error_estimate"]`` is the sum over steps of
    :math:`\mathrm{err}_{loc}` relative to the smaller norm above, at most ``tol`` unless a limit was
    hit.  It estimates the relative Frobenius error of the block on the assumption that an error made
    at one time is damped by the later flow no less than the solution is — the usual situation for
    dissipative :math:`A` (heat kernels, Markov generators relaxing to equilibrium), but not a
    bound.  The local estimates (Saad, Sidje) are
    asymptotically sharp as the Krylov error decays; rounding is not included (the result carries
    about :math:`u\,\lVert tA\rVert`).  ``tol`` below the unit roundoff of ``B``'s dtype is raised
    to it.  When the step limit or the rejection limit is reached, the remaining time is covered
    anyway and an :class:`~workbench.expmv._linear.AccuracyWarning` gives the estimate and what to
    change.

    **Non-normal operators.**  Rounding enters as :math:`u\,|t|\,\lVert A\rVert_1` (checked before any
    work), but a non-normal :math:`H` can amplify it far beyond that, and scaling and squaring on it can
    lose every digit even when the space is invariant.  After each Arnoldi step the small exponential is
    recomputed through a Schur form and under rounding-size perturbations (:func:`_sensitivity`); the
    larger reading, summed over steps, becomes ``info["rounding_estimate"]``.  Past
    :math:`\max(\mathrm{tol}, \sqrt u)` an ``AccuracyWarning`` names it; at 1 or more no digit is
    trusted and a ``ValueError`` says so and points to ``method='taylor'``.

    Parameters
    ----------
    op : LinearMap or operator
        The operator :math:`A`: a :class:`~workbench.expmv.LinearMap` or anything
        :func:`~workbench.expmv.as_linear_map` accepts.
    B : array, shape=[n] or [n, k]
        numpy or torch (any device), real or complex, single or double precision (complex when
        :math:`A` is: Arnoldi then orthogonalises in the complex inner product :math:`x^*y`).
    t : float
        Real time, of either sign.
    tol : float
        Relative tolerance (see the contract), in (0, 1).
    m : int
        Krylov dimension per step, 1 to 500 (lowered to ``n``).  Larger ``m`` takes longer steps at
        :math:`O(nkm)` (Lanczos) or :math:`O(nkm^2)` (Arnoldi) orthogonalisation cost per step.
    lanczos : bool, optional
        Use the Lanczos recurrence; default: when ``op.is_symmetric()`` (Hermitian, for complex
        :math:`A`; ``True`` vouches for the symmetry of an operator that cannot be checked, such as a
        LinearOperator).
    max_steps, max_rejections : int
        Limits on time steps and on step-size reductions within one step.

    Returns
    -------
    Y : array, shape=[n, k]
        :math:`\approx e^{tA}B` in ``B``'s library, dtype and device.
    info : dict
        ``method`` ('krylov'), ``matvecs`` (block products with :math:`A`, the ones for
        :math:`\lVert Av_{m+1}\rVert` included), ``error_estimate``, ``steps``, ``rejections`` (step
        reductions), ``krylov_dim`` (m), ``process`` ('lanczos' or 'arnoldi'), ``tol`` (used).

    References
    ----------
    Saad (1992), Theorem 5.1 and §5.2 (corrected schemes); Sidje (1998), Algorithm 2 (``expv``).

    Examples
    --------
    The heat flow of the path graph on 3 vertices against the dense exponential:

    >>> import numpy as np, scipy.linalg
    >>> from workbench.expmv import as_linear_map
    >>> L = np.array([[-1.0, 1.0, 0.0], [1.0, -2.0, 1.0], [0.0, 1.0, -1.0]])
    >>> y, info = expmv_krylov(as_linear_map(L), np.eye(3)[:, :1], 2.0)
    >>> bool(np.allclose(y, scipy.linalg.expm(2.0 * L)[:, :1], rtol=1e-14, atol=1e-15)), info["process"]
    (True, 'lanczos')
    """
    op = as_linear_map(op, "op")
    B, vector = as_block(op, B, op_name="op")  # finite, [n, k], promoted: complex A makes the block complex
    xp = namespace(B)
    tol = check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    t = check_in_range("t", t)
    m = check_integer("m", m, 1, 500)
    max_steps = check_integer("max_steps", max_steps, 1, 10**7)
    max_rejections = check_integer("max_rejections", max_rejections, 0, 10**4)
    tol = max(tol, unit_roundoff(B))
    n, k = int(B.shape[0]), int(B.shape[1])
    if lanczos is None:
        lanczos = op.is_symmetric()
    m = max(1, min(m, n))
    info = {
        "method": "krylov",
        "matvecs": 0,
        "error_estimate": 0.0,
        "steps": 0,
        "rejections": 0,
        "krylov_dim": m,
        "process": "lanczos" if lanczos else "arnoldi",
        "tol": tol,
    }
    norm_a = op.one_norm() if n else 0.0
    if t == 0.0 or n == 0 or k == 0 or norm_a == 0.0:
        return finish(xp, xp.asarray(B, copy=True), vector), info

    # Rounding: the projected H carries errors of about u‖A‖, which e^{τH} turns into a relative error of
    # about u|t|‖A‖ (for normal and non-normal A alike; e^{[[1, 1e17], [0, 1]]} came out with 100 % error,
    # reproducer 5).  It is not in the a-posteriori estimate, so it is checked here, before any work.
    rounding = unit_roundoff(B) * abs(t) * norm_a
    info["rounding_estimate"] = rounding
    advice = "use method='taylor' (its power-norm bounds ||A^p||^(1/p) see past a large non-normal part), or shorten t"
    if rounding >= 1.0:
        raise ValueError(
            f"expmv_krylov cannot resolve exp(tA)B: rounding in the Krylov projection is about "
            f"u*|t|*||{op.name}||_1 = {rounding:.3g} relative to the result (||{op.name}||_1 = {norm_a:.3g}, "
            f"t = {t:g}), so no digit would be correct; {advice}"
        )
    if rounding > max(tol, math.sqrt(unit_roundoff(B))):
        warnings.warn(
            f"expmv_krylov: rounding in the Krylov projection limits the relative accuracy to about "
            f"u*|t|*||A||_1 = {rounding:.2g} (requested tol {tol:.2g}); {advice}",
            AccuracyWarning,
            stacklevel=2,
        )
    t_out, sign = abs(t), math.copysign(1.0, t)
    # Expokit's first step: the a-priori Krylov error bound ~ (τ‖A‖)^m / m! set to the tolerance.
    fact = ((m + 1) / math.e) ** (m + 1) * math.sqrt(2.0 * math.pi * (m + 1))
    tau = _round_step(min(t_out, (1.0 / norm_a) * (fact * tol / (4.0 * t_out * norm_a)) ** (1.0 / m)))
    basis = xp.zeros((k, m + 1, n), dtype=B.dtype, device=array_api_compat.device(B))
    w = B
    # The block is carried as W = 2^E·Ŵ with max|Ŵ| in [1/2, 1) (exact rescaling by powers of two), so
    # that neither tiny B nor a solution growing past 1e154 under- or overflows a norm (reproducer 4).
    exponent = 0
    t_now, products, steps, rejections, error, amplified = 0.0, 0, 0, 0, 0.0, 0.0
    exhausted = forced = False
    guard = np.errstate(over="ignore", invalid="ignore") if array_api_compat.is_numpy_namespace(xp) else nullcontext()
    with guard:
        while t_now < t_out:
            peak = float(xp.max(xp.abs(w)))
            if peak == 0.0:
                break
            if math.isfinite(peak):
                shift = math.frexp(peak)[1]
                w = w * math.ldexp(1.0, -shift)
                exponent += shift
            beta_dev = _column_norms(xp, w, 0)
            beta = np.asarray(to_numpy(beta_dev), dtype=np.float64)
            size_w = _host_norm(beta)
            if not math.isfinite(size_w):
                raise ValueError(
                    f"exp(tA)B overflows the {B.dtype} range by t = {sign * t_now:.6g} (of {t:g}); "
                    "rescale B or A, or shorten t"
                )
            last = steps + 1 >= max_steps
            remaining = t_out - t_now

            def reference(f, used, beta=beta, size_w=size_w):
                # The smaller of ‖W‖_F before and after the step (V is orthonormal, so the norm after
                # is that of the coefficients): errors must be small against the solution where it is
                # smaller, also when the flow damps it (decay to an equilibrium).
                return min(size_w, _host_norm(beta[:, None] * f[:, :used]))

            # A smaller space suffices when it already reaches t within tolerance (short or loose runs);
            # worth asking on the first step and once the controller expects to finish soon.
            def enough(h_part, d, av_norm, remaining=remaining, beta=beta):
                f_part = _first_column(h_part, d, d, sign * remaining, False, False)
                return _local_error(f_part, beta, av_norm, d)[0] <= remaining / t_out * tol * reference(f_part, d + 1)

            ask = not last and (steps == 0 or remaining <= 2.0 * tau)
            h, av_norm, size, spent, invariant = _krylov_basis(
                op, w, beta_dev, m, lanczos, basis, enough if ask else None
            )
            products += spent
            steps += 1
            # An invariant space is exact for every τ, an early stop was tested at the remaining time,
            # and the last allowed step must finish.
            tau = remaining if invariant or size < m or last else min(tau, remaining)
            used = size if invariant else size + 1
            rejected_here = 0
            while True:
                f = _first_column(h, size, size, sign * tau, invariant, lanczos)
                if invariant:
                    err, order, target, scale = 0.0, 1.0 / m, 1.0, 1.0
                    break
                err, order = _local_error(f, beta, av_norm, size)
                scale = reference(f, used)
                target = tau / t_out * tol * scale  # this step's share of the tolerance
                if err <= target:
                    break
                if last:
                    forced = True
                    break
                if rejected_here >= max_rejections:
                    exhausted = True
                    break
                rejected_here += 1
                tau = _round_step(_GAMMA * tau * (target / err) ** order)
            rejections += rejected_here
            if not lanczos:
                amplified += _sensitivity(h, size, sign * tau, invariant, f, unit_roundoff(B))
            coefficients = beta[:, None] * f[:, :used]  # [k, used]
            combo = xp.matmul(like(coefficients, B)[:, None, :], basis[:, :used, :])[:, 0, :]
            w = _contiguous(xp.permute_dims(combo, (1, 0)))
            t_now += tau
            error += err / scale
            if t_now >= t_out:
                break
            tau = t_out if err == 0.0 else _GAMMA * tau * (target / err) ** order
            tau = _round_step(min(tau, t_out - t_now))
    info.update(matvecs=products, steps=steps, error_estimate=error, rejections=rejections)
    if amplified > rounding:
        # A non-normal H amplifies its rounding errors beyond u|t|‖A‖ (measured per step, above).
        info["rounding_estimate"] = amplified
        if amplified >= 1.0:
            size = (
                "more than the result itself"
                if math.isinf(amplified)
                else f"about {amplified:.3g} relative to the result"
            )
            raise ValueError(
                f"expmv_krylov cannot resolve exp(tA)B: {op.name} is far from normal and the projected exponential "
                f"amplifies rounding to {size}, so no digit would be correct; {advice}"
            )
        if amplified > max(tol, math.sqrt(unit_roundoff(B))):
            warnings.warn(
                f"expmv_krylov: {op.name} is far from normal and the projected exponential amplifies rounding: "
                f"the relative accuracy is limited to about {amplified:.2g} (requested tol {tol:.2g}); {advice}",
                AccuracyWarning,
                stacklevel=2,
            )
    if exponent != 0 and bool(xp.all(xp.isfinite(w))):
        w = scale_by_power_of_two(w, exponent)
    if not bool(xp.all(xp.isfinite(w))):
        raise ValueError(f"exp(tA)B overflows the {B.dtype} range (t = {t:g}); rescale B or A, or shorten t")
    if forced or exhausted or error > 1.001 * tol:
        cause = (
            f"the step limit max_steps={max_steps} was reached"
            if forced
            else (
                f"a step missed its tolerance after max_rejections={max_rejections} reductions"
                if exhausted
                else "the local estimates add up past tol"
            )
        )
        warnings.warn(
            f"expmv_krylov: estimated relative error {error:.2g} exceeds tol = {tol:.2g} ({cause}); "
            f"increase m (now {m}) or max_steps, or loosen tol",
            AccuracyWarning,
            stacklevel=2,
        )
    if w is B:
        w = xp.asarray(B, copy=True)
    return finish(xp, w, vector), info
