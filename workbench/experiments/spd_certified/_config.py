r"""Settings of the certified-radius experiment and its data: the caps, the radius grid, the digits split.

:class:`SPDCertifiedConfig` holds the settings of :func:`workbench.experiments.run_spd_certified`;
:func:`digits_split` the fixed stratified split of scikit-learn's bundled handwritten digits (1,347 training and
450 test images of 8 × 8 pixels, features divided by 16).  Only numpy and scikit-learn are needed here.

References
----------
Lie-Exponential Roadmap, "SPD-MLP with Lipschitz control" and "Robustness & certification" [SEED]; E. Alpaydin
and C. Kaynak (1998), UCI Optical Recognition of Handwritten Digits (the data set scikit-learn ships).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any, ClassVar

import numpy as np

from workbench.experiments.common import (
    TRAINING_CHECKS,
    Check,
    ExperimentConfig,
    device_check,
    integer_check,
    name_check,
    range_check,
)
from workbench.validation import check_in_range

__all__ = ["SPDCertifiedConfig", "digits_split"]

#: The fixed split: test images, and scikit-learn's random_state (independent of the experiment's seed).
TEST_SIZE, SPLIT_STATE = 450, 0


def _check_caps(config, name: str, caps) -> None:
    if not isinstance(caps, tuple) or not caps:
        raise ValueError(f"{name} must be a non-empty tuple of Lipschitz caps (floats > 1, or None), got {caps!r}")
    for i, cap in enumerate(caps):
        if cap is not None:
            try:
                check_in_range(f"{name}[{i}]", cap, 1.0, low_inclusive=False)
            except ValueError:
                raise ValueError(
                    f"{name}[{i}] must be a cap L > 1 or None (SPDMap scales S to lambda_max(S) <= log L, so L = 1 "
                    f"forces S = 0), got {cap!r}"
                ) from None
    names = [model_name("spd", cap) for cap in caps]
    if len(set(names)) != len(names):
        raise ValueError(f"{name} must be distinct (to 6 significant digits), got {caps!r}")


def _check_radii(config, name: str, radii) -> None:
    if not isinstance(radii, tuple) or not radii:
        raise ValueError(f"{name} must be a non-empty tuple of radii >= 0, got {radii!r}")
    for i, r in enumerate(radii):
        check_in_range(f"{name}[{i}]", r, 0.0)
    if any(b <= a for a, b in itertools.pairwise(radii)):
        raise ValueError(f"{name} must be strictly increasing, got {radii!r}")


_PRESETS: dict[str, dict[str, Any]] = {
    # Seconds on one core: every code path, two SPD models and the baseline; no claim about the trade-off.
    "quick": dict(caps=(1.5, None), steps=60, log_every=30, attack_steps=10, attack_restarts=1, sound_points=16),
    # Six SPD caps and the baseline, 2000 steps each: about 4 min per seed on one core (training ~2 min, attacks
    # ~2 min), so 3 seeds in about 12 min.
    "paper": dict(),
}


@dataclasses.dataclass(frozen=True)
class SPDCertifiedConfig(ExperimentConfig):
    r"""Settings of the certified-radius experiment.

    Parameters
    ----------
    seed : int
        Seeds the initial weights (every SPD model starts from the same :math:`M_l`) and the batch order (the
        same for every model); the train/test split is fixed.
    caps : tuple of float or None
        The SPD models' per-layer caps :math:`L > 1`; ``None`` is an uncapped SPD model.  The dense baseline
        is always trained too.
    steps, batch, lr, weight_decay : int, int, float, float
        AdamW steps (cosine decay of the learning rate to 0), images per step, peak learning rate, decay.
    margin : float
        Lipschitz-margin training radius :math:`\varepsilon_{\mathrm{train}}` (0: plain cross-entropy).
    radii : tuple of float
        The :math:`\varepsilon` grid of certified and empirical robust accuracy (strictly increasing, >= 0).
    attack_steps, attack_restarts : int
        PGD steps per restart and restarts (the first from :math:`\delta = 0`) of :func:`l2_attack`.
    random_directions : int
        Random perturbations per point in the soundness oracle.
    sound_points : int
        Test points attacked at :math:`0.99\,r(x)` (and bisected for the attack radius).
    log_every : int
        Record the training loss and test accuracy every so many steps.
    device, name : str
        ``"cpu"`` or ``"cuda[:N]"``; the preset's name (``"custom"`` otherwise).

    Examples
    --------
    >>> SPDCertifiedConfig.preset("quick").caps, SPDCertifiedConfig.preset("paper").caps
    ((1.5, None), (1.1, 1.25, 1.5, 2.0, 4.0, None))
    >>> SPDCertifiedConfig(caps=(1.0, 2.0))
    Traceback (most recent call last):
        ...
    ValueError: caps[0] must be a cap L > 1 or None (SPDMap scales S to lambda_max(S) <= log L, so L = 1 forces S = 0), got 1.0
    """  # noqa: E501

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    CHECKS: ClassVar[dict[str, Check]] = {
        **TRAINING_CHECKS,
        "caps": _check_caps,
        "margin": range_check(0.0),
        "radii": _check_radii,
        "attack_steps": integer_check(1),
        "attack_restarts": integer_check(1),
        "random_directions": integer_check(1),
        "sound_points": integer_check(1),
        "device": device_check,
        "name": name_check,
    }

    seed: int = 0
    caps: tuple = (1.1, 1.25, 1.5, 2.0, 4.0, None)
    steps: int = 2000
    batch: int = 64
    lr: float = 3e-3
    weight_decay: float = 0.0
    margin: float = 0.0
    radii: tuple = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
    attack_steps: int = 50
    attack_restarts: int = 2
    random_directions: int = 32
    sound_points: int = 64
    log_every: int = 250
    device: str = "cpu"
    name: str = "custom"


def model_name(kind: str, cap: float | None = None) -> str:
    """The condition name of a model: ``"mlp"``, ``"spd-free"`` or ``"spd-L<cap>"`` (e.g. ``"spd-L1.5"``)."""
    if kind == "dense":
        return "mlp"
    return "spd-free" if cap is None else f"spd-L{cap:g}"


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, ...]:
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError as exc:  # the digits ship with scikit-learn, which only the experiments extra installs
        raise ImportError(
            "the SPD-certified experiment reads scikit-learn's bundled digits: "
            "pip install 'attention-workbench[experiments]'"
        ) from exc

    data = load_digits()
    x = (data.data / 16.0).astype(np.float64)
    return tuple(train_test_split(x, data.target, test_size=TEST_SIZE, stratify=data.target, random_state=SPLIT_STATE))


def digits_split() -> dict[str, np.ndarray]:
    r"""The fixed stratified split of scikit-learn's bundled digits: 1,347 training and 450 test images.

    Features are the 64 pixel intensities divided by 16 (so in :math:`[0, 1]`); the split is
    ``train_test_split(test_size=450, stratify=y, random_state=0)``, the same for every seed.

    Returns
    -------
    dict
        ``x_train`` ``[1347, 64]``, ``y_train``, ``x_test`` ``[450, 64]``, ``y_test`` (float64 and int arrays;
        copies, so a caller may change them).

    References
    ----------
    E. Alpaydin and C. Kaynak (1998), UCI Optical Recognition of Handwritten Digits (the 8 × 8 version
    scikit-learn ships).

    Examples
    --------
    >>> split = digits_split()
    >>> split["x_train"].shape, split["x_test"].shape, float(split["x_test"].max())
    ((1347, 64), (450, 64), 1.0)
    >>> np.bincount(split["y_test"]).tolist()  # stratified: each digit's share of the 1,797 kept
    [45, 46, 44, 46, 45, 46, 45, 45, 43, 45]
    """
    x_train, x_test, y_train, y_test = _digits()
    return {"x_train": x_train.copy(), "y_train": y_train.copy(), "x_test": x_test.copy(), "y_test": y_test.copy()}
