"""One program that runs every family: the quantizers, the five GEMM families (and the transposed layout), vmap of
each, fp8_dot's and ragged_dot's gradients and mixed dtypes, fp8_linear, and the MoE layer with its gradient (on one
device and expert-parallel). Tests that check a JAX feature across the whole API (global modes, control flow) run it
under that feature and compare with its plain run."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np

import jax_deepgemm as dg
from conftest import kernels_active
from jax_deepgemm import nn

RNG = np.random.default_rng(64)


def _data(*shape, spread=True):
    x = RNG.standard_normal(shape)
    if spread:
        x = x * np.exp(RNG.uniform(-2, 2, shape[:-1] + (1,)))
    return x.astype(np.float32)


INPUTS = {
    "x": _data(130, 600), "w": _data(260, 600), "w_groups": _data(3, 260, 600, spread=False),
    "c": 10 * _data(130, 260), "c_k_grouped": _data(2, 2, 600, 256),
    "group_sizes": np.array([50, 0, 80], np.int32),
    "m_indices": np.repeat(np.array([0, -1, 2], np.int32), [40, 60, 30]),
    "masked_m": np.array([7, 0, 130], np.int32),
    "k_sizes": np.array([128, 0], np.int32),
    "router": 0.1 * _data(600, 4), "gate_up": 0.05 * _data(4, 600, 256), "down": 0.05 * _data(4, 128, 600),
}


def family_outputs(i, expert_parallel=True):
    """Each family's output on the inputs `i` (INPUTS as arrays), as {name: array or tuple of arrays}."""
    bf16 = lambda t: t.astype(jnp.bfloat16)  # noqa: E731
    x, w, wg = i["x"], i["w"], i["w_groups"]
    a = dg.per_token_cast_to_fp8(bf16(x))
    b = dg.per_block_cast_to_fp8(bf16(w))
    bg = jax.vmap(dg.per_block_cast_to_fp8)(bf16(wg))
    am = jax.vmap(dg.per_token_cast_to_fp8)(bf16(jnp.stack([x, x[::-1], x * 0.5])))
    out = {"a": a, "b": b, "dense": dg.fp8_gemm_nt(a, b)}
    out["dense_c"] = dg.fp8_gemm_nt(a, b, c=i["c"], out_dtype=jnp.float32)
    out["dense_tn"] = dg.fp8_gemm_tn((a[0].T, a[1]), (b[0].T, b[1]))  # A [K, M], B [K, N]
    out["ragged"] = dg.fp8_grouped_gemm_nt(a, bg, i["group_sizes"])
    out["contiguous"] = dg.m_grouped_fp8_gemm_nt_contiguous(a, bg, i["m_indices"])
    masked = dg.m_grouped_fp8_gemm_nt_masked(am, bg, i["masked_m"], 64)
    out["masked"] = computed_rows(masked, i["masked_m"])
    tokens = dg.per_token_cast_to_fp8(bf16(x[:128].T)), dg.per_token_cast_to_fp8(bf16(w[:128, :256].T))
    out["k_grouped"] = dg.k_grouped_fp8_gemm_nt_contiguous(*tokens, i["k_sizes"])
    out["fp8_dot"] = dg.fp8_dot(x, w.T)
    out["fp8_dot_grad"] = jax.grad(lambda p, q: dg.fp8_dot(p, q).sum(), (0, 1))(x, w.T)
    out["fp8_dot_mixed"] = dg.fp8_dot(bf16(x), w.T)  # bf16, x's dtype
    rhs = jnp.swapaxes(wg, 1, 2)
    out["ragged_dot_grad"] = jax.grad(lambda p, q: dg.ragged_dot(p, q, i["group_sizes"]).sum(), (0, 1))(x, rhs)
    out["ragged_dot_mixed"] = dg.ragged_dot(bf16(x), rhs, i["group_sizes"])  # float32, as jax.lax.ragged_dot's
    params = (x[:64], i["router"], i["gate_up"], i["down"])
    out["moe"] = nn.moe(*params, top_k=2)
    out["moe_grad"] = jax.grad(lambda *p: nn.moe(*p, top_k=2).astype(jnp.float32).sum(), (0, 1, 2, 3))(*params)
    out["linear"] = nn.fp8_linear(x, w.T, i["c"][0])
    out.update(batched_outputs(i, a, am, bg, tokens))
    if expert_parallel and len(jax.devices()) >= 2:  # the expert-parallel layer on two devices (the CPU suite: 8)
        mesh = jax.make_mesh((2,), ("ep",), axis_types=(jax.sharding.AxisType.Auto,), devices=jax.devices()[:2])
        out["moe_expert_parallel_grad"] = jax.grad(
            lambda *p: nn.moe(*p, top_k=2, mesh=mesh, axis_name="ep").astype(jnp.float32).sum(), (0, 1, 2, 3))(*params)
    return out


def computed_rows(d, masked_m):
    """The masked GEMM's output d [G, M, N] with the rows past masked_m (unspecified) zeroed."""
    rows = jnp.arange(d.shape[1], dtype=jnp.int32)
    return jnp.where(rows[None, :, None] < masked_m[:, None, None], d, 0)


def batched_outputs(i, a, am, bg, tokens):
    """vmap over each family (the batching rules fold the batch into rows, groups or N)."""
    two = lambda t: jax.tree.map(lambda u: jnp.stack([u, u * 0.5 if u.dtype == jnp.float32 else u]), t)  # noqa: E731
    sizes2 = jnp.stack([i["group_sizes"], i["group_sizes"][::-1]])
    out = {}
    out["vmap_dense_c"] = jax.vmap(lambda c: dg.fp8_gemm_nt(a, (bg[0][0], bg[1][0]), c=c, out_dtype=jnp.float32))(
        jnp.stack([i["c"], -i["c"]]))
    out["vmap_ragged"] = jax.vmap(lambda s: dg.fp8_grouped_gemm_nt(a, bg, s))(sizes2)
    out["vmap_ragged_weights"] = jax.vmap(lambda b: dg.fp8_grouped_gemm_nt(a, b, i["group_sizes"]))(two(bg))
    masked_m2 = jnp.stack([i["masked_m"], i["masked_m"][::-1]])
    masked = jax.vmap(lambda m: dg.m_grouped_fp8_gemm_nt_masked(am, bg, m, 64))(masked_m2)
    out["vmap_masked"] = jax.vmap(computed_rows)(masked, masked_m2)
    out["vmap_contiguous"] = jax.vmap(lambda ids: dg.m_grouped_fp8_gemm_nt_contiguous(a, bg, ids))(
        jnp.stack([i["m_indices"], i["m_indices"][::-1]]))
    out["vmap_k_grouped_c"] = jax.vmap(lambda c: dg.k_grouped_fp8_gemm_nt_contiguous(*tokens, i["k_sizes"], c=c))(
        i["c_k_grouped"])
    return out


def assert_same_outputs(got, want, label, *, exact_on_reference=True):
    """`got` and `want` (trees of NumPy arrays) hold the same arrays, dtypes and shapes included: bitwise on the
    reference, within 1e-6 where the kernels run (the same kernels either way; a reduction order that is not fixed).
    Without `exact_on_reference`, within 1e-6 of each array's largest magnitude either way: XLA may compile the
    reference's sums in another order inside a loop body (1 ulp)."""
    want_leaves = dict(jax.tree_util.tree_leaves_with_path(want))
    for path, g in jax.tree_util.tree_leaves_with_path(got):
        w, where = want_leaves[path], f"{label}: {jax.tree_util.keystr(path)}"
        assert g.dtype == w.dtype and g.shape == w.shape, f"{where}: {g.dtype}{g.shape} against {w.dtype}{w.shape}"
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        if not exact_on_reference:
            np.testing.assert_allclose(g64, w64, rtol=0, atol=1e-6 * np.abs(w64).max(initial=0), err_msg=where)
        elif kernels_active():
            np.testing.assert_allclose(g64, w64, rtol=1e-6, err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)
    assert len(want_leaves) == len(jax.tree.leaves(got)), label


def cuda_kernel_calls(program, *args) -> list[str]:
    """Our kernels' calls in `program(*args)` lowered for CUDA (checked without a GPU), in program order: each call's
    operand types and attributes, with SSA names, argument names and locations dropped."""
    text = jax.jit(program).trace(*args).lower(lowering_platforms=("cuda",)).as_text()
    calls = [line for line in text.splitlines() if "custom_call @jdg_" in line]
    return [re.sub(r"%[0-9A-Za-z_#]+(:[0-9]+)?", "%", re.sub(r"loc\(.*\)$", "", line.strip())) for line in calls]
