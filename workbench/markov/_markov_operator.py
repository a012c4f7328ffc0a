r"""A finite Markov operator with its stationary law, adjoint, currents and spectral data.

:class:`MarkovOperator` holds a row-stochastic :math:`\mathsf P` (dense numpy or torch, or scipy
sparse) and computes on demand, with caching, what Attention Geometry reads off an operator: the
stationary law :math:`\pi`, the :math:`\pi`-adjoint :math:`\mathsf P^*`, the flux
:math:`\mathsf A = \operatorname{diag}(\pi)\mathsf P`, the detailed-balance residual
:math:`\varepsilon_{\mathrm{rev}}`, the spectrum (through the symmetric conjugate when reversible),
the diffusion map and its Nyström extension.  The Doob h-transform of a kernel, which returns a
:class:`MarkovOperator`, is in :mod:`workbench.markov._doob`; the cross kernels of the Nyström extension are
in :mod:`workbench.markov._nystrom`.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2, §5, §7; book/reference.md §A.2, §A.5, §A.7.
R. R. Coifman and S. Lafon, "Diffusion maps", Appl. Comput. Harmon. Anal. 21 (2006) 5–30.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from functools import cached_property

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.markov._bandwidth import median_bandwidth, warn_if_degenerate
from workbench.markov._matrices import (
    check_row_sums,
    frobenius,
    is_symmetric,
    row_sums,
    scale_both,
    scale_rows,
    transpose,
    validated_kernel,
)
from workbench.markov._nystrom import cross_kernel, drop_coincident
from workbench.markov._sparse_spectrum import top_eigenpairs
from workbench.markov._stationary import closed_classes, gth_stationary
from workbench.memory import check_memory
from workbench.validation import (
    as_array,
    as_scalar,
    as_sparse,
    check_flag,
    check_in_range,
    check_integer,
    check_matching,
    check_nonnegative,
    check_row_stochastic,
    check_square,
    is_sparse,
)

__all__ = ["MarkovOperator", "Spectrum"]

#: Relative detailed-balance residual below which an operator given as a matrix counts as reversible:
#: a few hundred ulps, the rounding of diag(π)P for a reversible P with π from a linear solve.
REVERSIBLE_RTOL = 1e-10

#: Sparse operators on at most this many states are diagonalised densely (faster than shift-invert there).
DENSE_EIGEN_LIMIT = 500


@dataclass(frozen=True)
class Spectrum:
    r"""Leading eigenpairs :math:`\mathsf P\psi_k = \mu_k\psi_k`, ordered by decreasing :math:`\mu_k`.

    For a reversible operator the :math:`\mu_k` are real and the :math:`\psi_k` (columns of
    ``vectors``) are :math:`\pi`-orthonormal, :math:`\sum_i \pi_i\psi_k(i)\psi_l(i) = \delta_{kl}`,
    with :math:`\psi_0 = \mathbf 1`; generator eigenvalues are :math:`\lambda_k = 1 - \mu_k`.
    """

    values: object
    vectors: object


class MarkovOperator:
    r"""A row-stochastic operator :math:`\mathsf P` on :math:`n` states and what it determines.

    Functions act from the left, :math:`(\mathsf P f)_i = \sum_j \mathsf P_{ij} f_j`; generators are
    :math:`\mathsf L = I - \mathsf P` (positive, :attr:`generator`) and :math:`\mathcal L =
    \mathsf P - I` (negative, :attr:`negative_generator`).  Build one from a matrix, from a
    nonnegative kernel (:meth:`from_kernel`, with Coifman–Lafon α-normalisation), from a point cloud
    (:meth:`from_points`) or from a networkx graph (:meth:`from_networkx`).

    Parameters
    ----------
    transition : array or scipy sparse, shape=[n, n]
        Row-stochastic (checked to ``atol``), dense numpy/torch or scipy sparse (stored as CSR).
    stationary : array, shape=[n], optional
        A known stationary law; otherwise it is computed on first use.
    atol : float
        Tolerance of the row-sum check.

    References
    ----------
    Attention Geometry §2, §5, §7: :math:`\mathsf P = \operatorname{diag}(\mathsf K\mathbf 1)^{-1}\mathsf K`,
    :math:`\mathsf P^* = \operatorname{diag}(\pi)^{-1}\mathsf P^\top\operatorname{diag}(\pi)`,
    :math:`\mathsf A = \operatorname{diag}(\pi)\mathsf P` (book/reference.md §A.2, §A.5, §A.7).

    Examples
    --------
    >>> import numpy as np
    >>> op = MarkovOperator(np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]]))
    >>> op.stationary.round(12).tolist()  # doubly stochastic: uniform law
    [0.333333333333, 0.333333333333, 0.333333333333]
    >>> op.reversibility_residual  # a one-way walk around a 3-cycle: every bond carries current, ‖J‖ = ‖A‖
    1.0
    """

    def __init__(self, transition, *, stationary=None, atol: float = 1e-10):
        atol = check_in_range("atol", atol, 0.0)
        if is_sparse(transition):
            transition = as_sparse("transition", transition)
            check_square("transition", transition)
            check_nonnegative("transition", transition)
            with _naming_tolerance(atol):
                check_row_sums("transition", transition, atol=atol)
        else:
            transition = as_array("transition", transition, ndim=2)
            check_square("transition", transition)
            check_nonnegative("transition", transition)
            with _naming_tolerance(atol):
                check_row_stochastic("transition", transition, atol=atol)
        self._P = transition
        self._kernel = None  # a symmetric kernel with P = rownorm(kernel), when known
        self._sampling = None  # (points, beta, alpha, k, radius, q, zero_diagonal) when built from points
        self.nodes = None  # vertex labels when built from a graph
        if stationary is not None:
            stationary = as_array("stationary", stationary, ndim=1)
            if not is_sparse(transition):
                namespace(stationary=stationary, transition=transition)  # one array library per call
            check_matching("stationary", stationary.shape[0], "transition rows", self.n)
            check_nonnegative("stationary", stationary)
            self.__dict__["stationary"] = stationary / namespace(stationary).sum(stationary)

    # ---- construction ------------------------------------------------------------------------

    @classmethod
    def from_kernel(cls, kernel, alpha: float = 0.0) -> MarkovOperator:
        r"""Row-normalise a nonnegative kernel after Coifman–Lafon α-normalisation.

        .. math::

            q = \mathsf K\mathbf 1,\quad \mathsf K^{(\alpha)} = \operatorname{diag}(q)^{-\alpha}\,\mathsf K\,
            \operatorname{diag}(q)^{-\alpha},\quad \mathsf P = \operatorname{diag}(\mathsf K^{(\alpha)}\mathbf 1)^{-1}
            \mathsf K^{(\alpha)} .

        This is the Doob transform of :math:`\mathsf K` with :math:`h = q^{-\alpha}`.  For a symmetric
        kernel, :math:`\mathsf P` is reversible and :math:`\pi = \mathsf K^{(\alpha)}\mathbf 1 /
        \mathbf 1^\top\mathsf K^{(\alpha)}\mathbf 1` exactly; α = 0 is the graph random walk, ½ the
        Fokker–Planck and 1 the Laplace–Beltrami normalisation.

        Parameters
        ----------
        kernel : array or scipy sparse, shape=[n, n]
            Nonnegative with positive row sums.
        alpha : float
            In [0, 1].

        References
        ----------
        Attention Geometry §2 [CODE: DMAE eager_map.py]; book/reference.md §A.2.

        Examples
        --------
        >>> import numpy as np
        >>> K = np.array([[1.0, 1.0], [1.0, 3.0]])
        >>> op = MarkovOperator.from_kernel(K)
        >>> op.stationary.tolist(), op.is_reversible
        ([0.3333333333333333, 0.6666666666666666], True)
        """
        alpha = check_in_range("alpha", alpha, 0.0, 1.0)
        kernel, degree = validated_kernel(kernel)
        if alpha:
            h = degree ** (-alpha)
            kernel = scale_both(h, kernel, h)
            degree = row_sums(kernel)
        op = cls.__new__(cls)
        op._P = scale_rows(1.0 / degree, kernel)
        op._sampling = None
        op.nodes = None
        if is_symmetric(kernel):
            op._kernel = kernel
            op.__dict__["stationary"] = degree / (degree.sum() if is_sparse(kernel) else namespace(degree).sum(degree))
        else:
            op._kernel = None
        return op

    @classmethod
    def from_points(
        cls,
        points,
        beta=None,
        *,
        alpha: float = 0.0,
        k: int | None = None,
        radius: float | None = None,
        zero_diagonal: bool = False,
    ) -> MarkovOperator:
        r"""The Markov operator of the Gauss kernel :math:`\mathsf K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2}`.

        Dense when neither ``k`` nor ``radius`` is given; otherwise a sparse kernel on the ``k``
        nearest neighbours (symmetrised) or on pairs within ``radius``.  ``beta=None`` picks a scale
        that matches the neighbourhood: the median heuristic :math:`1/\operatorname{median}_{i<j} d^2_{ij}`
        for the dense kernel (the DMAE convention); :math:`1/\operatorname{median}_i d^2_{i,(k)}` with
        :math:`d_{i,(k)}` the distance to the k-th neighbour, so the kernel is :math:`\approx e^{-1}` at
        the edge of a typical neighbourhood; :math:`9/r^2` for a radius graph (truncation at
        :math:`e^{-9}`).  A global median is a poor default for a kNN graph: on a Swiss roll it is
        wider than the gap between turns, and every kNN weight is then close to 1.

        The defaults (no ``k``, ``radius`` or ``beta``) are the dense kernel at the median-rule scale, as in
        the DMAE code.  That kernel is global: half of all pairs weigh at least :math:`e^{-1}`, so the walk
        sees ambient distances, not the manifold's.  On a 5,000-point Swiss roll its first diffusion
        coordinate follows arc length only to :math:`|\rho_{\mathrm{Spearman}}| \approx 0.39`, while ``k=15``
        unrolls it (:math:`|\rho| = 1.000`) about a hundred times faster.  So every dense kernel is checked: when
        the median over points of the kernel mass :math:`q_i = \sum_j \mathsf K_{ij}` exceeds
        :data:`DEGENERATE_KERNEL_MASS` (a fifth) of :math:`n \ge` :data:`DEGENERATE_MIN_POINTS` (500) points,
        a :class:`DegenerateBandwidthWarning` names that fraction and the remedies: ``k=15`` (a sparse
        nearest-neighbour kernel with a self-tuned scale, :math:`O(nk)` memory) or a larger ``beta``.  The
        check reads the row sums already computed (:math:`O(n)`).  A dense kernel that would not fit in the
        memory budget (:mod:`workbench.memory`) is refused before allocation, with the same advice.

        ``zero_diagonal=True`` drops the self-weight :math:`\mathsf K_{ii} = 1` (``zero_diag`` in the
        paper author's DMAE code): with few neighbours it makes the walk lazy, shrinking Γ and the generator
        by about :math:`1/\deg`.  The points are kept for :meth:`nystrom`.

        Parameters
        ----------
        points : array, shape=[n, d]
        beta : float, optional
            Inverse bandwidth, :math:`\beta > 0` (no factor 2 or 4 in the exponent).
        alpha : float
            Coifman–Lafon normalisation, in [0, 1].
        k, radius : optional
            Sparse neighbourhoods (at most one of them).
        zero_diagonal : bool
            Remove the self-loops before normalising.

        Examples
        --------
        >>> import numpy as np
        >>> theta = 2 * np.pi * np.arange(200) / 200
        >>> op = MarkovOperator.from_points(np.column_stack([np.cos(theta), np.sin(theta)]), beta=400.0)
        >>> mu = op.spectrum(3).values
        >>> bool(np.allclose(4 * 400.0 * (1 - mu[1:]), 1.0, atol=0.01))  # 4β(1 − μ₁) ≈ k² = 1 on the circle
        True

        The defaults on a Swiss roll warn; ``k=15`` unrolls it (ψ₁ is monotone in the arc length):

        >>> import warnings
        >>> from scipy.stats import spearmanr
        >>> from workbench.markov import SwissRoll
        >>> roll = SwissRoll()
        >>> X = roll.sample(600, seed=0)
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = MarkovOperator.from_points(X)
        >>> [w.category.__name__ for w in caught]
        ['DegenerateBandwidthWarning']
        >>> psi = MarkovOperator.from_points(X, k=15).spectrum(2).vectors[:, 1]
        >>> bool(abs(spearmanr(psi, roll.intrinsic_coordinates(X)[:, 0])[0]) > 0.99)
        True
        """
        from workbench.markov._kernels import gauss_kernel, gauss_kernel_sparse

        points = as_array("points", points, ndim=2)
        if points.shape[0] == 0:
            raise ValueError(f"points must hold at least one point (a row), got shape {tuple(points.shape)}")
        alpha = check_in_range("alpha", alpha, 0.0, 1.0)
        zero_diagonal = check_flag("zero_diagonal", zero_diagonal)
        sparse = k is not None or radius is not None
        if sparse and array_api_compat.is_torch_array(points):
            raise TypeError("sparse kernels (k or radius) are built with scipy: pass points as a numpy array")
        default = beta is None
        if default:
            beta = _default_beta(points, k, radius)
        beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
        if sparse:
            kernel = gauss_kernel_sparse(points, beta, k=k, radius=radius)
        else:
            n = int(points.shape[0])
            # K and P are both kept, with one n×n temporary while K is built: refuse before allocating, naming k.
            check_memory(
                f"the dense Gauss kernel of from_points (n = {n})",
                3.0 * n * n * points.dtype.itemsize,
                "pass k (e.g. k=15: a sparse nearest-neighbour kernel, O(n·k) memory) or fewer points",
            )
            kernel = gauss_kernel(points, beta)
        if zero_diagonal:
            if sparse:
                kernel.setdiag(0.0)
                kernel.eliminate_zeros()
            else:
                xp = namespace(kernel)
                kernel = kernel - xp.eye(kernel.shape[0], dtype=kernel.dtype, device=array_api_compat.device(kernel))
        op = cls.from_kernel(kernel, alpha)
        q = row_sums(kernel)
        op._sampling = (points, beta, alpha, k, radius, q, zero_diagonal)
        if not sparse:  # the kernel mass Σ_j K_ij counts the dropped self-weight K_ii = 1 back in
            warn_if_degenerate(q + 1.0 if zero_diagonal else q, beta, default)
        return op

    @classmethod
    def from_networkx(cls, graph, *, weight: str | None = "weight", nodelist=None) -> MarkovOperator:
        r"""The random walk :math:`\mathsf P_{xy} = w_{xy}/\sum_z w_{xz}` on a weighted (di)graph.

        An undirected graph gives a reversible walk with :math:`\pi_x \propto \deg_w(x)`; a directed
        graph gives :math:`\pi` by a linear solve.  Vertex labels are kept in :attr:`nodes`.

        Examples
        --------
        >>> import networkx as nx
        >>> op = MarkovOperator.from_networkx(nx.star_graph(3))
        >>> op.stationary.tolist()  # degree 3 at the hub, 1 at each leaf, over 2|E| = 6
        [0.5, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666]
        """
        from workbench.markov._graphs import graph_weights

        weights, nodes = graph_weights(graph, weight=weight, nodelist=nodelist)
        op = cls.from_kernel(weights)
        op.nodes = list(nodes)
        return op

    # ---- the operator and its generators ----------------------------------------------------

    @property
    def P(self):
        """The transition matrix (dense array or scipy sparse CSR)."""
        return self._P

    @property
    def n(self) -> int:
        """The number of states."""
        return int(self._P.shape[0])

    @property
    def is_sparse(self) -> bool:
        """Whether :attr:`P` is stored as a scipy sparse matrix."""
        return is_sparse(self._P)

    def _identity(self):
        if self.is_sparse:
            import scipy.sparse

            return scipy.sparse.eye_array(self.n, format="csr")
        xp = namespace(self._P)
        return xp.eye(self.n, dtype=self._P.dtype, device=array_api_compat.device(self._P))

    @property
    def generator(self):
        r"""The positive generator :math:`\mathsf L = I - \mathsf P`."""
        return self._identity() - self._P

    @property
    def negative_generator(self):
        r"""The negative generator :math:`\mathcal L = \mathsf P - I` (rows sum to zero)."""
        return self._P - self._identity()

    def __matmul__(self, f):
        r"""Apply :math:`\\mathsf P` to a function (or a block of functions) on the states."""
        return self._P @ f

    # ---- stationary law, adjoint, flux, current ---------------------------------------------

    @cached_property
    def stationary(self):
        r"""The stationary law :math:`\pi` (:math:`\pi^\top\mathsf P = \pi^\top`, :math:`\sum_i\pi_i = 1`).

        Exact from the degrees for an operator built from a symmetric kernel.  Otherwise it solves
        :math:`(I - \mathsf P)^\top\pi = 0` with one equation replaced by :math:`\mathbf 1^\top\pi = 1`
        (the equations sum to zero, so any one is redundant when :math:`\pi` is unique) for sparse operators.  Raises
        ``ValueError`` when :math:`\pi` is not unique (more than one closed class), and when it is not
        determined to working precision (the class is held together only by subnormal transitions, or the
        ratios :math:`\pi_i/\pi_j` leave the floating-point range).
        Dense operators use the Grassmann–Taksar–Heyman elimination on the closed class, which never forms
        :math:`1 - \mathsf P_{ii}` and so keeps every :math:`\pi_i` to small relative error however sharp
        the rows; sparse ones an LU solve.
        """
        classes = closed_classes(self._P)
        if len(classes) > 1:
            shown = "; ".join(str(c[:5].tolist())[:-1] + (", ...]" if c.size > 5 else "]") for c in classes[:3])
            raise ValueError(
                f"the stationary law is not unique: P has {len(classes)} closed communicating classes "
                f"(vertices {shown}{'; ...' if len(classes) > 3 else ''}); restrict P to one class"
            )
        # A class held together only by subnormal transitions (no relative precision left) has a law its
        # data do not determine.
        if len(closed_classes(self._P, floor=float(np.finfo(np.float64).tiny))) > 1:
            raise self._undetermined()
        if self.is_sparse:
            from scipy.sparse.linalg import spsolve

            system = transpose(self.generator).tolil()
            system[-1, :] = np.ones(self.n)
            rhs = np.zeros(self.n)
            rhs[-1] = 1.0
            pi = spsolve(system.tocsc(), rhs)
            xp = namespace(pi)
            pi = xp.where(pi < 0, xp.zeros_like(pi), pi)  # rounding-level negatives off the closed class
            return pi / xp.sum(pi)
        # Dense: GTH elimination on the closed class (π vanishes off it): no 1 − P_ii is ever formed, so
        # sharp heads whose leaving transitions fall below the unit roundoff keep their law to full
        # relative accuracy, on every BLAS.
        xp = namespace(self._P)
        closed = classes[0]
        if closed.size == self.n:
            pi = gth_stationary(self._P)
        else:
            index = xp.asarray(closed, device=array_api_compat.device(self._P))
            on_class = gth_stationary(xp.take(xp.take(self._P, index, axis=0), index, axis=1))
            pi = None
            if on_class is not None:
                pi = xp.zeros(self.n, dtype=self._P.dtype, device=array_api_compat.device(self._P))
                pi[index] = on_class
        if pi is None:
            raise self._undetermined()
        return pi

    def _undetermined(self) -> ValueError:
        # One closed class by support, but held together only by subnormal transitions, or with a law whose
        # ratios leave the floating-point range (very sharp softmax rows): π is not determined to working
        # precision.
        P = to_numpy(self._P.tocsr().data if self.is_sparse else self._P)
        smallest = float(np.min(P[P > 0])) if np.any(P > 0) else 0.0
        return ValueError(
            "the stationary law is numerically undetermined: P has one closed class, but only through "
            "transitions that underflow, or with ratios π_i/π_j beyond the floating-point range (smallest "
            f"positive transition {smallest:.3g}); lower the inverse temperature or pass the stationary law "
            "explicitly"
        )

    @cached_property
    def adjoint(self):
        r"""The :math:`\pi`-adjoint :math:`\mathsf P^* = \operatorname{diag}(\pi)^{-1}\mathsf P^\top\operatorname{diag}(\pi)`.

        Defined where :math:`\pi > 0`; raises ``ValueError`` for transient states.
        """  # noqa: E501
        pi = self.stationary
        if float(namespace(pi).min(pi)) <= 0.0:
            raise ValueError("the π-adjoint needs π > 0 everywhere, but P has transient states (π_i = 0)")
        return scale_both(1.0 / pi, transpose(self._P), pi)

    @cached_property
    def flux(self):
        r"""The flux :math:`\mathsf A = \operatorname{diag}(\pi)\mathsf P` (probability per step along each edge)."""
        return scale_rows(self.stationary, self._P)

    @cached_property
    def current(self):
        r"""The stationary current :math:`\mathsf J = \mathsf A - \mathsf A^\top`; :math:`\mathsf J\mathbf 1 = 0`."""
        return self.flux - transpose(self.flux)

    @cached_property
    def reversibility_residual(self) -> float:
        r"""The detailed-balance residual :math:`\varepsilon_{\mathrm{rev}} = \lVert \mathsf A - \mathsf A^\top\rVert_F / \lVert\mathsf A\rVert_F \in [0, \sqrt2]`."""  # noqa: E501
        return frobenius(self.current) / frobenius(self.flux)

    @property
    def is_reversible(self) -> bool:
        """Whether detailed balance holds (exactly for a symmetric kernel; to 1e-10 relative otherwise)."""
        return self._kernel is not None or self.reversibility_residual <= REVERSIBLE_RTOL

    # ---- spectral data -----------------------------------------------------------------------

    def _symmetric_conjugate(self):
        r"""The symmetric :math:`S = \Pi^{1/2}\mathsf P\,\Pi^{-1/2}`, similar to :math:`\mathsf P` when reversible."""
        if self._kernel is not None:
            degree = row_sums(self._kernel)
            root = degree**0.5 if self.is_sparse else namespace(degree).sqrt(degree)
            return scale_both(1.0 / root, self._kernel, 1.0 / root)
        pi = self.stationary
        root = pi**0.5 if self.is_sparse else namespace(pi).sqrt(pi)
        s = scale_both(root, self._P, 1.0 / root)
        return 0.5 * (s + transpose(s))

    def spectrum(self, count: int = 10) -> Spectrum:
        r"""The ``count`` leading eigenpairs :math:`\mathsf P\psi_k = \mu_k\psi_k`.

        Reversible operators use the symmetric conjugate :math:`S = \Pi^{1/2}\mathsf P\Pi^{-1/2}`
        (:math:`Su = \mu u \Rightarrow \psi = \Pi^{-1/2}u`): dense ``eigh``, or for sparse
        operators shift-invert Lanczos at :math:`\sigma = 1 + 10^{-6}` on a symmetric factorisation of
        :math:`S - \sigma I` (plain Lanczos stalls on the clustered top of a diffusion spectrum).  Where the
        ``sparse`` extra is installed that is QDLDL's :math:`LDL^\top`, and from :math:`3\cdot10^4` states on Intel
        MKL's PARDISO (x86-64); SuperLU's without it (``WORKBENCH_SPARSE_FACTOR`` chooses).  Eigenvectors are
        :math:`\pi`-orthonormal, with the sign making each one's largest-magnitude entry positive.  Non-reversible
        operators return complex pairs ordered by decreasing real part, each of unit :math:`\pi`-norm.

        Sparse operators with at most :data:`DENSE_EIGEN_LIMIT` states, or asked for half their
        spectrum or more, are diagonalised densely.

        Parameters
        ----------
        count : int
            How many, :math:`1 \le` count :math:`\le n`.

        Returns
        -------
        Spectrum
        """
        count = as_scalar(count)
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 1 <= count <= self.n:
            raise ValueError(f"count must be an integer in [1, {self.n}], got {count!r}")
        count = int(count)
        cached = self.__dict__.get("_spectrum")
        if cached is not None and cached.values.shape[0] >= count:
            return Spectrum(cached.values[:count], cached.vectors[:, :count])
        if not self.is_reversible:
            spectrum = self._nonreversible_spectrum(count)
        else:
            s = self._symmetric_conjugate()
            if self.is_sparse and (self.n <= DENSE_EIGEN_LIMIT or 2 * count >= self.n):
                s = s.toarray()  # Lanczos cannot return (nearly) all eigenpairs; dense eigh is exact and cheap here
            if is_sparse(s):
                v0 = np.sqrt(to_numpy(self.stationary))  # the top eigenvector: Lanczos starts next to it
                mu, u = top_eigenpairs(s, count, v0)
            elif array_api_compat.is_torch_array(s):
                import torch

                mu, u = torch.linalg.eigh(s)
                mu, u = mu[-count:], u[:, -count:]
            else:
                import scipy.linalg

                mu, u = scipy.linalg.eigh(s, subset_by_index=[self.n - count, self.n - 1])
            xp = namespace(mu)
            order = xp.flip(xp.argsort(mu))
            mu, u = mu[order], u[:, order]
            pi = self.stationary
            root = namespace(pi).sqrt(pi)
            psi = u / root[:, None]
            peak = xp.take_along_axis(psi, xp.argmax(xp.abs(psi), axis=0)[None, :], axis=0)
            spectrum = Spectrum(mu, psi * xp.sign(peak))
        self.__dict__["_spectrum"] = spectrum
        return spectrum

    def _nonreversible_spectrum(self, count: int) -> Spectrum:
        if self.is_sparse and self.n > DENSE_EIGEN_LIMIT and 2 * count < self.n:
            from scipy.sparse.linalg import eigs

            mu, psi = eigs(self._P, k=count, which="LR")
        elif self.is_sparse:
            mu, psi = np.linalg.eig(self._P.toarray())
        elif array_api_compat.is_torch_array(self._P):
            import torch

            mu, psi = torch.linalg.eig(self._P)
        else:
            mu, psi = np.linalg.eig(self._P)
        xp = namespace(mu)
        order = xp.flip(xp.argsort(xp.real(mu)))[:count]
        mu, psi = mu[order], psi[:, order]
        pi = self.stationary
        pi = xp.astype(pi, psi.dtype) if not self.is_sparse else pi
        norms = xp.sqrt(xp.sum(pi[:, None] * xp.abs(psi) ** 2, axis=0))
        return Spectrum(mu, psi / norms)

    def diffusion_map(self, n_components: int = 2, t: float = 1.0):
        r"""Diffusion coordinates :math:`\Psi_t(i) = (\mu_1^t\psi_1(i), \dots, \mu_m^t\psi_m(i))`.

        The constant :math:`\psi_0` is skipped.  With all :math:`n - 1` components, Euclidean distance
        in these coordinates is the diffusion distance
        :math:`D_t(i,j)^2 = \sum_l (\mathsf P^t_{il} - \mathsf P^t_{jl})^2/\pi_l`.

        Parameters
        ----------
        n_components : int
            Number of coordinates :math:`m`.
        t : float
            Diffusion time, :math:`t \ge 0`; a non-integer :math:`t` needs :math:`\mu_k \ge 0`.

        Returns
        -------
        array, shape=[n, n_components]

        References
        ----------
        Coifman & Lafon (2006), §2–3; book/reference.md §A.2 (spectral computation [CODE: DMAE]).
        """
        if not self.is_reversible:
            raise ValueError(
                "diffusion_map needs a reversible operator (real spectrum), got one with "
                f"ε_rev = {self.reversibility_residual:.3g}"
            )
        n_components = self._check_components(n_components)
        t = check_in_range("t", t, 0.0)
        spectrum = self.spectrum(n_components + 1)
        mu, psi = spectrum.values[1:], spectrum.vectors[:, 1:]
        xp = namespace(mu)
        if t != int(t) and float(xp.min(mu)) < 0:
            raise ValueError(
                f"t must be an integer when P has negative eigenvalues (μ down to {float(xp.min(mu)):.3g}), got {t}"
            )
        return psi * (mu**t)[None, :]

    def _check_components(self, n_components) -> int:
        """The number of diffusion coordinates: the constant ψ₀ is skipped, so at most n − 1."""
        if self.n < 2:
            raise ValueError(f"n_components: a diffusion map needs at least 2 states, got n = {self.n}")
        return check_integer("n_components", n_components, 1, self.n - 1)

    def nystrom(self, points, n_components: int = 2, t: float = 1.0):
        r"""Extend the diffusion map to new points: :math:`\psi_k(x) = \mu_k^{-1}\sum_j\mathsf P(x, x_j)\,\psi_k(j)`.

        :math:`\mathsf P(x,\cdot)` is the same α-normalised Gauss kernel against the training points
        (:math:`q(x) = \sum_j \mathsf K(x, x_j)`, :math:`\mathsf K^{(\alpha)}(x, x_j) =
        \mathsf K(x,x_j)\,q(x)^{-\alpha}q_j^{-\alpha}`, then row-normalised), with the same sparsity
        rule; at a training point it reproduces :math:`\psi_k` exactly.  Only for operators built
        by :meth:`from_points`.

        Parameters
        ----------
        points : array, shape=[m, d]
        n_components, t
            As in :meth:`diffusion_map`.

        Returns
        -------
        array, shape=[m, n_components]
        """
        if self._sampling is None:
            raise ValueError("nystrom needs an operator built by MarkovOperator.from_points")
        train, beta, alpha, k, radius, q, zero_diagonal = self._sampling
        n_components = self._check_components(n_components)
        t = check_in_range("t", t, 0.0)
        points = as_array("points", points, ndim=2)
        if points.shape[0] == 0:
            raise ValueError(f"points must hold at least one new point (a row), got shape {tuple(points.shape)}")
        namespace(points=points, training_points=train)
        check_matching("points columns", points.shape[1], "training dimension", train.shape[1])
        cross = cross_kernel(points, train, beta, k, radius)
        if zero_diagonal:  # a new point that coincides with a training point does not weigh itself
            cross = drop_coincident(cross, points, train)
        q_new = row_sums(cross)
        if float(to_numpy(q_new).min()) <= 0.0:
            raise ValueError("some new points have no training neighbour within the kernel's support")
        if alpha:
            cross = scale_both(q_new ** (-alpha), cross, q ** (-alpha))
        transition = scale_rows(1.0 / row_sums(cross), cross)
        coordinates = self.diffusion_map(n_components, t)
        mu = self.spectrum(n_components + 1).values[1:]
        return (transition @ coordinates) / mu[None, :]


@contextlib.contextmanager
def _naming_tolerance(atol: float):
    """Add the tolerance parameter to a row-sum refusal: with a tight ``atol`` it is the knob to turn."""
    try:
        yield
    except ValueError as exc:
        raise ValueError(f"{exc} (tolerance atol={atol:g})") from None


def _default_beta(points, k, radius) -> float:
    """The scale ``from_points`` uses when none is given (see its docstring)."""
    if k is None and radius is None:
        # seed=0: above 2,000 points the median is taken over a subsample; a fixed one keeps the default β (and
        # every result built on it) the same from run to run.
        return median_bandwidth(to_numpy(points), seed=0)
    if radius is not None:
        radius = check_in_range("radius", radius, 0.0, low_inclusive=False)
        beta = 9.0 / radius / radius  # not 9 / radius**2: the square overflows first
        if not 0.0 < beta < math.inf:
            raise ValueError(
                f"radius = {radius!r} gives no default beta = 9/radius² in floating point ({beta!r}); pass beta"
            )
        return beta
    from scipy.spatial import cKDTree

    k = as_scalar(k)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < points.shape[0]:
        raise ValueError(f"k must be an integer in [1, n - 1] = [1, {points.shape[0] - 1}], got {k!r}")
    # Distances are scale-covariant: query on points / 2^e (exact), so the tree never overflows; then rescale.
    host = to_numpy(points)
    extent = float(np.abs(host).max()) if host.size else 0.0
    shift = math.frexp(extent)[1] if extent > 0.0 and math.isfinite(extent) else 0
    distance = cKDTree(np.ldexp(host, -shift)).query(np.ldexp(host, -shift), k=int(k) + 1, workers=-1)[0][:, -1]
    typical = float(np.median(distance**2))
    if typical <= 0.0:
        raise ValueError(f"cannot choose beta: the median distance to the {k}-th neighbour is 0 (duplicated points)")
    try:
        beta = math.ldexp(1.0 / typical, -2 * shift)
    except OverflowError:
        beta = math.inf
    if not 0.0 < beta < math.inf:
        raise ValueError(
            f"points (largest |entry| {extent:.3g}) give no default beta = 1/median d²_k in double precision "
            f"(median squared distance to the {k}-th neighbour {typical:g} × 2^{2 * shift}); rescale points or "
            "pass beta"
        )
    return beta
