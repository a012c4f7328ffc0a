r"""The models of the certified-radius experiment, their certificate and the attack that tests it.

:class:`CertifiableMLP` is the SPD-MLP (or the dense baseline) with certified layer norms;
:func:`certified_radius` the margin-over-Lipschitz radius, with its proof; :func:`l2_attack` the targeted
:math:`\ell_2` PGD attack whose failures inside the radius the certificate guarantees.

References
----------
Lie-Exponential Roadmap, "SPD-MLP with Lipschitz control" and "Robustness & certification" [SEED];
Tsuzuku, Sato & Sugiyama (2018), "Lipschitz-Margin Training", NeurIPS (arXiv:1802.04034), §3; Leino, Wang &
Fredrikson (2021), "Globally-Robust Neural Networks", ICML (arXiv:2102.08452); Madry et al. (2018), "Towards
Deep Learning Models Resistant to Adversarial Attacks", ICLR; Golub & Van Loan, *Matrix Computations*, 4th ed.,
§2.3 and Theorem 7.2.1 (Gershgorin).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from workbench.nn import SPDMap, gershgorin_bound
from workbench.validation import check_choice, check_in_range

__all__ = ["CertifiableMLP", "certified_radius", "l2_attack"]

#: The model kinds: SPD exponential layers, or unconstrained dense ones (the baseline).
MODEL_KINDS = ("spd", "dense")
#: Width of every layer (the SPD maps are square, so the hidden width is the 64 pixels).
WIDTH = 64
CLASSES = 10


class CertifiableMLP(nn.Module):
    r"""Two ReLU layers and a linear read-out, :math:`f(x) = V\varphi(x) + c`, with certified layer norms.

    .. math::

        \varphi(x) = \operatorname{ReLU}(W_2 \operatorname{ReLU}(W_1 x + b_1) + b_2), \qquad
        W_l = e^{S_l} \ (\texttt{spd}) \ \text{or}\ A_l \ (\texttt{dense}).

    Parameters
    ----------
    kind : {'spd', 'dense'}
        SPD exponential layers (:class:`workbench.nn.SPDMap`) or unconstrained matrices (``nn.Linear``).
    cap : float, optional
        Per-layer Lipschitz cap :math:`L > 1` of the SPD layers (Gershgorin-certified); not for ``dense``.
    width, classes : int
        Hidden and input width (equal: the SPD maps are square), number of classes.

    Examples
    --------
    >>> torch.manual_seed(0) and None
    >>> model = CertifiableMLP("spd", cap=1.5).double()
    >>> norms = model.layer_norms("exact")
    >>> bool(torch.all(norms <= 1.5 * (1 + 1e-12))), bool(torch.all(model.layer_norms("cheap") >= norms))
    (True, True)
    """

    def __init__(self, kind: str = "spd", cap: float | None = None, *, width: int = WIDTH, classes: int = CLASSES):
        super().__init__()
        self.kind = check_choice("kind", kind, MODEL_KINDS)
        if kind == "dense" and cap is not None:
            raise ValueError(f"cap must be None for a dense model (its layers have no cap), got {cap!r}")
        self.cap = cap
        if kind == "spd":
            self.maps = nn.ModuleList([SPDMap(width, cap) for _ in range(2)])
        else:
            self.maps = nn.ModuleList([nn.Linear(width, width, bias=False) for _ in range(2)])
        self.biases = nn.ParameterList([nn.Parameter(torch.zeros(width)) for _ in range(2)])
        self.readout = nn.Linear(width, classes)

    def extra_repr(self) -> str:
        return f"kind={self.kind!r}, cap={self.cap}"

    def weights(self) -> list[torch.Tensor]:
        """The layer matrices :math:`W_1, W_2` (dense ``[width, width]``, the parameters' dtype; differentiable)."""
        if self.kind == "spd":
            return [m.matrix() for m in self.maps]
        return [m.weight for m in self.maps]

    def features(self, x: torch.Tensor, weights: list[torch.Tensor] | None = None) -> torch.Tensor:
        r""":math:`\varphi(x)`, shape ``[..., width]``; ``weights`` reuses matrices from :meth:`weights`."""
        for W, b in zip(self.weights() if weights is None else weights, self.biases, strict=True):
            x = F.relu(x @ W.mT + b)
        return x

    def forward(self, x: torch.Tensor, weights: list[torch.Tensor] | None = None) -> torch.Tensor:
        """The logits :math:`f(x)`, shape ``[..., classes]``."""
        return self.readout(self.features(x, weights))

    def layer_norms(self, bound: str = "exact") -> torch.Tensor:
        r"""Certified upper bounds of :math:`\lVert W_l\rVert_2`, shape ``[2]`` (differentiable).

        ``"exact"``: :math:`e^{\lambda_{\max}(S_l)}` (``eigvalsh``) or :math:`\sigma_{\max}(A_l)`, equal to the
        norm up to rounding; ``"cheap"``: :math:`e^{g(S_l)}` with :math:`g` the Gershgorin bound, or
        :math:`\sqrt{\lVert A_l\rVert_1\lVert A_l\rVert_\infty}` (max column sum times max row sum).
        """
        check_choice("bound", bound, ("exact", "cheap"))
        norms = []
        for m in self.maps:
            if self.kind == "spd":
                S = m.generator()
                norms.append(torch.exp(torch.linalg.eigvalsh(S)[-1] if bound == "exact" else gershgorin_bound(S)))
            elif bound == "exact":
                norms.append(torch.linalg.matrix_norm(m.weight, ord=2))
            else:
                A = m.weight.abs()
                norms.append(torch.sqrt(A.sum(0).amax() * A.sum(1).amax()))
        return torch.stack(norms)

    def lipschitz(self, bound: str = "exact") -> torch.Tensor:
        r""":math:`\Lambda = \prod_l` :meth:`layer_norms` :math:`\ge \operatorname{Lip}(\varphi)` (a 0-d tensor)."""
        return self.layer_norms(bound).prod()

    def jacobian_norms(self, x: torch.Tensor) -> torch.Tensor:
        r""":math:`\lVert D_2(x) W_2 D_1(x) W_1\rVert_2` at each row of ``x`` (``[N, width] -> [N]``): lower bounds.

        :math:`D_l(x)` is the 0/1 mask of the active units; where :math:`\varphi` is differentiable this is the
        norm of its Jacobian, a lower bound of :math:`\operatorname{Lip}(\varphi)`.
        """
        W1, W2 = self.weights()
        h1 = F.relu(x @ W1.mT + self.biases[0])
        d1 = (h1 > 0).to(x.dtype)
        d2 = ((h1 @ W2.mT + self.biases[1]) > 0).to(x.dtype)
        J = d2[:, :, None] * W2 @ (d1[:, :, None] * W1)
        return torch.linalg.matrix_norm(J, ord=2)


def certified_radius(
    logits: torch.Tensor, labels: torch.Tensor, readout: torch.Tensor, lipschitz: float | torch.Tensor
) -> torch.Tensor:
    r"""The certified :math:`\ell_2` radius of each point, 0 where the prediction is not its label.

    .. math::

        r(x) = \max\Bigl(0,\ \min_{j \ne y} \frac{f_y(x) - f_j(x)}{\lVert v_y - v_j\rVert_2\,\Lambda}\Bigr),

    sound for :math:`f = V\varphi + c` with :math:`\operatorname{Lip}(\varphi) \le \Lambda`: the prediction
    is :math:`y` on the open ball of radius :math:`r(x)`.  A rival with :math:`v_j = v_y` counts only through
    its constant margin (0 if it is not positive).

    *Proof.*  For :class:`CertifiableMLP`, :math:`\Lambda = \prod_l \lVert W_l\rVert_2` bounds
    :math:`\operatorname{Lip}(\varphi)`: each map :math:`h \mapsto \operatorname{ReLU}(W_l h + b_l)` is
    :math:`\lVert W_l\rVert_2`-Lipschitz (ReLU is 1-Lipschitz coordinatewise, hence in :math:`\ell_2`; a
    translation changes nothing) and Lipschitz constants multiply under composition.  So :math:`\lVert
    \varphi(x+\delta) - \varphi(x)\rVert \le \Lambda\lVert\delta\rVert`, and the margin :math:`m_j = f_y - f_j =
    (v_y - v_j)^\top\varphi + c_y - c_j` moves by at most :math:`\lVert v_y - v_j\rVert\,\Lambda\,
    \lVert\delta\rVert` (Cauchy–Schwarz), less than :math:`m_j(x)` for every :math:`j \ne y` when
    :math:`\lVert\delta\rVert < r(x)`: all margins stay positive and :math:`y` stays the unique argmax.  A rival
    with :math:`v_j = v_y` has a constant margin :math:`c_y - c_j`, positive by assumption when it leaves the
    minimum. ∎

    Parameters
    ----------
    logits : torch.Tensor
        :math:`f(x)`, shape ``[N, K]``.
    labels : torch.Tensor
        Integer labels, shape ``[N]``.
    readout : torch.Tensor
        :math:`V`, shape ``[K, d]`` (``nn.Linear.weight``).
    lipschitz : float or torch.Tensor
        :math:`\Lambda > 0`.

    Returns
    -------
    torch.Tensor
        Shape ``[N]``, in the dtype of ``logits``.

    References
    ----------
    Tsuzuku, Sato & Sugiyama (2018), §3; Leino, Wang & Fredrikson (2021) (pairwise read-out norms).

    Examples
    --------
    A linear classifier on the line, :math:`f(x) = (x, -x)`: the boundary is :math:`x = 0`, at distance
    :math:`|x|`; :math:`\lVert v_1 - v_2\rVert = 2` and :math:`f_1 - f_2 = 2x`.

    >>> x = torch.tensor([[0.5], [-2.0], [1.0]], dtype=torch.float64)
    >>> V = torch.tensor([[1.0], [-1.0]], dtype=torch.float64)
    >>> certified_radius(x @ V.T, torch.tensor([0, 1, 1]), V, 1.0)
    tensor([0.5000, 2.0000, 0.0000], dtype=torch.float64)
    """
    if logits.ndim != 2 or labels.shape != logits.shape[:1] or readout.ndim != 2 or readout.shape[0] != logits.shape[1]:
        raise ValueError(
            f"logits, labels and readout must have shapes [N, K], [N], [K, d], got {tuple(logits.shape)}, "
            f"{tuple(labels.shape)}, {tuple(readout.shape)}"
        )
    if isinstance(lipschitz, torch.Tensor):
        lipschitz = float(lipschitz.detach())
    lam = check_in_range("lipschitz", lipschitz, 0.0, low_inclusive=False)
    margins = logits.gather(1, labels[:, None]) - logits  # m_j = f_y - f_j, [N, K]
    V = readout.to(logits.dtype)
    gaps = (V[labels][:, None, :] - V[None, :, :]).norm(dim=-1)  # ||v_y - v_j||, [N, K]
    rival = torch.ones_like(margins, dtype=torch.bool).scatter_(1, labels[:, None], False)
    zero_gap = gaps == 0
    ratio = margins / torch.where(zero_gap, torch.ones_like(gaps), gaps * lam)
    ratio = torch.where(zero_gap, torch.where(margins > 0, math.inf, 0.0).to(ratio), ratio)
    ratio = torch.where(rival, ratio, math.inf)
    return ratio.amin(dim=1).clamp(min=0.0)


def l2_attack(
    model,
    x: torch.Tensor,
    labels: torch.Tensor,
    radius: float | torch.Tensor,
    *,
    steps: int = 50,
    restarts: int = 2,
    seed: int = 0,
) -> torch.Tensor:
    r"""Projected gradient attack in the :math:`\ell_2` ball: which points' predictions it changes.

    For each point and each rival class :math:`j` it ascends the targeted margin :math:`f_j - f_y` by
    normalised gradient steps :math:`\delta \leftarrow \Pi_{\lVert\delta\rVert \le \varepsilon}(\delta +
    \alpha\, g/\lVert g\rVert)`, :math:`\alpha = 2.5\varepsilon/\text{steps}`, the first restart from
    :math:`\delta = 0` and the others from uniform points of the ball; a point counts as broken if any
    iterate predicts another class (so a point misclassified at :math:`\delta = 0` is broken).

    Parameters
    ----------
    model : callable
        Maps ``[N, d]`` to logits ``[N, K]`` (differentiable in its input).
    x, labels : torch.Tensor
        Points ``[N, d]`` and labels ``[N]``.
    radius : float or torch.Tensor
        :math:`\varepsilon \ge 0`, one for all points or one per point (``[N]``).
    steps, restarts, seed : int
        PGD steps per restart, restarts, the seed of the random starts.

    Returns
    -------
    torch.Tensor
        Boolean ``[N]``: True where the attack found a perturbation that changes the prediction.

    References
    ----------
    Madry et al. (2018), §2 (PGD).

    Examples
    --------
    The linear classifier of :func:`certified_radius`: a point at distance 0.5 from the boundary is broken at
    radius 0.6 and not at 0.4.

    >>> V = torch.tensor([[1.0], [-1.0]], dtype=torch.float64)
    >>> x, y = torch.tensor([[0.5], [0.5]], dtype=torch.float64), torch.tensor([0, 0])
    >>> l2_attack(lambda z: z @ V.T, x, y, torch.tensor([0.4, 0.6], dtype=torch.float64), steps=5).tolist()
    [False, True]
    """
    N, d = x.shape
    radius = torch.as_tensor(radius, dtype=x.dtype, device=x.device).expand(N)
    with torch.no_grad():
        K = model(x[:1]).shape[1]
    classes = torch.arange(K, device=x.device)
    rivals = classes.expand(N, K)[classes[None, :] != labels[:, None]].reshape(N, K - 1)
    xs = x.repeat_interleave(K - 1, 0)
    ys = labels.repeat_interleave(K - 1)
    targets = rivals.reshape(-1)
    eps = radius.repeat_interleave(K - 1)[:, None]
    alpha = 2.5 * eps / steps
    generator = torch.Generator(device=x.device).manual_seed(seed)
    broken = torch.zeros(len(xs), dtype=torch.bool, device=x.device)
    for restart in range(restarts):
        if restart == 0:
            delta = torch.zeros_like(xs)
        else:
            u = torch.randn(xs.shape, generator=generator, dtype=x.dtype, device=x.device)
            scale = torch.rand(len(xs), 1, generator=generator, dtype=x.dtype, device=x.device) ** (1.0 / d)
            delta = eps * scale * u / u.norm(dim=1, keepdim=True)
        for step in range(steps + 1):
            delta.requires_grad_(True)
            logits = model(xs + delta)
            broken |= logits.detach().argmax(1) != ys
            if step == steps:
                break
            objective = (logits.gather(1, targets[:, None]) - logits.gather(1, ys[:, None])).sum()
            (grad,) = torch.autograd.grad(objective, delta)
            with torch.no_grad():
                delta = delta + alpha * grad / grad.norm(dim=1, keepdim=True).clamp(min=1e-30)
                delta = delta * torch.clamp(eps / delta.norm(dim=1, keepdim=True).clamp(min=1e-30), max=1.0)
    return broken.reshape(N, K - 1).any(dim=1)
