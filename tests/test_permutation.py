"""The MoE layer's row permutations (_permutation.py): gathers of whole rows as 32-bit words equal x[index] for every
dtype and width (falling back to the elements where rows are not whole words), and the dispatch's transpose sums each
token's rows."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import seed_of

from jax_deepgemm import _permutation
from jax_deepgemm._permutation import gather_rows, inverse_permutation, sum_token_slots


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float32, jnp.float8_e4m3fn, jnp.int8, jnp.int32, jnp.float16,
                                   jnp.bool_])
@pytest.mark.parametrize("cols", [256, 6, 3, 1, 0])
def test_gather_rows_equals_indexing(dtype, cols):
    rng = np.random.default_rng(seed_of("gather-rows", str(dtype), cols))
    x = jnp.asarray(rng.standard_normal((37, cols)) * 100).astype(dtype)
    index = jnp.asarray(rng.integers(-37, 37, 90), jnp.int32)  # (negative ones count from the end, as x[index])
    got = jax.jit(gather_rows)(x, index)
    want = x[index]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))


def test_gather_rows_moves_words_where_rows_are_whole_words(monkeypatch):
    x = jnp.ones((8, 12), jnp.bfloat16)
    text = jax.jit(gather_rows).lower(x, jnp.arange(4, dtype=jnp.int32)).as_text()
    assert "tensor<8x6xui32>" in text  # 12 bf16 columns as 6 words
    text = jax.jit(gather_rows).lower(jnp.ones((8, 3), jnp.bfloat16), jnp.arange(4, dtype=jnp.int32)).as_text()
    assert "ui32" not in text  # 6 bytes a row: the elements as they are
    monkeypatch.setattr(_permutation, "WORD_BYTES", 0)
    assert "ui32" not in jax.jit(lambda x, i: gather_rows(x, i)).lower(x, jnp.arange(4, dtype=jnp.int32)).as_text()


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
