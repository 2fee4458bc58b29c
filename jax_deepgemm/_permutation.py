"""Row permutations of an MoE layer's (token, slot) pairs, shared by its dispatch (nn/experts.py) and the FP8 expert
GEMM that folds the dispatch in (differentiable.py). Both directions gather: autodiff would turn a gather of rows into a
scatter-add, which XLA runs at a small fraction of the memory bandwidth on a GPU for rows this wide (benchmarks/NOTES.md
98); only the inverse permutation, one int32 per row, is scattered."""

from __future__ import annotations

import jax.numpy as jnp


def inverse_permutation(perm):
    """inv with inv[perm[i]] = i, for a permutation perm of [0, n)."""
    return jnp.zeros_like(perm).at[perm].set(jnp.arange(perm.shape[0], dtype=perm.dtype), unique_indices=True)


def sum_token_slots(pair_rows, order, top_k: int):
    """The transpose of gathering x[order // top_k]: pair_rows [T * top_k, D] in `order`'s order (a permutation of
    the (token, slot) pairs) -> [T, D], each token's top_k rows summed in float32 and rounded once to their dtype."""
    per_slot = pair_rows[inverse_permutation(order)]  # [T * top_k, D] in (token, slot) order
    summed = per_slot.reshape(-1, top_k, pair_rows.shape[-1]).sum(axis=1, dtype=jnp.float32)
    return summed.astype(pair_rows.dtype)
