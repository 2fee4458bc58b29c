"""The MoE layer's row permutations (_permutation.py): the dispatch's transpose sums each token's rows."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from conftest import seed_of

from jax_deepgemm._permutation import inverse_permutation, sum_token_slots


def test_sum_token_slots_is_the_dispatch_transpose():
    """<x[order // top_k], g> = <x, sum_token_slots(g, order, top_k)> for any x and g."""
    tokens, top_k, d = 50, 3, 16
    rng = np.random.default_rng(seed_of("slots"))
    order = jnp.asarray(rng.permutation(tokens * top_k), jnp.int32)
    np.testing.assert_array_equal(np.asarray(inverse_permutation(order))[np.asarray(order)], np.arange(tokens * top_k))
    x, g = rng.standard_normal((tokens, d)), rng.standard_normal((tokens * top_k, d))
    summed = sum_token_slots(jnp.asarray(g, jnp.float32), order, top_k)
    lhs = float(np.sum(x[np.asarray(order) // top_k] * g))
    np.testing.assert_allclose(float(np.sum(x * np.asarray(summed, np.float64))), lhs, rtol=1e-5)
