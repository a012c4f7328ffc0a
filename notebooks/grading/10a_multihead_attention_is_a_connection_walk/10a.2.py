"""Tests of exercise 10a.2: the blocks of L_skew, and the drift of a reversible walk with rotated self-loops."""

import numpy as np
from otter.test_files import test_case
from scipy.stats import ortho_group

from workbench.attention import effective_connection, mixing_generator, random_multihead, softmax_rows

OK_FORMAT = False
name = "10a.2"
points = 5


def _objects():
    """A_eff, O_eff, P_rev and O_consistent of notebook 10a, rebuilt with its generator (seed 10) and its draws."""
    rng = np.random.default_rng(10)
    n, D, d_h, H = 7, 6, 3, 4
    mha = random_multihead(rng, H, D, d_h, bias=True, scale=1.5 / np.sqrt(D))
    X = rng.standard_normal((n, D))
    A_eff, O_eff = effective_connection(mha.attention(X), mha.value_output_maps())
    random_multihead(rng, H, D, d_h, causal=True)  # the causal layer of §1
    rng.standard_normal((n, D))  # Y of §2
    m, d = 7, 3
    bond = rng.standard_normal((m, m))
    bond = (bond + bond.T) / 2
    rng.standard_normal((m, m))  # the link
    Q = ortho_group.rvs(d, size=m * m, random_state=11).reshape(m, m, d, d)
    O_consistent = Q.copy()
    for i in range(m):
        O_consistent[i, i] = np.eye(d)
        for j in range(i):
            O_consistent[j, i] = O_consistent[i, j].T
    return A_eff, O_eff, softmax_rows(1.5 * bond), O_consistent


@test_case(points=1)
def test_keys(answer_10a_2):
    keys = {"L_skew_formula", "loops", "diagonal_blocks", "drift_ratio"}
    assert isinstance(answer_10a_2, dict) and keys <= set(answer_10a_2), (
        f"answer_10a_2 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=2)
def test_block_formula(answer_10a_2):
    A_eff, O_eff, _, _ = _objects()
    formula = np.asarray(answer_10a_2["L_skew_formula"], dtype=float)
    assert formula.shape == (42, 42), f"'L_skew_formula' should be the 42×42 matrix, got shape {formula.shape}"
    # Oracle: the library's L_skew = ½(L − Π⁻¹LᵀΠ), computed on the full matrix.  The block formula is the same
    # arithmetic entry by entry, so they agree to a few ulps of O(1) entries; 1e-12 leaves a wide margin.
    oracle = mixing_generator(A_eff, O_eff).L_skew
    gap = np.abs(formula - oracle).max()
    assert gap < 1e-12, (
        f"your block formula differs from mixing_generator(A_eff, O_eff).L_skew by {gap:.2e}; check the ratio "
        "π_j/π_i, which transport is transposed, the factor ½, and that block (i, j) fills rows 6i.. and columns 6j.."
    )


@test_case(points=2)
def test_rotated_self_loops(answer_10a_2):
    _, _, P_rev, O_consistent = _objects()
    loops = np.asarray(answer_10a_2["loops"], dtype=float)
    assert loops.shape == (7, 3, 3), f"'loops' should hold 7 matrices 3×3, got shape {loops.shape}"
    assert np.abs(np.swapaxes(loops, -1, -2) @ loops - np.eye(3)).max() < 1e-10, "'loops' should be orthogonal"
    assert np.abs(loops - np.swapaxes(loops, -1, -2)).max() > 1e-3, (
        "every self-loop transport in 'loops' is symmetric: choose rotations that are not their own inverse"
    )
    field = O_consistent.copy()
    field[np.arange(7), np.arange(7)] = loops
    g = mixing_generator(P_rev, field)
    blocks = g.L_skew.reshape(7, 3, 7, 3).transpose(0, 2, 1, 3)[np.arange(7), np.arange(7)]
    diagonal = np.asarray(answer_10a_2["diagonal_blocks"], dtype=float)
    assert diagonal.shape == (7, 3, 3), f"'diagonal_blocks' should have shape (7, 3, 3), got {diagonal.shape}"
    # Oracle: L_skew of P_rev with your self-loops, recomputed here; same arithmetic, so 1e-12 is ample.
    assert np.abs(diagonal - blocks).max() < 1e-12, (
        "'diagonal_blocks' are not the diagonal blocks of mixing_generator(P_rev, O_loops).L_skew for your loops "
        "(block i occupies rows and columns 3i..3i+2)"
    )
    # ... and they are the closed form ½ A_ii (O_ii − O_iiᵀ) of the exercise.
    closed = 0.5 * np.diag(P_rev)[:, None, None] * (loops - np.swapaxes(loops, -1, -2))
    assert np.abs(blocks - closed).max() < 1e-12
    s = np.sqrt(np.repeat(g.pi, 3))
    ratio = np.linalg.norm(s[:, None] * g.L_skew / s) / np.linalg.norm(s[:, None] * g.L_mix / s)
    reported = float(answer_10a_2["drift_ratio"])
    # Oracle: ‖Π^½ L_skew Π^-½‖_F / ‖Π^½ L_mix Π^-½‖_F for your field; relative 1e-8 is far above rounding.
    assert abs(reported - ratio) <= 1e-8 * ratio, (
        f"'drift_ratio' is {reported:.6g}, but drift_reading(P_rev, O_loops)[0] for your loops is {ratio:.6g}"
    )
