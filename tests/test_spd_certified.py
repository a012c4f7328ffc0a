"""SPD-MLPs with Lipschitz caps: layer bounds, the certified radius, the attack, and the experiment's run.

Oracles: the layer norms against a dense float64 reference (``scipy.linalg.expm`` then the 2-norm by SVD); the
network bound against empirical difference quotients and against Jacobians computed by autograd; the radius of a
linear classifier against the distance to its decision boundary found by a constrained minimiser (SLSQP); the
attack against the closed form for a linear classifier; the certificate against the attack (soundness is a
theorem, so no attack may break a point inside its radius); a resumed run against the uninterrupted one.
"""

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
scipy_linalg = pytest.importorskip("scipy.linalg")
scipy_optimize = pytest.importorskip("scipy.optimize")

from workbench.experiments.spd_certified import (  # noqa: E402  # noqa: E402
    CertifiableMLP,
    SPDCertifiedConfig,
    certified_radius,
    digits_split,
    l2_attack,
    run_spd_certified,
    spd_certified_rows,
    spd_certified_table,
)

torch.set_num_threads(1)


def _scaled(model: CertifiableMLP, factor: float) -> CertifiableMLP:
    """The model with its layer parameters multiplied by ``factor`` (to push the spectra past a cap)."""
    with torch.no_grad():
        for m in model.maps:
            m.weight.mul_(factor)
    return model


@pytest.mark.parametrize(("cap", "factor"), [(None, 1.0), (None, 3.0), (1.5, 1.0), (1.5, 10.0), (4.0, 3.0)])
def test_spd_layer_bounds_against_the_dense_exponential(cap, factor):
    # Oracle: scipy.linalg.expm of the (capped) generator, its 2-norm by SVD, all float64.  The eigvalsh bound
    # e^{lambda_max(S)} is the norm itself: equal to 1e-12 relative (expm and SVD are backward stable to ~1e-15
    # per entry on these well-scaled 64 x 64 matrices; the tolerance leaves three orders of room).  The
    # Gershgorin bound is an upper bound, and a cap, when given, bounds both.
    torch.manual_seed(0)
    model = _scaled(CertifiableMLP("spd", cap).double(), factor)
    exact, cheap = model.layer_norms("exact").detach(), model.layer_norms("cheap").detach()
    for k, layer in enumerate(model.maps):
        S = layer.generator().detach().numpy()
        reference = np.linalg.norm(scipy_linalg.expm(S), 2)
        assert float(exact[k]) == pytest.approx(reference, rel=1e-12)
        assert float(cheap[k]) >= reference * (1 - 1e-12)
        if cap is not None:
            assert float(cheap[k]) <= cap * (1 + 1e-12)
    assert float(model.lipschitz("exact").detach()) == pytest.approx(float(exact.prod()), rel=1e-15)


def test_dense_layer_bounds_against_svd_and_the_norm_inequality():
    # Oracle: numpy's SVD 2-norm (equal to 1e-12: two SVD implementations of one matrix), and the inequality
    # ||A||_2 <= sqrt(||A||_1 ||A||_inf) with the two norms from numpy (the cheap bound is that product, 1e-12).
    torch.manual_seed(1)
    model = CertifiableMLP("dense").double()
    for k, layer in enumerate(model.maps):
        A = layer.weight.detach().numpy()
        assert float(model.layer_norms("exact")[k].detach()) == pytest.approx(np.linalg.norm(A, 2), rel=1e-12)
        cheap = math.sqrt(np.linalg.norm(A, 1) * np.linalg.norm(A, np.inf))
        assert float(model.layer_norms("cheap")[k].detach()) == pytest.approx(cheap, rel=1e-12)
        assert cheap >= np.linalg.norm(A, 2)


def test_the_model_is_the_composition_of_its_layers():
    # Oracle: SPDMap's own forward (x -> x e^{S}) composed by hand; the reuse of precomputed matrices changes
    # nothing.  float64: equal to 1e-12 (the same products in another association order).
    torch.manual_seed(2)
    model = _scaled(CertifiableMLP("spd", 2.0).double(), 5.0)
    x = torch.rand(7, 64, dtype=torch.float64)
    h = torch.relu(model.maps[0](x) + model.biases[0])
    h = torch.relu(model.maps[1](h) + model.biases[1])
    expected = model.readout(h)
    torch.testing.assert_close(model(x), expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(model(x, model.weights()), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("kind", "cap", "factor"), [("spd", None, 4.0), ("spd", 3.0, 10.0), ("dense", None, 3.0)])
def test_the_network_bound_dominates_difference_quotients_and_jacobians(kind, cap, factor):
    # Oracles: (1) ||phi(x) - phi(x')|| / ||x - x'|| on random far and near pairs, and the same for the logits
    # against ||V||_2 Lambda; (2) the Jacobian of phi by autograd at random points equals the closed form
    # D2 W2 D1 W1 of jacobian_norms (to 1e-10: float64 products of 64 x 64 matrices), and its norm is below
    # Lambda.  A bound below any of these would not be a Lipschitz bound.
    torch.manual_seed(3)
    model = _scaled(CertifiableMLP(kind, cap).double(), factor)
    with torch.no_grad():
        model.biases[0].normal_()
        model.biases[1].normal_()
    model.requires_grad_(False)  # the Jacobians below are in the input only
    lam = float(model.lipschitz("exact"))
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(200, 64, generator=generator, dtype=torch.float64)
    for x2 in (torch.rand(200, 64, generator=generator, dtype=torch.float64), x + 1e-4 * torch.randn_like(x)):
        with torch.no_grad():
            ratio = (model.features(x) - model.features(x2)).norm(dim=1) / (x - x2).norm(dim=1)
            logit_ratio = (model(x) - model(x2)).norm(dim=1) / (x - x2).norm(dim=1)
        assert float(ratio.max()) <= lam * (1 + 1e-12)
        assert float(logit_ratio.max()) <= lam * float(torch.linalg.matrix_norm(model.readout.weight, 2)) * (1 + 1e-12)
    norms = model.jacobian_norms(x[:5].detach())
    for i in range(5):
        J = torch.autograd.functional.jacobian(model.features, x[i])
        assert float(torch.linalg.matrix_norm(J, 2)) == pytest.approx(float(norms[i]), rel=1e-10)
    assert float(norms.max()) <= lam * (1 + 1e-12)


def _linear_classifier(seed: int, n: int = 12, d: int = 4, k: int = 3):
    rng = np.random.default_rng(seed)
    V, c, x = rng.normal(size=(k, d)), rng.normal(size=k), rng.normal(size=(n, d))
    return V, c, x


def test_the_radius_of_a_linear_classifier_is_the_distance_to_its_decision_boundary():
    # Oracle: for f(x) = V x + c with identity features (Lambda = 1), the distance from x to the set where the
    # prediction changes, min_j min {||z - x|| : f_j(z) >= f_y(z)}, found by SLSQP (a second algorithm: a
    # constrained minimiser, no formula).  The two agree to 1e-6 (SLSQP's tolerance set to 1e-12 on the
    # squared distance; its constraint is met to ~1e-10).
    V, c, x = _linear_classifier(0)
    logits = x @ V.T + c
    y = logits.argmax(1)
    labels = torch.from_numpy(np.where(np.arange(len(y)) % 4 == 3, (y + 1) % 3, y))  # a few misclassified
    radius = certified_radius(torch.from_numpy(logits), labels, torch.from_numpy(V), 1.0).numpy()
    for i in range(len(x)):
        if labels[i] != y[i]:
            assert radius[i] == 0.0
            continue
        distances = []
        for j in range(3):
            if j == y[i]:
                continue
            constraint = {"type": "ineq", "fun": lambda z, j=j, yi=y[i]: (V[j] - V[yi]) @ z + c[j] - c[yi]}
            found = scipy_optimize.minimize(
                lambda z, xi=x[i]: np.sum((z - xi) ** 2),
                x[i],
                constraints=[constraint],
                method="SLSQP",
                options={"ftol": 1e-12, "maxiter": 200},
            )
            distances.append(np.linalg.norm(found.x - x[i]))
        assert radius[i] == pytest.approx(min(distances), abs=1e-6)


def test_the_radius_scales_inversely_with_the_bound_and_ignores_equal_readout_rows():
    # Closed forms: r(Lambda) = r(1) / Lambda exactly (one division); a rival with v_j = v_y has a constant
    # margin, so it leaves the minimum when that margin is positive and zeroes it otherwise.  On the line with
    # v = (1, 1, -1) and c = (1, 0, 0), x = 0.5 is closest to the boundary 2x + 1 = 0 of class 2: r = 1.
    V, c, x = _linear_classifier(1)
    logits = torch.from_numpy(x @ V.T + c)
    y = logits.argmax(1)
    r1 = certified_radius(logits, y, torch.from_numpy(V), 1.0)
    torch.testing.assert_close(certified_radius(logits, y, torch.from_numpy(V), 4.0), r1 / 4.0, rtol=1e-15, atol=0)
    V2 = torch.tensor([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]], dtype=torch.float64)
    points = torch.tensor([[0.5, 0.0]], dtype=torch.float64)
    for bias, expected in ((torch.tensor([1.0, 0.0, 0.0]), 1.0), (torch.tensor([0.0, 0.0, 0.0]), 0.0)):
        logits2 = points @ V2.T + bias.double()
        got = certified_radius(logits2, torch.tensor([0]), V2, 1.0)
        assert float(got) == pytest.approx(expected, rel=1e-15)


def test_the_attack_on_a_linear_classifier_stops_exactly_at_the_boundary():
    # Closed form: for a linear classifier the targeted ascent of f_j - f_y moves straight along v_j - v_y and
    # reaches the optimum of the ball, so PGD breaks a point exactly when the radius exceeds its distance to the
    # boundary: every correct point is broken at 1.01 r and none at 0.99 r.
    V, c, x = _linear_classifier(2, n=40)
    Vt, ct = torch.from_numpy(V), torch.from_numpy(c)

    def model(z):
        return z @ Vt.T + ct

    xt = torch.from_numpy(x)
    y = model(xt).argmax(1)
    r = certified_radius(model(xt), y, Vt, 1.0)
    assert not l2_attack(model, xt, y, 0.99 * r, steps=20, restarts=2).any()
    assert l2_attack(model, xt, y, 1.01 * r, steps=20, restarts=1).all()


@pytest.fixture(scope="module")
def trained_models():
    """A capped SPD-MLP and a dense MLP after 80 Adam steps on the digits (float64 for the checks)."""
    split = digits_split()
    x, y = torch.from_numpy(split["x_train"]).float(), torch.from_numpy(split["y_train"])
    models = {}
    for kind, cap in (("spd", 2.0), ("dense", None)):
        torch.manual_seed(0)
        model = CertifiableMLP(kind, cap)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        generator = torch.Generator().manual_seed(0)
        for _ in range(80):
            index = torch.randint(0, len(y), (64,), generator=generator)
            loss = torch.nn.functional.cross_entropy(model(x[index]), y[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        models[kind] = model.double().requires_grad_(False)
    return models, torch.from_numpy(split["x_test"][:150]), torch.from_numpy(split["y_test"][:150])


@pytest.mark.parametrize("kind", ["spd", "dense"])
def test_no_attack_breaks_a_point_inside_its_certified_radius(trained_models, kind):
    # Oracle: the certificate is a theorem, so PGD (30 steps, 3 restarts, every rival targeted) and 64 random
    # directions at 0.99 r(x) never change a prediction, for both the cheap and the exact bound; well above the
    # radius (4 r) the attack does break points, so the oracle is not vacuous.  All float64.
    models, x, y = trained_models
    model = models[kind]
    logits = model(x)
    assert float((logits.argmax(1) == y).double().mean()) > 0.5  # trained: well above chance (0.1)
    for bound in ("cheap", "exact"):
        r = certified_radius(logits, y, model.readout.weight, model.lipschitz(bound))
        inside = r > 0
        assert not l2_attack(model, x[inside], y[inside], 0.99 * r[inside], steps=30, restarts=3, seed=1).any()
        u = torch.randn(64, int(inside.sum()), 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        delta = 0.99 * r[inside][None, :, None] * u / u.norm(dim=-1, keepdim=True)
        assert (model(x[inside][None] + delta).argmax(-1) == y[inside][None]).all()
    far = l2_attack(model, x[inside], y[inside], 4.0 * r[inside], steps=30, restarts=1)
    assert far.any()


def test_cheap_radii_never_exceed_exact_ones(trained_models):
    # Invariant: cheap Lambda >= exact Lambda, so the cheap radius is at most the exact one, point by point
    # (the same margins divided by a larger number: exact comparison up to one rounding, 1e-15 relative).
    models, x, y = trained_models
    for model in models.values():
        logits = model(x)
        cheap = certified_radius(logits, y, model.readout.weight, model.lipschitz("cheap"))
        exact = certified_radius(logits, y, model.readout.weight, model.lipschitz("exact"))
        assert bool(torch.all(cheap <= exact * (1 + 1e-15)))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: SPDCertifiedConfig(caps=(1.0,)), r"caps\[0\] must be a cap L > 1 or None .* got 1.0"),
        (lambda: SPDCertifiedConfig(caps=(2.0, -1.0)), r"caps\[1\] must be a cap L > 1 or None .* got -1.0"),
        (lambda: SPDCertifiedConfig(caps=()), r"caps must be a non-empty tuple of Lipschitz caps"),
        (lambda: SPDCertifiedConfig(caps=(2.0, None, 2.0)), r"caps must be distinct"),
        (lambda: SPDCertifiedConfig(caps=(None, None)), r"caps must be distinct"),
        (lambda: SPDCertifiedConfig(radii=(0.0, 0.5, 0.2)), r"radii must be strictly increasing"),
        (lambda: SPDCertifiedConfig(radii=(-0.1,)), r"radii\[0\] must be in \[0, inf\), got -0.1"),
        (lambda: SPDCertifiedConfig(margin=-1.0), r"margin must be in \[0, inf\), got -1.0"),
        (lambda: SPDCertifiedConfig(attack_steps=0), r"attack_steps must be an integer >= 1, got 0"),
        (lambda: SPDCertifiedConfig(device="tpu"), r"device must be 'cpu' or 'cuda\[:N\]', got 'tpu'"),
        (lambda: CertifiableMLP("dense", cap=2.0), r"cap must be None for a dense model"),
        (lambda: CertifiableMLP("conv"), r"kind must be one of 'spd', 'dense', got 'conv'"),
        (
            lambda: certified_radius(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long), torch.zeros(3, 4), 0.0),
            r"lipschitz must be in \(0, inf\), got 0.0",
        ),
        (
            lambda: certified_radius(torch.zeros(2, 3), torch.zeros(3, dtype=torch.long), torch.zeros(3, 4), 1.0),
            r"logits, labels and readout must have shapes \[N, K\], \[N\], \[K, d\]",
        ),
        (lambda: run_spd_certified({"steps": 1}), r"config must be an SPDCertifiedConfig, got dict"),
    ],
)
def test_bad_settings_are_refused_with_the_parameter_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_the_split_is_fixed_stratified_and_scaled():
    # Oracle: scikit-learn's bundled digits read directly; the split partitions them (every image once) and keeps
    # each digit's share to within one image.
    from sklearn.datasets import load_digits

    digits = load_digits()
    split = digits_split()
    assert len(split["y_train"]) + len(split["y_test"]) == len(digits.target) == 1797
    both = np.concatenate([split["x_train"], split["x_test"]]) * 16
    assert sorted(map(tuple, both)) == sorted(map(tuple, digits.data))
    share = np.bincount(digits.target) * 450 / 1797
    assert np.all(np.abs(np.bincount(split["y_test"]) - share) < 1.0)
    assert np.array_equal(digits_split()["x_test"], split["x_test"])  # fixed: the same every call


_TINY = dict(caps=(2.0,), steps=6, log_every=3, attack_steps=3, sound_points=6, random_directions=4, radii=(0.0, 0.3))


def test_a_tiny_run_writes_its_files_and_a_resumed_run_matches(tmp_path):
    # Oracle: the run's own structural checks (true by theorem); the rows are flat (strings and numbers) for a
    # sweep; a run whose second condition is undone and then resumed equals the uninterrupted one (one thread,
    # same seeds: to 1e-12, far below the ~1e-7 any change of float32 arithmetic would leave).
    config = SPDCertifiedConfig.preset("quick", margin=0.1, **_TINY)
    result = run_spd_certified(config, out=tmp_path / "run", progress=False)
    assert result["checks"]["all"], result["checks"]
    assert [r["model"] for r in result["runs"]] == ["spd-L2", "mlp"]
    for name in ("results.json", "table.md", "certified_radius.png", "spd-L2.pt", "mlp.json", "run.json"):
        assert (tmp_path / "run" / name).is_file()
    rows = spd_certified_rows(result)
    assert all(isinstance(v, (str, int, float)) or v is None for row in rows for v in row.values())
    assert rows[0]["certified_exact@0.3"] <= rows[0]["robust@0.3"]
    assert spd_certified_table(result).count("\n| ") == 2

    record = json.loads((tmp_path / "run" / "run.json").read_text())
    record.update(status="interrupted", done=["spd-L2"])
    (tmp_path / "run" / "run.json").write_text(json.dumps(record))
    resumed = run_spd_certified(config, out=tmp_path / "run", progress=False, resume=True)
    for a, b in zip(result["runs"], resumed["runs"], strict=True):
        assert a["model"] == b["model"]
        np.testing.assert_allclose(a["radii_exact"], b["radii_exact"], rtol=1e-12, atol=1e-12)
        assert a["robust"] == b["robust"]


@pytest.mark.slow
def test_the_quick_preset_end_to_end(tmp_path):
    # The CI preset: every model trains above chance and every structural check (soundness, bound order, caps)
    # holds.  The capped model's certificate is tighter than the uncapped one's (Lambda cheap / exact closer to 1).
    result = run_spd_certified(SPDCertifiedConfig.preset("quick"), out=tmp_path / "quick", progress=False)
    assert result["checks"]["all"], result["checks"]
    for r in result["runs"]:
        assert r["accuracy"] > 0.3
    capped, free = result["runs"][0], result["runs"][1]
    assert capped["lip_exact"] <= 1.5**2 * (1 + 1e-9)
    assert capped["lip_cheap"] / capped["lip_exact"] < free["lip_cheap"] / free["lip_exact"]
