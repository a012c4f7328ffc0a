"""The workbench's own identity catalogue, one module per topic.

Each module exposes ``IDENTITIES`` and is registered under the entry-point group
``workbench.derivations`` in ``pyproject.toml``, exactly as an outside course would register its own.

structure  -- exp maps a Lie algebra into its group: orthogonal, SPD, stochastic, symplectic
rank_one   -- e^{uvᵀ} = I + φ₁(vᵀu) uvᵀ
softmax    -- the small-β softmax expansion and its β² remainder
dirichlet  -- ℰ(f,f) = (1ᵀp)⟨f, Lf⟩_π = ½ Σ K_ij (f_i − f_j)²
"""
