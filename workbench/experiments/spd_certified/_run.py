r"""SPD-MLPs with Lipschitz caps: certified :math:`\ell_2` radius against accuracy on handwritten digits.

The model (:class:`workbench.experiments.CertifiableMLP`, ``kind="spd"``) is

.. math::

    h_1 = \operatorname{ReLU}(e^{S_1}x + b_1), \qquad h_2 = \operatorname{ReLU}(e^{S_2}h_1 + b_2), \qquad
    f(x) = V h_2 + c,

with :math:`S_l = S_l^\top` (:class:`workbench.nn.SPDMap`), so :math:`\lVert e^{S_l}\rVert_2 =
e^{\lambda_{\max}(S_l)}`; a cap :math:`L` scales :math:`S_l` until its Gershgorin bound is at most
:math:`\log L`, which certifies :math:`\lVert e^{S_l}\rVert_2 \le L`.  The baseline (``kind="dense"``) has the
same widths (64 → 64 → 64 → 10) with unconstrained matrices :math:`A_l`, the same optimiser, steps, batches
and batch order.

**The certificate.**  Write :math:`f(x) = V\varphi(x) + c` and let :math:`\Lambda \ge \prod_l \lVert W_l
\rVert_2`.  *Claim:* a point :math:`x` predicted as :math:`y` keeps that prediction for every
:math:`\lVert\delta\rVert_2 < r(x)`, where

.. math::

    r(x) = \min_{j \ne y} \frac{f_y(x) - f_j(x)}{\lVert v_y - v_j \rVert_2\,\Lambda}.

The proof (ReLU is 1-Lipschitz, norms multiply under composition, Cauchy–Schwarz on the margins) is
written out at :func:`workbench.experiments.certified_radius`.

Two values of :math:`\Lambda` are certified and reported: the **cheap** one, :math:`O(d^2)` per layer (the
Gershgorin bound :math:`e^{g(S_l)}` for an SPD layer, the bound the cap enforces; :math:`\sqrt{\lVert A\rVert_1
\lVert A\rVert_\infty}` for a dense one), and the **exact** product of layer norms (:math:`e^{\lambda_{\max}
(S_l)}` by ``eigvalsh``; :math:`\sigma_{\max}(A_l)` by SVD).  Both are upper bounds of :math:`\operatorname{Lip}
(\varphi)`; the largest Jacobian norm :math:`\lVert D_2 W_2 D_1 W_1\rVert_2` over the test points
(:math:`D_l` the ReLU masks) is a lower one, and their ratio shows how loose the product of norms is.

**Measured** per model: clean test accuracy; certified accuracy at each :math:`\varepsilon` (the fraction of
test points predicted correctly with :math:`r(x) > \varepsilon`); the median radius over correct points; the
bounds; and the empirical robust accuracy under an :math:`\ell_2` PGD attack
(:func:`workbench.experiments.l2_attack`) at each :math:`\varepsilon`, whose gap to the certified accuracy is
the looseness of the certificate, and the median ratio of the smallest radius at which the attack succeeds
(bisection) to :math:`r(x)`.  Perturbations are not clipped to :math:`[0, 1]^{64}` (the certificate holds on
all of :math:`\mathbb R^{64}`).  **Soundness oracle:** attacks at :math:`0.99\,r(x)` must never change a
prediction, and no point certified at :math:`\varepsilon` may be broken by the attack at
:math:`\varepsilon`; both are counted in every run.

Data: scikit-learn's bundled digits (1,797 images of 8 × 8 pixels, features divided by 16), one stratified
split with 450 test images (``random_state=0``), the same for every seed; the seed drives initialisation
and batch order.  A cap of exactly 1 is not available: the scaling cap of :class:`workbench.nn.SPDMap`
would need :math:`\lambda_{\max}(S) \le 0` and forces :math:`S = 0`, so caps are :math:`L > 1`.  Optional
Lipschitz-margin training (``margin`` :math:`\varepsilon_{\mathrm{train}} > 0`) raises each rival logit by
:math:`\varepsilon_{\mathrm{train}}\lVert v_y - v_j\rVert\Lambda_{\mathrm{exact}}` inside the cross-entropy,
so the loss asks for :math:`r(x) > \varepsilon_{\mathrm{train}}` directly.

References
----------
Lie-Exponential Roadmap, "SPD-MLP with Lipschitz control" (:math:`W = \exp S`, :math:`\lambda_{\max}(S) \le
\log L`) and "Robustness & certification" (certified radii against accuracy) [SEED]; the experiment's design
[RECON].  Y. Tsuzuku, I. Sato and M. Sugiyama, "Lipschitz-Margin Training", NeurIPS 2018 (arXiv:1802.04034),
§3 (margin over Lipschitz constant certifies) and §4 (the training); K. Leino, Z. Wang and M. Fredrikson,
"Globally-Robust Neural Networks", ICML 2021 (arXiv:2102.08452) (the pairwise :math:`\lVert v_y - v_j\rVert`);
A. Madry et al., "Towards Deep Learning Models Resistant to Adversarial Attacks", ICLR 2018 (PGD);
G. H. Golub and C. F. Van Loan, *Matrix Computations*, 4th ed., §2.3 (:math:`\lVert A\rVert_2^2 \le \lVert
A\rVert_1\lVert A\rVert_\infty`) and Theorem 7.2.1 (Gershgorin).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from workbench.experiments.common import RunLog, jsonable
from workbench.experiments.common import progress as _progress_bar
from workbench.experiments.spd_certified._config import SPLIT_STATE, SPDCertifiedConfig, digits_split, model_name
from workbench.experiments.spd_certified._model import CertifiableMLP, certified_radius, l2_attack

__all__ = ["run_spd_certified"]


def _random_flips(model, x, labels, radius, n, seed) -> torch.Tensor:
    """Boolean ``[N]``: some of ``n`` uniform directions on the sphere of ``radius`` changes the prediction."""
    generator = torch.Generator(device=x.device).manual_seed(seed)
    u = torch.randn((n, *x.shape), generator=generator, dtype=x.dtype, device=x.device)
    delta = radius[None, :, None] * u / u.norm(dim=-1, keepdim=True)
    with torch.no_grad():
        return (model(x[None] + delta).argmax(-1) != labels[None]).any(0)


def _attack_radius(model, x, labels, radius, config) -> torch.Tensor:
    """The smallest radius (to 2^-6 relative) at which :func:`l2_attack` broke each point, from ``radius`` up.

    Doubling finds a broken radius, bisection narrows it; a point never broken reports ``2^12 radius``.
    """
    low, high = radius.clone(), radius.clone()
    for _ in range(12):
        unbroken = ~l2_attack(model, x, labels, high, steps=config.attack_steps, restarts=config.attack_restarts)
        if not unbroken.any():
            break
        low = torch.where(unbroken, high, low)
        high = torch.where(unbroken, 2 * high, high)
    for _ in range(6):
        middle = 0.5 * (low + high)
        hit = l2_attack(model, x, labels, middle, steps=config.attack_steps, restarts=config.attack_restarts)
        high, low = torch.where(hit, middle, high), torch.where(hit, low, middle)
    return high


# ---- training and measurement ---------------------------------------------------------------------------------


def _train(model: CertifiableMLP, data: dict, config: SPDCertifiedConfig, label: str, progress: bool) -> dict:
    """AdamW with cosine decay on batches drawn by ``default_rng([seed, 0])``; the loss and accuracy curve."""
    x, y = data["x_train"], data["y_train"]
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, config.steps)
    rng = np.random.default_rng([config.seed, 0])
    curve: dict[str, list] = {"steps": [], "train_loss": [], "test_accuracy": []}
    window = []
    with _progress_bar(config.steps, label, progress) as bar:
        for step in range(config.steps):
            index = torch.from_numpy(rng.integers(0, len(y), config.batch)).to(x.device)
            logits = model(x[index])
            if config.margin > 0:  # raise each rival j by eps ||v_y - v_j|| Lambda (zero for j = y)
                V = model.readout.weight
                gaps = (V[y[index]][:, None, :] - V[None, :, :]).norm(dim=-1)
                logits = logits + config.margin * gaps * model.lipschitz("exact")
            loss = F.cross_entropy(logits, y[index])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            window.append(loss.item())
            if (step + 1) % config.log_every == 0 or step + 1 == config.steps:
                with torch.no_grad():
                    accuracy = (model(data["x_test"]).argmax(1) == data["y_test"]).double().mean().item()
                curve["steps"].append(step + 1)
                curve["train_loss"].append(float(np.mean(window)))
                curve["test_accuracy"].append(accuracy)
                bar.set_postfix(acc=f"{accuracy:.3f}")
                window = []
            bar.update(1)
    return curve


def _median(values: torch.Tensor) -> float:
    return float(np.median(values.cpu().numpy())) if values.numel() else math.nan


def _measure(model: CertifiableMLP, data64: dict, config: SPDCertifiedConfig) -> dict:
    """Accuracy, certificates, bounds, attacks and the soundness counts of a trained model (float64)."""
    model = copy.deepcopy(model).double().eval()
    for p in model.parameters():
        p.requires_grad_(False)
    x, y = data64["x_test"], data64["y_test"]
    with torch.no_grad():
        weights = model.weights()
        logits = model(x, weights)
        train_accuracy = (model(data64["x_train"], weights).argmax(1) == data64["y_train"]).double().mean()
        norms = {b: model.layer_norms(b) for b in ("cheap", "exact")}
        radii = {b: certified_radius(logits, y, model.readout.weight, norms[b].prod()) for b in norms}
        lower = float(model.jacobian_norms(x).max())

    def forward(z):
        return model(z, weights)

    correct = logits.argmax(1) == y
    certified = {b: [float((radii[b] > eps).double().mean()) for eps in config.radii] for b in radii}
    robust, violations = [], []
    for k, eps in enumerate(config.radii):
        broken = l2_attack(
            forward, x, y, eps, steps=config.attack_steps, restarts=config.attack_restarts, seed=config.seed + k
        )
        robust.append(float((~broken).double().mean()))
        violations.append(int((broken & (radii["exact"] > eps)).sum()))
    # The soundness oracle: a sample of certified points attacked just inside their radius.
    pool = torch.nonzero(radii["exact"] > 0).flatten().cpu().numpy()
    rng = np.random.default_rng([config.seed, 1])
    chosen = torch.from_numpy(rng.choice(pool, min(config.sound_points, len(pool)), replace=False)).to(x.device)
    xs, ys, rs = x[chosen], y[chosen], radii["exact"][chosen]
    attack_flips = l2_attack(forward, xs, ys, 0.99 * rs, steps=config.attack_steps, restarts=config.attack_restarts)
    random_flips = _random_flips(forward, xs, ys, 0.99 * rs, config.random_directions, config.seed)
    found = _attack_radius(forward, xs, ys, rs, config) if len(chosen) else rs
    return {
        "accuracy": float(correct.double().mean()),
        "train_accuracy": float(train_accuracy),
        "layer_norms_cheap": norms["cheap"].tolist(),
        "layer_norms_exact": norms["exact"].tolist(),
        "lip_cheap": float(norms["cheap"].prod()),
        "lip_exact": float(norms["exact"].prod()),
        "lip_lower": lower,
        "median_radius_cheap": _median(radii["cheap"][correct]),
        "median_radius_exact": _median(radii["exact"][correct]),
        "certified_cheap": certified["cheap"],
        "certified_exact": certified["exact"],
        "robust": robust,
        "violations": violations,
        "sound_points": len(chosen),
        "sound_attack_flips": int(attack_flips.sum()),
        "sound_random_flips": int(random_flips.sum()),
        "attack_radius_ratio_median": _median(found / rs),
        "radii_cheap": radii["cheap"].tolist(),
        "radii_exact": radii["exact"].tolist(),
    }


def run_spd_certified(
    config: SPDCertifiedConfig | None = None,
    *,
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""Train the capped SPD-MLPs and the dense baseline on the digits; certify, attack and compare them.

    Each model is one condition (``spd-L<cap>``, ``spd-free``, ``mlp``) trained with matched budgets (same
    steps, batches, batch order and learning-rate schedule), then measured in float64: accuracy, certified
    accuracy at each ``radii`` value by the cheap and the exact bound, the median radius, the Lipschitz
    bounds, the empirical robust accuracy under :func:`l2_attack`, and the soundness counts.

    Parameters
    ----------
    config : SPDCertifiedConfig, optional
        Defaults to the paper preset.
    out : path, optional
        Run directory (:class:`workbench.experiments.RunLog`): per model ``<name>.pt`` and ``<name>.json``,
        then ``results.json``, ``table.md`` and ``certified_radius.png``.
    progress, force, resume : bool
        A progress bar; reuse a non-empty ``out``; continue an unfinished run in ``out``.

    Returns
    -------
    dict
        JSON-able ``{"experiment": "spd-certified", "config", "data", "runs": [row], "checks"}``; a row holds
        ``model, kind, cap, parameters, seconds, curve`` and the measurements listed in the module docstring
        (``certified_*``, ``robust``, ``violations`` per ``radii`` value; ``radii_*`` per test point).

    References
    ----------
    Lie-Exponential Roadmap, "SPD-MLP with Lipschitz control", "Robustness & certification" [SEED].

    Examples
    --------
    >>> cfg = SPDCertifiedConfig.preset("quick", caps=(2.0,), steps=5, attack_steps=2, sound_points=4,
    ...                                 random_directions=2, radii=(0.0, 0.5))
    >>> result = run_spd_certified(cfg, progress=False)
    >>> [r["model"] for r in result["runs"]], result["checks"]["all"]
    (['spd-L2', 'mlp'], True)
    """
    if config is None:
        config = SPDCertifiedConfig.preset("paper")
    if not isinstance(config, SPDCertifiedConfig):
        raise TypeError(f"config must be an SPDCertifiedConfig, got {type(config).__name__}")
    models = [("spd", cap) for cap in config.caps] + [("dense", None)]
    names = [model_name(kind, cap) for kind, cap in models]
    split = digits_split()
    data, data64 = {}, {}
    for key, value in split.items():
        tensor = torch.from_numpy(value).to(config.device)
        data[key] = tensor.float() if key.startswith("x") else tensor
        data64[key] = tensor
    log = RunLog.open(
        out,
        experiment="spd-certified",
        config=dataclasses.asdict(config),
        conditions=names,
        selection={},
        artefacts=frozenset({"results.json", "table.md", "certified_radius.png"})
        | {f"{n}{s}" for n in names for s in (".pt", ".json")},
        force=force,
        resume=resume,
    )
    rows = []
    with log:
        for (kind, cap), name in zip(models, names, strict=True):
            row = log.finished(name)
            if row is None:
                torch.manual_seed(config.seed)  # every SPD model starts from the same M_l
                model = CertifiableMLP(kind, cap).to(config.device)
                start = time.perf_counter()
                curve = _train(model, data, config, f"spd-certified {name}", progress)
                seconds = time.perf_counter() - start
                row = {
                    "model": name,
                    "kind": kind,
                    "cap": cap,
                    "parameters": sum(p.numel() for p in model.parameters()),
                }
                row.update(seconds=seconds, curve=curve, **_measure(model, data64, config))
                log.keep(name, jsonable(row), model.state_dict())
            rows.append(row)
        result = jsonable(
            {
                "experiment": "spd-certified",
                "config": dataclasses.asdict(config),
                "data": {"train": len(split["y_train"]), "test": len(split["y_test"]), "split_state": SPLIT_STATE},
                "runs": rows,
                "checks": _checks(rows, config),
            }
        )
        if log.path is not None:
            from workbench.experiments.spd_certified._report import save_figure, spd_certified_table

            log.write_results(result, spd_certified_table(result))
            save_figure(result, log.path)
    return result


def _checks(rows: list[dict], config: SPDCertifiedConfig) -> dict[str, Any]:
    """Structural invariants, true by theorem whatever the training did."""
    tol = 1e-9  # float64 rounding of exp, eigvalsh and SVD on 64 x 64 matrices, with room
    checks = {
        # No point certified at eps is broken at eps, and none is broken just inside its radius.
        "certificates_sound": all(
            sum(r["violations"]) == 0 and r["sound_attack_flips"] == 0 and r["sound_random_flips"] == 0 for r in rows
        ),
        # cheap >= exact >= the largest Jacobian norm seen.
        "bounds_ordered": all(
            r["lip_cheap"] >= r["lip_exact"] * (1 - tol) and r["lip_exact"] >= r["lip_lower"] * (1 - tol) for r in rows
        ),
        "caps_respected": all(
            max(r["layer_norms_cheap"]) <= r["cap"] * (1 + tol) for r in rows if r["kind"] == "spd" and r["cap"]
        ),
        "certified_within_robust": all(
            c <= e + 1e-12 for r in rows for c, e in zip(r["certified_exact"], r["robust"], strict=True)
        ),
        "finite": all(math.isfinite(r["accuracy"]) and math.isfinite(r["lip_exact"]) for r in rows),
    }
    checks["all"] = all(checks.values())
    return checks
