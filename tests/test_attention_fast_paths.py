"""The fast paths of ``diagnose`` against the straightforward dense computations they replace.

Each optimised function is compared with the dense route on random inputs of several shapes, rank-deficient
and masked cases included:

* ``effective_transport_gram`` (symmetric basis :math:`S_{hg} = B_{hg} + B_{hg}^\\top`) and the factored
  ``factored_transport_gram`` (from :math:`W_V, W_O`, never forming the :math:`d\\times d` maps) against the
  definition (the dense :math:`O^{\\mathrm{eff}}` reduced by ``orthogonality_deviation``, the Gram matrices
  averaged by hand) and against the previous quadratic-form code, kept below as ``_previous_transport_gram``;
* ``factored_orthogonality_deviation`` against ``orthogonality_deviation`` of each :math:`W_V^hW_O^h`;
* ``factored_bond_eigenvalues`` against ``eigvalsh`` of the dense bond, and the inertia and negative mass
  read from it against ``bond_inertia`` and ``negative_mass``;
* ``loop_defect`` against ``holonomy_deviation`` of the dense :math:`O^{\\mathrm{eff}}`;
* ``diagnose`` on all-MiniLM-L6-v2: every per-head and per-layer reading the fast paths produce, against the
  public dense functions on the same layer.
"""

import numpy as np
import pytest

from workbench.attention import (
    bond_inertia,
    bond_reading,
    connection_energy,
    effective_connection,
    effective_connection_energy,
    effective_transport_gram,
    factored_connection_energy,
    factored_orthogonality_deviation,
    factored_transport_gram,
    holonomy_deviation,
    loop_defect,
    negative_mass,
    orthogonality_deviation,
    reversibility_residual,
    token_corner_distances,
    transport_form,
)
from workbench.attention._forms import factored_bond_eigenvalues, spectrum_inertia, spectrum_negative_mass

# Tolerances.  δ_orth: 1e-10 relative.  Both quadratic-form routes evaluate ‖G‖² − (tr G)²/d, whose rounding
# error (a few ulps of ‖G‖², from a different summation order) is amplified by ‖G‖²/‖G − μI‖² — at most ~10² on
# these random maps, far from the ~1e-6 of the allowance.  Where δ ≈ 0 (d = 1: always) that difference is a
# cancellation down to rounding, and δ = √spread/(μd) then carries an absolute error of order √ε ≈ 1.5e-8 in
# both routes (the old one included): 1e-7 absolute there, 0 elsewhere.  The mean Gram: 1e-12 relative to its largest entry (a
# sum of H² products in a different order; the terms are at most H² times the result here).  Eigenvalues:
# 1e-12 · max|λ| absolute (both solvers are backward stable: each eigenvalue moves by O(ε‖M_S‖₂)).
RTOL_DELTA = 1e-10
ATOL_DELTA = 1e-7
RTOL_GRAM = 1e-12
ATOL_SPECTRUM = 1e-12

# (H, n, d, r): r < d gives rank-deficient maps M_h = W_V^h W_O^h, r ≥ d full-rank ones (r > d: factors wider
# than the space); H = 1 and d = 1 are the degenerate ends.
SHAPES = [(3, 4, 5, 2), (4, 6, 6, 6), (2, 5, 3, 7), (1, 3, 4, 1), (5, 4, 8, 3), (2, 2, 1, 1)]


def _random_heads(rng, H, n, d, r):
    A = rng.random((H, n, n)) ** 3  # uneven weights
    A /= A.sum(axis=-1, keepdims=True)
    return A, rng.standard_normal((H, d, r)), rng.standard_normal((H, r, d))


def _previous_transport_gram(A, M, weights=None, mask=None):
    """The code path of effective_transport_gram before the symmetric basis (H² products B_hg, B Bᵀ)."""
    H, n, d = A.shape[0], A.shape[1], M.shape[-1]
    total = A.sum(axis=0)
    active = total > 0
    w = A / np.where(active, total, 1.0)
    B = (np.swapaxes(M, -1, -2)[:, None] @ M[None, :]).reshape(H * H, d * d)
    trace_b = (M.reshape(H, d * d) @ M.reshape(H, d * d).T).reshape(H * H)
    gram_b = B @ B.T
    u = (w[:, None] * w[None, :]).transpose(2, 3, 0, 1).reshape(n, n, H * H)
    trace_g = u @ trace_b
    norm2_g = np.sum((u @ gram_b) * u, axis=-1)
    mu = trace_g / d
    valid = active & (mu > 0)
    if mask is not None:
        valid &= mask
    pair_weights = total / H if weights is None else weights
    valid &= pair_weights > 0
    spread = np.maximum(norm2_g - trace_g**2 / d, 0.0)
    delta = np.where(valid, np.sqrt(spread) / (np.where(valid, mu, 1.0) * d), 0.0)
    pw = np.where(valid, pair_weights, 0.0)
    mean_u = np.einsum("ij,ijk->k", pw, u) / pw.sum()
    return float((pw * delta).sum() / pw.sum()), delta, valid, (mean_u @ B).reshape(d, d)


def _dense_transport_gram(A, M, weights=None, mask=None):
    """The definition: O_eff (n × n × d × d), its δ_orth per pair and the weighted mean of G_ij = O_ijᵀ O_ij."""
    A_eff, O_eff = effective_connection(A, M)
    weights = A_eff if weights is None else weights
    active = A_eff > 0  # O_eff is the identity fill on inactive edges; those pairs never count
    mask = active if mask is None else mask & active
    result = orthogonality_deviation(O_eff, weights=weights, mask=mask, return_edges=True)
    pw = np.where(result.valid, weights, 0.0)
    gram = np.swapaxes(O_eff, -1, -2) @ O_eff
    return result.mean, result.edges, result.valid, np.einsum("ij,ijab->ab", pw, gram) / pw.sum()


def _cases(rng, A):
    """(weights, mask) pairs: the default, a random mask, explicit weights with zeros, an inactive edge."""
    n = A.shape[1]
    mask = rng.random((n, n)) < 0.6
    mask[0, 0] = True
    weights = rng.random((n, n)) * (rng.random((n, n)) < 0.7)
    weights[0, 0] = 1.0
    return [(None, None), (None, mask), (weights, None), (weights, mask)]


def _assert_same(result, reference, atol=0.0):
    mean, edges, valid, mean_gram = reference
    np.testing.assert_array_equal(result.valid, valid)
    assert result.mean == pytest.approx(mean, rel=RTOL_DELTA, abs=atol)
    np.testing.assert_allclose(result.edges, edges, rtol=RTOL_DELTA, atol=atol)
    np.testing.assert_allclose(result.mean_gram, mean_gram, rtol=0, atol=RTOL_GRAM * np.abs(mean_gram).max())


@pytest.mark.parametrize("shape", SHAPES)
def test_transport_gram_fast_paths_match_the_dense_routes(rng, shape):
    A, W_V, W_O = _random_heads(rng, *shape)
    A[:, 1, :] = 0.0  # a row no head attends from: its pairs are inactive
    M = W_V @ W_O
    for weights, mask in _cases(rng, A):
        dense = _dense_transport_gram(A, M, weights, mask)
        previous = _previous_transport_gram(A, M, weights, mask)
        for result in (
            effective_transport_gram(A, M, weights=weights, mask=mask),
            factored_transport_gram(A, W_V, W_O, weights=weights, mask=mask),
        ):
            atol = ATOL_DELTA if M.shape[-1] == 1 else 0.0  # δ = 0 exactly for d = 1
            _assert_same(result, dense, atol)
            _assert_same(result, previous, atol)


def test_transport_gram_fast_paths_with_rank_deficient_and_zero_heads(rng):
    # factors of rank 1 inside width 3 (dependent columns), and a zero head (it only dilutes the others)
    A, W_V, W_O = _random_heads(rng, 4, 5, 6, 3)
    W_V[1] = np.outer(W_V[1, :, 0], [1.0, -2.0, 0.5])
    W_O[2] = np.outer([2.0, 1.0, -1.0], W_O[2, 0])
    W_V[3] = 0.0
    M = W_V @ W_O
    assert np.linalg.matrix_rank(M[1]) == np.linalg.matrix_rank(M[2]) == 1 and not M[3].any()
    mask = np.ones((5, 5), dtype=bool)
    mask[2] = False
    for weights, mask_ in ((None, None), (None, mask)):
        dense = _dense_transport_gram(A, M, weights, mask_)
        _assert_same(effective_transport_gram(A, M, mask=mask_), dense)
        _assert_same(factored_transport_gram(A, W_V, W_O, mask=mask_), dense)


def test_transport_gram_fast_paths_keep_the_refusals(rng):
    A, W_V, W_O = _random_heads(rng, 3, 4, 5, 2)
    M = W_V @ W_O
    for run in (
        lambda **k: effective_transport_gram(A, M, **k),
        lambda **k: factored_transport_gram(A, W_V, W_O, **k),
    ):
        with pytest.raises(ValueError, match="at least one valid pair"):
            run(mask=np.zeros((4, 4), dtype=bool))
        with pytest.raises(ValueError, match=r"weights must have shape \(4, 4\)"):
            run(weights=np.ones((3, 3)))
    with pytest.raises(ValueError, match="must match"):
        factored_transport_gram(A, W_V, W_O[:, :, :4])
    # huge factors: the mean Gram (degree 4 in the factors) is refused, not returned as inf
    with pytest.raises(ValueError, match="the mean transport Gram overflow"):
        factored_transport_gram(A, 1e100 * W_V, 1e100 * W_O)
    # δ is scale-free: binary scaling keeps it finite and equal
    small = factored_transport_gram(A, W_V, W_O).mean
    assert factored_transport_gram(A, 2.0**-600 * W_V, 2.0**500 * W_O).mean == pytest.approx(small, rel=1e-14)


@pytest.mark.parametrize("shape", [(3, 5, 2), (4, 6, 6), (2, 3, 7), (1, 4, 1), (12, 40, 8)])
def test_factored_orthogonality_deviation_matches_the_dense_maps(rng, shape):
    H, d, r = shape
    W_V, W_O = rng.standard_normal((H, d, r)), rng.standard_normal((H, r, d))
    if r > 1:
        W_V[0] = np.outer(W_V[0, :, 0], rng.standard_normal(r))  # rank one, inside width r
    M = W_V @ W_O
    dense = np.array([orthogonality_deviation(M[h]) for h in range(H)])
    np.testing.assert_allclose(factored_orthogonality_deviation(W_V, W_O), dense, rtol=RTOL_DELTA)
    # scale-free, also where the dense maps would overflow: each head is divided by a power of two first
    huge = factored_orthogonality_deviation(1e200 * W_V, 1e200 * W_O)
    np.testing.assert_allclose(huge, dense, rtol=RTOL_DELTA)
    with pytest.raises(ValueError, match=r"got M_h = 0 in heads \[0"):
        factored_orthogonality_deviation(np.zeros_like(W_V), W_O)


def _dense_bond(W_Q, W_K):
    M = W_Q @ W_K.T
    return 0.5 * (M + M.T)


@pytest.mark.parametrize("shape", [(10, 2), (385, 33), (6, 3), (5, 4), (7, 7), (1, 1)])
def test_factored_bond_spectrum_matches_eigvalsh(rng, shape):
    # 2r < D: D − 2r exact zeros; 2r = D and 2r > D: no zeros to add, the core is the whole space
    D, r = shape
    W_Q, W_K = rng.standard_normal((D, r)), rng.standard_normal((D, r))
    cases = {
        "generic": (W_Q, W_K),
        "definite (W_K = W_Q)": (W_Q, W_Q),  # ½·2 W_Q W_Qᵀ ⪰ 0
        "rank-deficient W_K": (W_Q, np.outer(W_K[:, 0], rng.standard_normal(r))),
        "zero": (W_Q, np.zeros_like(W_K)),
    }
    for name, (Q, K) in cases.items():
        bond = _dense_bond(Q, K)
        dense = np.linalg.eigvalsh(bond)
        fast = factored_bond_eigenvalues(Q, K)
        scale = max(np.abs(dense).max(), np.finfo(float).tiny)
        assert fast.shape == (D,), name
        assert np.all(np.diff(fast) >= 0), name
        np.testing.assert_allclose(fast, dense, rtol=0, atol=ATOL_SPECTRUM * scale, err_msg=name)
        assert spectrum_inertia(fast, 1e-10) == bond_inertia(bond), name
        assert spectrum_negative_mass(fast) == pytest.approx(negative_mass(bond), rel=1e-10, abs=1e-14), name
        reading = bond_reading(Q, K)  # the public front: the same spectrum, inertia and share
        assert reading.inertia == bond_inertia(bond) and reading.negative_mass == spectrum_negative_mass(fast), name


def test_loop_defect_matches_holonomy_deviation_of_the_dense_transports(rng):
    # rank-deficient (r = 2 < d = 5) and full-rank maps; all tokens, and a subset (the special tokens masked out)
    for d, r in ((5, 2), (4, 4)):
        A, W_V, W_O = _random_heads(rng, 3, 7, d, r)
        M = W_V @ W_O
        O_eff = effective_connection(A, M)[1]
        for tokens in (np.arange(7), np.array([1, 2, 4, 5])):
            triangles = [(a, b, c, a) for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False)]
            dense = holonomy_deviation(O_eff, triangles, remove_scale=True).mean()
            # 1e-12 relative: three d × d products and a norm, in the same order, on O_eff scaled by 2^e
            assert loop_defect(A, M, tokens.tolist()) == pytest.approx(dense, rel=1e-12)
    with pytest.raises(ValueError, match=r"tokens must hold at least three tokens \(one triangle\), got 2"):
        loop_defect(A, M, [1, 2])


def test_effective_connection_energy_matches_the_dense_energy(rng):
    # Oracle: connection_energy of the dense (A_eff, O_eff) of effective_connection.  1e-12 relative: the same
    # sums of squares, X_j O_eff(i, j) formed by a matmul instead of an elementwise sum over heads.
    for H, n, d, r in ((3, 7, 5, 2), (2, 6, 4, 4), (4, 9, 6, 3)):
        A, W_V, W_O = _random_heads(rng, H, n, d, r)
        A = A * np.tril(np.ones((n, n)))  # causal heads too: zero edges carry no weight
        A /= A.sum(axis=-1, keepdims=True)
        M, X = W_V @ W_O, rng.standard_normal((n, d))
        pi = rng.random(n)
        pi /= pi.sum()
        A_eff, O_eff = effective_connection(A, M)
        dense = float(connection_energy(A_eff, O_eff, X, pi=pi))
        assert effective_connection_energy(A, M, X, pi=pi) == pytest.approx(dense, rel=1e-12)


def test_factored_connection_energy_matches_the_dense_energy(rng):
    # Oracle: connection_energy of the dense (A_eff, O_eff).  1e-12 relative: the expanded square cancels at most
    # a factor 1e3 here (ℰ_c ≥ 1e-3 of the summed squares, else the differences are formed), so ~1e-13.
    for H, n, d, r in ((3, 7, 5, 2), (2, 6, 4, 4), (4, 9, 6, 3), (1, 3, 2, 5)):
        A, W_V, W_O = _random_heads(rng, H, n, d, r)
        X = rng.standard_normal((n, d))
        A_eff, O_eff = effective_connection(A, W_V @ W_O)
        dense = float(connection_energy(A_eff, O_eff, X))
        assert factored_connection_energy(A, W_V, W_O, X) == pytest.approx(dense, rel=1e-12)
        assert effective_connection_energy(A, W_V @ W_O, X) == pytest.approx(dense, rel=1e-12)


def test_connection_energy_near_zero_forms_the_differences(rng, monkeypatch):
    # Every map the identity and the tokens 1e-7 apart: ℰ_c ≈ 1e-14 of ‖X‖², which the expanded square would lose
    # to rounding entirely; the differences are formed instead.  Oracle: the dense connection_energy (which forms
    # them too), 1e-10 relative.  Small blocks of source rows give the same value.
    import workbench.attention._mixing as mixing

    H, n, d = 3, 6, 4
    A = rng.random((H, n, n))
    A /= A.sum(axis=-1, keepdims=True)
    W_V, W_O = np.stack([np.eye(d)] * H), np.stack([np.eye(d)] * H)
    X = np.ones((n, d)) + 1e-7 * rng.standard_normal((n, d))
    A_eff, O_eff = effective_connection(A, W_V @ W_O)
    dense = float(connection_energy(A_eff, O_eff, X))
    assert 0 < dense < 1e-12 * np.sum(X * X)
    assert factored_connection_energy(A, W_V, W_O, X) == pytest.approx(dense, rel=1e-10)
    monkeypatch.setattr(mixing, "_EXPANDED_BLOCK_BYTES", 8 * n * H)  # one source row per block
    Y = rng.standard_normal((n, d))
    assert factored_connection_energy(A, W_V, W_O, Y) == pytest.approx(
        float(connection_energy(A_eff, O_eff, Y)), rel=1e-12
    )


def test_transport_form_read_once_equals_the_factored_gram(rng):
    # Oracle: factored_transport_gram on the same heads (checked against the dense routes above); the form is
    # applied to two attention patterns.  Exactly equal: the same arithmetic.
    A, W_V, W_O = _random_heads(rng, 3, 5, 4, 2)
    form = transport_form(W_V, W_O)
    assert repr(form) == "TransportForm(n_heads=3, d=4)"
    for pattern in (A, A[:, ::-1, ::-1]):
        mask = np.tril(np.ones((5, 5), dtype=bool))
        expected = factored_transport_gram(pattern, W_V, W_O, mask=mask)
        got = form.gram(pattern, mask=mask)
        assert got.mean == expected.mean
        np.testing.assert_array_equal(got.mean_gram, expected.mean_gram)
    with pytest.raises(ValueError, match=r"A_heads must have one map per head of the form, 3, got shape \(2, 5, 5\)"):
        form.gram(A[:2])
    with pytest.raises(ValueError, match=r"W_V \[H, d, r\] and W_O \[H, r, d\] must match"):
        transport_form(W_V, W_O[:, :, :3])


def test_reversibility_residual_of_a_stack_matches_each_head_alone(rng):
    # Oracle: the residual of each matrix alone (its law by MarkovOperator); the positive stack runs one
    # elimination for all.  1e-12 relative: the laws agree to O(n²u).
    A = rng.random((4, 2, 9, 9)) ** 6
    A /= A.sum(axis=-1, keepdims=True)
    stacked = reversibility_residual(A)
    for index in np.ndindex(4, 2):
        assert stacked[index] == pytest.approx(reversibility_residual(A[index]), rel=1e-12)


def test_token_corner_distances_of_a_stack_equal_each_head_alone(rng):
    # Oracle: the same function on one head at a time.  Exactly equal: the batched softmaxes run the same
    # operations on each head.
    q, k = rng.standard_normal((2, 3, 7, 4)), rng.standard_normal((2, 3, 7, 4))
    mask = np.tril(np.ones((7, 7), dtype=bool))
    stacked = token_corner_distances(q, k, beta=0.7, mask=mask)
    for index in np.ndindex(2, 3):
        alone = token_corner_distances(q[index], k[index], beta=0.7, mask=mask)
        assert {name: float(values[index]) for name, values in stacked.items()} == alone
    with pytest.raises(ValueError, match=r"q and k must have the same shape \(\.\.\., n, d_h\) with n >= 1"):
        token_corner_distances(q, k[:, :2])


@pytest.fixture(scope="module")
def model():
    from workbench.models import load_minilm

    try:
        return load_minilm()
    except ModuleNotFoundError as error:  # the weights package is optional
        pytest.skip(f"all-MiniLM-L6-v2 weights not installed: {error}")


def test_diagnose_fast_paths_match_the_dense_readings(model):
    from workbench.models import diagnose

    text = "Heads are Markov operators."
    report = diagnose(model, text)
    trace = model.trace(text)
    content = ~trace.special
    pairs = content[:, None] & content[None, :]
    for index in (0, 3, 5):
        mha = model.layers[index].attention
        M = mha.value_output_maps()
        gram = effective_transport_gram(trace.attention[index], M, mask=pairs)
        layer = report.layers[index]
        assert layer.delta_orth == pytest.approx(gram.mean, rel=RTOL_DELTA)
        np.testing.assert_allclose(report.mean_gram[index], gram.mean_gram, rtol=0, atol=1e-12)
        diagonal = np.abs(np.diag(gram.mean_gram)).mean()
        off = np.abs(gram.mean_gram - np.diag(np.diag(gram.mean_gram))).sum() / (384 * 383)
        assert layer.gram_diagonal_ratio == pytest.approx(diagonal / off, rel=1e-10)
        for h in range(12):
            head = mha.head(h)
            W_Q, W_K = np.vstack([head.W_Q, head.b_Q[None]]), np.vstack([head.W_K, head.b_K[None]])
            bond = _dense_bond(W_Q, W_K)
            reading = report.heads[12 * index + h]
            assert reading.inertia == bond_inertia(bond)
            assert reading.negative_mass == pytest.approx(negative_mass(bond), rel=1e-10)
            assert reading.delta_orth == pytest.approx(orthogonality_deviation(M[h]), rel=RTOL_DELTA)


def test_plot_diagnosis_labels_every_heatmap(model):
    import matplotlib

    matplotlib.use("Agg")
    from workbench.models import diagnose, plot_diagnosis

    fig = plot_diagnosis(diagnose(model, "A cat sat."))
    heatmaps = [ax for ax in fig.axes if ax.images]
    bars = [ax for ax in fig.axes if not ax.images]
    # three rows of six: A_eff, the mean transport Gram, the heads' QK subspace distances; one colour bar each
    assert len(heatmaps) == 18 and len(bars) == 18
    for ax in heatmaps:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    labels = {ax.get_ylabel() for ax in bars}
    assert any("A_{\\rm eff}" in label for label in labels) and any("Gram" in label for label in labels)
    for ax in fig.axes:
        texts = [ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(), *ax.get_yticklabels()]
        assert all(text.get_fontsize() >= 8 for text in texts if text.get_text())
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_diagnose_reads_the_weights_once_and_the_same_without_the_kept_forms(model, monkeypatch):
    # The forms read from the weights are kept with the model; a model whose forms pass KEPT_BYTES reads the
    # transport form again for each text.  Both give the same report, equal to the one of a fresh load.
    import workbench.models._layer_forms as forms
    from workbench.models import diagnose, load_minilm

    text = "Heads are Markov operators."
    first = diagnose(model, text).to_dict()
    assert forms.layer_forms(model, 0) is forms.layer_forms(model, 0)
    assert diagnose(model, text).to_dict() == first
    monkeypatch.setattr(forms, "KEPT_BYTES", 0)
    fresh = load_minilm()
    assert forms.layer_forms(fresh, 0).transport is None
    assert diagnose(fresh, text).to_dict() == first
