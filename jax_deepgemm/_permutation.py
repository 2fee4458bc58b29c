"""Row permutations of an MoE layer's (token, slot) pairs, shared by its dispatch (nn/experts.py) and the FP8 expert
GEMM that folds the dispatch in (differentiable.py). Both directions gather: autodiff would turn a gather of rows into a
scatter-add, which XLA runs at a small fraction of the memory bandwidth on a GPU for rows this wide (benchmarks/NOTES.md
98); only the inverse permutation, one int32 per row, is scattered."""

from __future__ import annotations

import jax
import jax.numpy as jnp

# gather_rows moves 32-bit words where rows are whole words: XLA's gather costs about the same per element whatever
# its size (an H200 gathered 16384 FP8 rows of 7168 bytes in 140 us as bytes, 51 us as words; NOTES 102). 0: gather
# the elements as they are (for comparisons).
WORD_BYTES = 4


def gather_rows(x, index):
    """x[index] for x [R, C] and an int index [P] (indices as jnp indexing takes them), for gathers that XLA writes
    out whole. Where XLA fuses a gather into its consumers (nn/experts.py's dispatch and permutations of bf16 rows), the
    words' bitcasts split those fusions: +321 us per MoE step on an H200 (NOTES 102)."""
    size = x.dtype.itemsize
    per_word = WORD_BYTES // size if WORD_BYTES and size <= WORD_BYTES else 0
    numeric = jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.integer)
    if x.ndim != 2 or not per_word or x.shape[1] % per_word or not numeric:
        return x[index]
    words = x.reshape(x.shape[0], x.shape[1] // per_word, per_word) if per_word > 1 else x
    words = jax.lax.bitcast_convert_type(words, jnp.uint32)
    return jax.lax.bitcast_convert_type(words[index], x.dtype).reshape(index.shape[0], x.shape[1])


def inverse_permutation(perm):
    """inv with inv[perm[i]] = i, for a permutation perm of [0, n)."""
    return jnp.zeros_like(perm).at[perm].set(jnp.arange(perm.shape[0], dtype=perm.dtype), unique_indices=True)


def sum_token_slots(pair_rows, order, top_k: int):
    """The transpose of gathering x[order // top_k]: pair_rows [T * top_k, D] in `order`'s order (a permutation of
    the (token, slot) pairs) -> [T, D], each token's top_k rows summed in float32 and rounded once to their dtype."""
    per_slot = pair_rows[inverse_permutation(order)]  # [T * top_k, D] in (token, slot) order
    summed = per_slot.reshape(-1, top_k, pair_rows.shape[-1]).sum(axis=1, dtype=jnp.float32)
    return summed.astype(pair_rows.dtype)
