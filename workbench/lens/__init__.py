r"""The log lens: a learned linear map read through its principal logarithm (numpy only).

For a learned map :math:`W` (an attention projection, an MLP weight, a per-layer mixer) the lens takes the
generator :math:`S = \log W` where it is well defined, reads its eigenvalues as log-gains and rotation
frequencies, measures how much layers interfere by the commutators :math:`\lVert[S_\ell, S_m]\rVert_F`, and
splits a generator into compact, symmetric, diagonal and nilpotent parts.  Inputs may be numpy arrays or
torch tensors (detached, moved to the host); results are float64 numpy arrays.  Catalogue area ``nn``
(``nn.log_lens.*``).

Logarithms
==========
KINDS                    -- the ``kind`` values: "auto", "orthogonal", "spd", "near-identity"
classify_map             -- which logarithm ``kind="auto"`` uses: spd, orthogonal, near-identity or general
principal_log            -- the principal real logarithm log W, with a ValueError saying why where there is none

Spectra and commutators
=======================
GeneratorSpectrum        -- eigenvalues of a generator as log-gains and frequencies (result class)
generator_spectrum       -- sorted eigenvalues of a generator or a stack, rounding-level parts set to zero
commutator_norms         -- the commutator map H_lm = ‖[S_l, S_m]‖_F of a stack (optionally scale-free)
adjacent_commutators     -- its superdiagonal ‖[S_l, S_{l+1}]‖_F along depth
plot_commutator_heatmap  -- the commutator map as a heatmap with a colorbar (NaN entries blank)

Splits of a generator
=====================
CartanSplit              -- A = K + P with product form e^K e^P and its BCH leading term (result class)
cartan_split             -- skew K = (A - A^T)/2 plus symmetric P = (A + A^T)/2
IwasawaSplit             -- A = K + H + N with product form e^K e^H e^N and its BCH leading term (result class)
iwasawa_split            -- skew + diagonal + strictly upper, from the lower/diagonal/upper parts of A
JordanChevalleySplit     -- exact A = D + N, sympy matrices (result class)
jordan_chevalley         -- exact semisimple + commuting nilpotent parts of a small matrix (up to 6x6)

The report
==========
LensEntry                -- one map of a report: its logarithm or the reason there is none, spectrum, split norms
LogLensReport            -- the entries, the commutator map and its superdiagonal
log_lens                 -- all of the above for a list of learned maps; never raises on an individual map

References
----------
Lie-Exponential Roadmap, "Log lens", "Log-Lens Diagnostics", "Branch cuts/logs" and the
generator-field section (:math:`\exp(K)\exp(H)\exp(N)`) [SEED]; the (K, H, N) formulas are reconstructed as
the Lie-algebra Iwasawa decomposition [RECON].  N. J. Higham, *Functions of Matrices*, SIAM 2008, ch. 11.
"""

from workbench.lens._commutators import adjacent_commutators, commutator_norms, plot_commutator_heatmap
from workbench.lens._logarithm import KINDS, classify_map, principal_log
from workbench.lens._report import LensEntry, LogLensReport, log_lens
from workbench.lens._spectrum import GeneratorSpectrum, generator_spectrum
from workbench.lens._splits import (
    CartanSplit,
    IwasawaSplit,
    JordanChevalleySplit,
    cartan_split,
    iwasawa_split,
    jordan_chevalley,
)

__all__ = [
    "KINDS",
    "CartanSplit",
    "GeneratorSpectrum",
    "IwasawaSplit",
    "JordanChevalleySplit",
    "LensEntry",
    "LogLensReport",
    "adjacent_commutators",
    "cartan_split",
    "classify_map",
    "commutator_norms",
    "generator_spectrum",
    "iwasawa_split",
    "jordan_chevalley",
    "log_lens",
    "plot_commutator_heatmap",
    "principal_log",
]
