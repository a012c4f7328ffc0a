import mpmath
import numpy as np
import pytest
import scipy.linalg
from conftest import HAS_TORCH
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from workbench.backend import to_backend, to_numpy
from workbench.expmv import expm_rank1, expmv_rank1, phi1


@pytest.mark.parametrize("z", [0.0, 1e-300, -1e-17, 1e-9, 0.3, -2.5, 40.0, -700.0])
def test_phi1_against_50_digit_mpmath(z):
    # Oracle: (e^z − 1)/z in 50-digit arithmetic; float64 relative accuracy ~ 1 ulp.
    mpmath.mp.dps = 50
    exact = 1.0 if z == 0 else float(mpmath.expm1(mpmath.mpf(z)) / mpmath.mpf(z))
    np.testing.assert_allclose(float(phi1(np.array(z))), exact, rtol=4e-16)


def test_phi1_overflow_is_an_error():
    with pytest.raises(ValueError, match=r"phi1 overflows for z = 800"):
        phi1(np.array([1.0, 800.0]))


def test_rank1_against_dense_expm(rng, backend):
    # Oracle: scipy/torch dense Padé expm; relative agreement ~ n·eps.
    u, v = rng.standard_normal(12), rng.standard_normal(12)
    got = to_numpy(expm_rank1(to_backend(u, backend), to_backend(v, backend), t=0.3))
    np.testing.assert_allclose(got, scipy.linalg.expm(0.3 * np.outer(u, v)), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dot", [0.0, 1e-15, 1e-10])
def test_rank1_at_vanishing_trace(rng, dot):
    # uvᵀ (nearly) nilpotent: e^{uvᵀ} = I + φ₁(vᵀu) uvᵀ → I + uvᵀ; oracle: dense expm.
    u = rng.standard_normal(6)
    v = rng.standard_normal(6)
    v -= (v @ u) / (u @ u) * u - dot / (u @ u) * u
    np.testing.assert_allclose(expm_rank1(u, v), scipy.linalg.expm(np.outer(u, v)), rtol=1e-13, atol=1e-15)


@settings(max_examples=50, deadline=None)
@given(
    u=arrays(np.float64, (5,), elements=st.floats(-2, 2)),
    v=arrays(np.float64, (5,), elements=st.floats(-2, 2)),
    t=st.floats(-1.5, 1.5),
)
def test_rank1_group_law(u, v, t):
    # Law: e^{s uvᵀ} e^{t uvᵀ} = e^{(s+t) uvᵀ} (one-parameter group), independent of any expm code.
    s = 0.7
    lhs = expm_rank1(u, v, s) @ expm_rank1(u, v, t)
    rhs = expm_rank1(u, v, s + t)
    scale = 1.0 + np.abs(rhs).max() + np.abs(expm_rank1(u, v, s)).max() * np.abs(expm_rank1(u, v, t)).max()
    assert np.abs(lhs - rhs).max() <= 1e-13 * scale


def test_expmv_rank1_matches_matrix_product(rng, backend):
    u, v = rng.standard_normal(9), rng.standard_normal(9)
    b = rng.standard_normal((9, 4))
    ub, vb, bb = (to_backend(a, backend) for a in (u, v, b))
    dense = to_numpy(expm_rank1(ub, vb, 0.5)) @ b
    np.testing.assert_allclose(to_numpy(expmv_rank1(ub, vb, bb, 0.5)), dense, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(to_numpy(expmv_rank1(ub, vb, bb[:, 0], 0.5)), dense[:, 0], rtol=1e-13, atol=1e-14)


def test_rank1_bad_input():
    with pytest.raises(ValueError, match=r"u and v must have matching sizes, got 3 and 2"):
        expm_rank1(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match=r"u must be a 1-dimensional array, got shape \(3, 1\)"):
        expm_rank1(np.ones((3, 1)), np.ones(3))
    with pytest.raises(ValueError, match=r"v must be finite"):
        expm_rank1(np.ones(2), np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match=r"t must be in \(-inf, inf\), got nan"):
        expm_rank1(np.ones(2), np.ones(2), float("nan"))
    with pytest.raises(ValueError, match=r"u and b rows must have matching sizes, got 2 and 3"):
        expmv_rank1(np.ones(2), np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"b must have shape \[n\] or \[n, k\], got shape \(2, 2, 2\)"):
        expmv_rank1(np.ones(2), np.ones(2), np.ones((2, 2, 2)))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_rank1_rejects_mixed_libraries():
    import torch

    with pytest.raises(TypeError, match=r"inputs mix array libraries"):
        expm_rank1(np.ones(2), torch.ones(2, dtype=torch.float64))
