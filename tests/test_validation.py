"""Trace-time validation of every public function: each wrong dtype, rank, shape, scale shape, empty dimension,
non-static hint, Python scalar or bad out_dtype raises TypeError/ValueError naming the argument; NumPy arrays with
the right dtypes and other integer index dtypes are accepted (converted)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
import oracle
from jax_deepgemm import primitives
from conftest import BF16, E4M3, E5M2, F32, UE8M0, assert_matches, q_lhs, q_rhs, randn, to64

M, N, K = 3, 130, 200  # kb = 2, nb = 2
G = 2


@functools.lru_cache(maxsize=None)
def base():
    """Valid operands of every function (cached: built once)."""
    a = q_lhs(randn(1, (M, K)))
    b = q_rhs(randn(2, (N, K)))
    bg = jax.vmap(q_rhs)(randn(3, (G, N, K)))
    am = jax.vmap(q_lhs)(randn(4, (G, M, K)))
    ka = q_lhs(randn(5, (M, 256)))
    kb = q_lhs(randn(6, (N, 256)))
    x = randn(7, (M, K))
    w = randn(8, (K, N))
    rhs = randn(9, (G, K, N))
    return dict(a=a, b=b, bg=bg, am=am, ka=ka, kb=kb, x=x, w=w, rhs=rhs)


def f32(shape):
    return jnp.ones(shape, F32)


def fp8(shape, dtype=E4M3):
    return jnp.ones(shape, dtype)


def gemm_nt(a=None, b=None, **kw):
    d = base()
    return dg.fp8_gemm_nt(d["a"] if a is None else a, d["b"] if b is None else b, **kw)


def contiguous(a=None, b=None, ids=None, **kw):
    d = base()
    return dg.m_grouped_fp8_gemm_nt_contiguous(d["a"] if a is None else a, d["bg"] if b is None else b,
                                               jnp.zeros((M,), jnp.int32) if ids is None else ids, **kw)


def ragged(a=None, b=None, sizes=None, **kw):
    d = base()
    return dg.fp8_grouped_gemm_nt(d["a"] if a is None else a, d["bg"] if b is None else b,
                                  jnp.asarray([1, 2], jnp.int32) if sizes is None else sizes, **kw)


def masked(a=None, b=None, masked_m=None, expected_m=2, **kw):
    d = base()
    return dg.m_grouped_fp8_gemm_nt_masked(d["am"] if a is None else a, d["bg"] if b is None else b,
                                           jnp.asarray([1, 3], jnp.int32) if masked_m is None else masked_m,
                                           expected_m, **kw)


def kgrouped(a=None, b=None, sizes=None, **kw):
    d = base()
    return dg.k_grouped_fp8_gemm_nt_contiguous(d["ka"] if a is None else a, d["kb"] if b is None else b,
                                               jnp.asarray([128, 128], jnp.int32) if sizes is None else sizes, **kw)


def a_with(data=None, scale=None):
    a = base()["a"]
    return (a[0] if data is None else data, a[1] if scale is None else scale)


def b_with(data=None, scale=None, key="b"):
    b = base()[key]
    return (b[0] if data is None else data, b[1] if scale is None else scale)


# (id, callable, exception type, regex the message must match)
CASES = [
    # ---- dense: pairs
    ("nt-a-not-pair", lambda: gemm_nt(a=base()["a"][0]), TypeError, r"\ba must be a pair"),
    ("nt-a-triple", lambda: gemm_nt(a=(*base()["a"], None)), TypeError, r"\ba must be a pair"),
    ("nt-b-scalar", lambda: gemm_nt(b=1.0), TypeError, r"\bb must be a pair"),
    # ---- dense: data dtype
    ("nt-a-f32", lambda: gemm_nt(a=a_with(f32((M, K)))), TypeError, r"a\[0\].*float32"),
    ("nt-a-bf16", lambda: gemm_nt(a=a_with(jnp.ones((M, K), BF16))), TypeError, r"a\[0\].*bfloat16"),
    ("nt-a-int8", lambda: gemm_nt(a=a_with(jnp.ones((M, K), jnp.int8))), TypeError, r"a\[0\].*int8"),
    ("nt-b-f32", lambda: gemm_nt(b=b_with(f32((N, K)))), TypeError, r"b\[0\].*float32"),
    ("nt-b-uint8", lambda: gemm_nt(b=b_with(jnp.ones((N, K), jnp.uint8))), TypeError, r"b\[0\].*uint8"),
    # ---- dense: scale dtype
    ("nt-a-scale-int", lambda: gemm_nt(a=a_with(scale=jnp.ones((M, 2), jnp.int32))), TypeError, r"a\[1\].*int32"),
    ("nt-a-scale-bf16", lambda: gemm_nt(a=a_with(scale=jnp.ones((M, 2), BF16))), TypeError, r"a\[1\].*bfloat16"),
    ("nt-b-scale-f16", lambda: gemm_nt(b=b_with(scale=jnp.ones((2, 2), jnp.float16))), TypeError, r"b\[1\].*float16"),
    ("nt-b-scale-fp8", lambda: gemm_nt(b=b_with(scale=fp8((2, 2)))), TypeError, r"b\[1\].*float8_e4m3fn"),
    # ---- dense: rank
    ("nt-a-3d", lambda: gemm_nt(a=a_with(fp8((1, M, K)))), ValueError, r"a\[0\].*2-D.*\(1, 3, 200\)"),
    ("nt-a-1d", lambda: gemm_nt(a=a_with(fp8((K,)))), ValueError, r"a\[0\].*2-D"),
    ("nt-b-3d", lambda: gemm_nt(b=b_with(fp8((1, N, K)))), ValueError, r"b\[0\].*2-D"),
    ("nt-a-scale-1d", lambda: gemm_nt(a=a_with(scale=f32((2,)))), ValueError, r"a\[1\].*shape \(2,\)"),
    # ---- dense: K mismatch
    ("nt-k-mismatch", lambda: gemm_nt(b=b_with(fp8((N, K - 1)))), ValueError, r"K mismatch.*K=200.*K=199"),
    ("nn-b-stored-nt", lambda: dg.fp8_gemm_nn(base()["a"], b_with(fp8((N, K)))), ValueError, r"K mismatch"),
    ("tn-a-stored-nt", lambda: dg.fp8_gemm_tn(a_with(fp8((M, K))), b_with(fp8((K, N)))), ValueError,
     r"K mismatch|a\[1\]"),
    ("tt-k-mismatch", lambda: dg.fp8_gemm_tt(a_with(fp8((K + 1, M))), base()["b"]), ValueError, r"K mismatch"),
    # ---- dense: scale shapes off by one
    ("nt-a-scale-rows+1", lambda: gemm_nt(a=a_with(scale=f32((M + 1, 2)))), ValueError,
     r"a\[1\].*\(4, 2\).*\(3, 2\)"),
    ("nt-a-scale-kb+1", lambda: gemm_nt(a=a_with(scale=f32((M, 3)))), ValueError, r"a\[1\].*\(3, 3\)"),
    ("nt-a-scale-kb-1", lambda: gemm_nt(a=a_with(scale=f32((M, 1)))), ValueError, r"a\[1\]"),
    ("nt-b-scale-nb+1", lambda: gemm_nt(b=b_with(scale=f32((3, 2)))), ValueError, r"b\[1\].*\(3, 2\).*\(2, 2\)"),
    ("nt-b-scale-kb-1", lambda: gemm_nt(b=b_with(scale=f32((2, 1)))), ValueError, r"b\[1\]"),
    ("nt-b-scale-rows-1", lambda: gemm_nt(b=b_with(scale=f32((N - 1, 2)))), ValueError, r"b\[1\]"),
    ("nt-b-scale-transposed", lambda: gemm_nt(b=b_with(scale=f32((2, N)))), ValueError, r"b\[1\]"),
    ("nt-a-scale-blockwise", lambda: gemm_nt(a=(fp8((130, K)), f32((2, 2)))), ValueError, r"a\[1\]"),
    # ---- dense: empty dimensions
    ("nt-empty-m", lambda: gemm_nt(a=(fp8((0, K)), f32((0, 2)))), ValueError, r"a\[0\].*empty"),
    ("nt-empty-n", lambda: gemm_nt(b=(fp8((0, K)), f32((0, 2)))), ValueError, r"b\[0\].*empty"),
    ("nt-empty-k", lambda: gemm_nt(a=(fp8((M, 0)), f32((M, 0))), b=(fp8((N, 0)), f32((2, 0)))), ValueError,
     r"a\[0\].*empty"),
    # ---- dense: Python scalars
    ("nt-a-data-scalar", lambda: gemm_nt(a=(1.0, f32((M, 2)))), TypeError, r"a\[0\].*must be an array.*float"),
    ("nt-a-scale-scalar", lambda: gemm_nt(a=a_with(scale=2.0)), TypeError, r"a\[1\].*must be an array"),
    ("nt-b-scale-int", lambda: gemm_nt(b=b_with(scale=3)), TypeError, r"b\[1\].*must be an array"),
    ("nt-b-scale-none", lambda: gemm_nt(b=(base()["b"][0], None)), TypeError, r"b\[1\].*must be an array"),
    # ---- dense: out_dtype
    ("nt-out-f16", lambda: gemm_nt(out_dtype=jnp.float16), TypeError, r"out_dtype.*float16"),
    ("nt-out-int32", lambda: gemm_nt(out_dtype=jnp.int32), TypeError, r"out_dtype"),
    ("nt-out-fp8", lambda: gemm_nt(out_dtype=E4M3), TypeError, r"out_dtype"),
    ("nt-out-f64", lambda: gemm_nt(out_dtype=np.float64), TypeError, r"out_dtype"),
    ("nt-out-garbage", lambda: gemm_nt(out_dtype="not-a-dtype"), TypeError, r"out_dtype"),
    ("nn-out-f16", lambda: dg.fp8_gemm_nn(base()["a"], (base()["b"][0].T, base()["b"][1]), out_dtype=jnp.float16),
     TypeError, r"out_dtype"),
    ("tt-out-f16", lambda: dg.fp8_gemm_tt((base()["a"][0].T, base()["a"][1]), base()["b"], out_dtype=jnp.float16),
     TypeError, r"out_dtype"),
    # ---- dense: c
    ("nt-c-shape", lambda: gemm_nt(c=f32((M, N + 1))), ValueError, r"\bc has shape \(3, 131\).*\(3, 130\)"),
    ("nt-c-transposed", lambda: gemm_nt(c=f32((N, M))), ValueError, r"\bc has shape"),
    ("nt-c-int", lambda: gemm_nt(c=jnp.ones((M, N), jnp.int32)), TypeError, r"\bc must be.*int32"),
    ("nt-c-scalar", lambda: gemm_nt(c=1.0), TypeError, r"\bc must be an array"),
    ("nt-overwrite-no-c", lambda: gemm_nt(overwrite_c=True), ValueError, r"overwrite_c=True.*no c was given"),
    ("nt-overwrite-c-dtype", lambda: gemm_nt(c=f32((M, N)), overwrite_c=True), ValueError,
     r"overwrite_c=True.*c must have out_dtype's dtype \(bfloat16\); got c of float32"),
    ("nt-overwrite-int", lambda: gemm_nt(c=f32((M, N)), out_dtype=F32, overwrite_c=1), TypeError,
     r"overwrite_c must be a Python bool, got int"),
    ("nt-overwrite-traced", lambda: jax.jit(lambda o: gemm_nt(c=f32((M, N)), out_dtype=F32, overwrite_c=o))(True),
     TypeError, r"overwrite_c must be a Python bool, got a traced value"),
    ("tn-c-shape", lambda: dg.fp8_gemm_tn((base()["a"][0].T, base()["a"][1]), (base()["b"][0].T, base()["b"][1]),
                                          c=f32((M,))), ValueError, r"\bc has shape"),
    # ---- contiguous
    ("cont-b-2d", lambda: contiguous(b=base()["b"]), ValueError, r"b\[0\].*3-D"),
    ("cont-a-3d", lambda: contiguous(a=base()["am"]), ValueError, r"a\[0\].*2-D"),
    ("cont-b-f32", lambda: contiguous(b=b_with(f32((G, N, K)), key="bg")), TypeError, r"b\[0\]"),
    ("cont-a-scale-int", lambda: contiguous(a=a_with(scale=jnp.ones((M, 2), jnp.int32))), TypeError, r"a\[1\]"),
    ("cont-k-mismatch", lambda: contiguous(b=(fp8((G, N, K + 1)), f32((G, 2, 2)))), ValueError, r"K mismatch"),
    ("cont-b-scale-g+1", lambda: contiguous(b=b_with(scale=f32((G + 1, 2, 2)), key="bg")), ValueError,
     r"b\[1\].*\(3, 2, 2\)"),
    ("cont-b-scale-2d", lambda: contiguous(b=b_with(scale=f32((2, 2)), key="bg")), ValueError, r"b\[1\]"),
    ("cont-b-scale-nb+1", lambda: contiguous(b=b_with(scale=f32((G, 3, 2)), key="bg")), ValueError, r"b\[1\]"),
    ("cont-ids-float", lambda: contiguous(ids=jnp.zeros((M,), F32)), TypeError, r"m_indices.*float32"),
    ("cont-ids-bool", lambda: contiguous(ids=jnp.zeros((M,), bool)), TypeError, r"m_indices"),
    ("cont-ids-len", lambda: contiguous(ids=jnp.zeros((M + 1,), jnp.int32)), ValueError, r"m_indices.*\(4,\)"),
    ("cont-ids-2d", lambda: contiguous(ids=jnp.zeros((M, 1), jnp.int32)), ValueError, r"m_indices"),
    ("cont-ids-scalar", lambda: contiguous(ids=0), TypeError, r"m_indices.*must be an array"),
    ("cont-out-f16", lambda: contiguous(out_dtype=jnp.float16), TypeError, r"out_dtype"),
    ("cont-empty-m", lambda: contiguous(a=(fp8((0, K)), f32((0, 2))), ids=jnp.zeros((0,), jnp.int32)), ValueError,
     r"a\[0\].*empty"),
    ("cont-empty-g", lambda: contiguous(b=(fp8((0, N, K)), f32((0, 2, 2)))), ValueError, r"b\[0\].*empty"),
    # ---- ragged
    ("rag-sizes-float", lambda: ragged(sizes=jnp.asarray([1.0, 2.0], jnp.float32)), TypeError, r"group_sizes.*float32"),
    ("rag-sizes-len", lambda: ragged(sizes=jnp.asarray([1, 2, 0], jnp.int32)), ValueError, r"group_sizes.*\(3,\)"),
    ("rag-sizes-2d", lambda: ragged(sizes=jnp.ones((G, 1), jnp.int32)), ValueError, r"group_sizes"),
    ("rag-sizes-scalar", lambda: ragged(sizes=3), TypeError, r"group_sizes.*must be an array"),
    ("rag-k-mismatch", lambda: ragged(a=(fp8((M, K + 1)), f32((M, 2)))), ValueError, r"K mismatch"),
    ("rag-a-scale-kb+1", lambda: ragged(a=a_with(scale=f32((M, 3)))), ValueError, r"a\[1\]"),
    ("rag-b-scale", lambda: ragged(b=b_with(scale=f32((G, 2, 3)), key="bg")), ValueError, r"b\[1\]"),
    ("rag-b-e4m3-scale-int", lambda: ragged(b=b_with(scale=jnp.ones((G, 2, 2), jnp.int8), key="bg")), TypeError,
     r"b\[1\]"),
    ("rag-out-f16", lambda: ragged(out_dtype=jnp.float16), TypeError, r"out_dtype"),
    ("rag-a-not-pair", lambda: ragged(a=base()["a"][0]), TypeError, r"\ba must be a pair"),
    # ---- masked
    ("mask-expected-float", lambda: masked(expected_m=2.5), TypeError, r"expected_m"),
    ("mask-expected-bool", lambda: masked(expected_m=True), TypeError, r"expected_m"),
    ("mask-expected-float-array", lambda: masked(expected_m=np.float32(2.0)), TypeError, r"expected_m"),
    ("mask-expected-none", lambda: masked(expected_m=None), TypeError, r"expected_m"),
    ("mask-expected-negative", lambda: masked(expected_m=-1), ValueError, r"expected_m.*-1"),
    ("mask-expected-traced", lambda: jax.jit(lambda e: masked(expected_m=e))(2), TypeError, r"expected_m"),
    ("mask-a-2d", lambda: masked(a=base()["a"]), ValueError, r"a\[0\].*3-D"),
    ("mask-b-2d", lambda: masked(b=base()["b"]), ValueError, r"b\[0\].*3-D"),
    ("mask-g-mismatch", lambda: masked(b=(fp8((G + 1, N, K)), f32((G + 1, 2, 2))), masked_m=jnp.ones(3, jnp.int32)),
     ValueError, r"group count.*G=2.*G=3"),
    ("mask-k-mismatch", lambda: masked(b=(fp8((G, N, K - 1)), f32((G, 2, 2)))), ValueError, r"K mismatch"),
    ("mask-a-scale-kb+1", lambda: masked(a=(base()["am"][0], f32((G, M, 3)))), ValueError, r"a\[1\].*\(2, 3, 3\)"),
    ("mask-a-scale-2d", lambda: masked(a=(base()["am"][0], f32((M, 2)))), ValueError, r"a\[1\]"),
    ("mask-a-scale-int", lambda: masked(a=(base()["am"][0], jnp.ones((G, M, 2), jnp.int32))), TypeError, r"a\[1\]"),
    ("mask-a-f32", lambda: masked(a=(f32((G, M, K)), base()["am"][1])), TypeError, r"a\[0\]"),
    ("mask-b-scale", lambda: masked(b=b_with(scale=f32((G, 3, 2)), key="bg")), ValueError, r"b\[1\]"),
    ("mask-masked-float", lambda: masked(masked_m=jnp.asarray([1.0, 2.0], jnp.float32)), TypeError,
     r"masked_m.*float32"),
    ("mask-masked-len", lambda: masked(masked_m=jnp.asarray([1], jnp.int32)), ValueError, r"masked_m.*\(1,\)"),
    ("mask-masked-scalar", lambda: masked(masked_m=2), TypeError, r"masked_m.*must be an array"),
    ("mask-out-f16", lambda: masked(out_dtype=jnp.float16), TypeError, r"out_dtype"),
    ("mask-empty-m", lambda: masked(a=(fp8((G, 0, K)), f32((G, 0, 2)))), ValueError, r"a\[0\].*empty"),
    # ---- k-grouped
    ("kg-k-not-128", lambda: kgrouped(a=q_lhs(randn(1, (M, K))), b=q_lhs(randn(2, (N, K)))), ValueError,
     r"K must be a multiple of 128.*K=200"),
    ("kg-k-mismatch", lambda: kgrouped(b=(fp8((N, 128)), f32((N, 1)))), ValueError, r"K mismatch"),
    ("kg-a-scale-block", lambda: kgrouped(a=(base()["ka"][0], f32((1, 2)))), ValueError, r"a\[1\].*\(1, 2\)"),
    ("kg-b-scale-block", lambda: kgrouped(b=(base()["kb"][0], f32((2, 2)))), ValueError, r"b\[1\].*\(2, 2\)"),
    ("kg-b-scale-kb+1", lambda: kgrouped(b=(base()["kb"][0], f32((N, 3)))), ValueError, r"b\[1\]"),
    ("kg-a-scale-f16", lambda: kgrouped(a=(base()["ka"][0], jnp.ones((M, 2), jnp.float16))), TypeError, r"a\[1\]"),
    ("kg-a-bf16", lambda: kgrouped(a=(jnp.ones((M, 256), BF16), base()["ka"][1])), TypeError, r"a\[0\]"),
    ("kg-b-3d", lambda: kgrouped(b=(fp8((1, N, 256)), base()["kb"][1])), ValueError, r"b\[0\].*2-D"),
    ("kg-sizes-empty", lambda: kgrouped(sizes=jnp.zeros((0,), jnp.int32)), ValueError, r"group_sizes.*at least one"),
    ("kg-sizes-2d", lambda: kgrouped(sizes=jnp.ones((2, 1), jnp.int32)), ValueError, r"group_sizes"),
    ("kg-sizes-float", lambda: kgrouped(sizes=jnp.asarray([128.0, 128.0])), TypeError, r"group_sizes"),
    ("kg-sizes-scalar", lambda: kgrouped(sizes=256), TypeError, r"group_sizes.*must be an array"),
    ("kg-c-shape", lambda: kgrouped(c=f32((2, M, N + 1))), ValueError, r"\bc has shape \(2, 3, 131\).*\(2, 3, 130\)"),
    ("kg-c-groups", lambda: kgrouped(c=f32((3, M, N))), ValueError, r"\bc has shape"),
    ("kg-c-int", lambda: kgrouped(c=jnp.ones((2, M, N), jnp.int32)), TypeError, r"\bc must be"),
    ("kg-overwrite-no-c", lambda: kgrouped(overwrite_c=True), ValueError, r"overwrite_c=True.*no c was given"),
    ("kg-empty-m", lambda: kgrouped(a=(fp8((0, 256)), f32((0, 2)))), ValueError, r"a\[0\].*empty"),
    # ---- fp8_dot
    ("dot-x-int", lambda: dg.fp8_dot(jnp.ones((M, K), jnp.int32), base()["w"]), TypeError, r"\bx must be.*int32"),
    ("dot-x-fp8", lambda: dg.fp8_dot(fp8((M, K)), base()["w"]), TypeError, r"\bx must be.*float8"),
    ("dot-x-scalar", lambda: dg.fp8_dot(1.0, base()["w"]), TypeError, r"\bx must be an array"),
    ("dot-x-0d", lambda: dg.fp8_dot(jnp.float32(1.0), base()["w"]), ValueError, r"\bx must be \[\.\.\., K\]"),
    ("dot-w-int", lambda: dg.fp8_dot(base()["x"], jnp.ones((K, N), jnp.int8)), TypeError, r"\bw must be.*int8"),
    ("dot-w-3d", lambda: dg.fp8_dot(base()["x"], f32((1, K, N))), ValueError, r"\bw must be 2-D"),
    ("dot-w-1d", lambda: dg.fp8_dot(base()["x"], f32((K,))), ValueError, r"\bw must be 2-D"),
    ("dot-k-mismatch", lambda: dg.fp8_dot(base()["x"], f32((K + 1, N))), ValueError, r"K mismatch.*K=200.*K=201"),
    ("dot-w-transposed", lambda: dg.fp8_dot(base()["x"], f32((N, K))), ValueError, r"K mismatch"),
    ("dot-w-scalar", lambda: dg.fp8_dot(base()["x"], 2.0), TypeError, r"\bw must be an array"),
    # (empty dimensions: x @ w's result, test_differentiable.py's test_empty_dimensions_give_what_jax_gives)
    ("dot-pair-f32-data", lambda: dg.fp8_dot(base()["x"], (f32((N, K)), f32((2, 2)))), TypeError, r"w\[0\]"),
    ("dot-pair-k-mismatch", lambda: dg.fp8_dot(base()["x"], (fp8((N, K + 1)), f32((2, 2)))), ValueError,
     r"K mismatch"),
    ("dot-pair-kn-layout", lambda: dg.fp8_dot(base()["x"], (fp8((K, N)), f32((2, 2)))), ValueError, r"K mismatch"),
    ("dot-pair-scale-per-row", lambda: dg.fp8_dot(base()["x"], (base()["b"][0], f32((N, 2)))), ValueError, r"w\[1\]"),
    ("dot-pair-scale-off", lambda: dg.fp8_dot(base()["x"], (base()["b"][0], f32((2, 3)))), ValueError, r"w\[1\]"),
    ("dot-pair-scale-int", lambda: dg.fp8_dot(base()["x"], (base()["b"][0], jnp.ones((2, 2), jnp.int32))), TypeError,
     r"w\[1\]"),
    ("dot-pair-triple", lambda: dg.fp8_dot(base()["x"], (*base()["b"], None)), TypeError, r"\bw must be a pair"),
    # ---- ragged_dot
    ("rd-lhs-3d", lambda: dg.ragged_dot(f32((1, M, K)), base()["rhs"], jnp.asarray([1, 2], jnp.int32)), ValueError,
     r"\blhs must be 2-D"),
    ("rd-lhs-int", lambda: dg.ragged_dot(jnp.ones((M, K), jnp.int32), base()["rhs"], jnp.asarray([1, 2])), TypeError,
     r"\blhs must be"),
    ("rd-rhs-2d", lambda: dg.ragged_dot(base()["x"], f32((K, N)), jnp.asarray([1, 2], jnp.int32)), ValueError,
     r"\brhs must be 3-D"),
    ("rd-rhs-fp8", lambda: dg.ragged_dot(base()["x"], fp8((G, K, N)), jnp.asarray([1, 2], jnp.int32)), TypeError,
     r"\brhs must be"),
    ("rd-k-mismatch", lambda: dg.ragged_dot(base()["x"], f32((G, K + 1, N)), jnp.asarray([1, 2], jnp.int32)),
     ValueError, r"K mismatch"),
    ("rd-rhs-gnk-layout", lambda: dg.ragged_dot(base()["x"], f32((G, N, K)), jnp.asarray([1, 2], jnp.int32)),
     ValueError, r"K mismatch"),
    ("rd-sizes-float", lambda: dg.ragged_dot(base()["x"], base()["rhs"], jnp.asarray([1.0, 2.0])), TypeError,
     r"group_sizes"),
    ("rd-sizes-len", lambda: dg.ragged_dot(base()["x"], base()["rhs"], jnp.asarray([3], jnp.int32)), ValueError,
     r"group_sizes.*\(1,\)"),
    ("rd-sizes-scalar", lambda: dg.ragged_dot(base()["x"], base()["rhs"], 3), TypeError, r"group_sizes"),
    ("rd-offset-shape", lambda: dg.ragged_dot(base()["x"], base()["rhs"], jnp.asarray([1, 2], jnp.int32),
                                              group_offset=jnp.asarray([0, 1], jnp.int32)), ValueError,
     r"group_offset.*\(2,\)"),
    ("rd-offset-float", lambda: dg.ragged_dot(base()["x"], base()["rhs"], jnp.asarray([1, 2], jnp.int32),
                                              group_offset=jnp.asarray([0.0])), TypeError, r"group_offset"),
    ("rd-preferred-int", lambda: dg.ragged_dot(base()["x"], base()["rhs"], jnp.asarray([1, 2], jnp.int32),
                                               preferred_element_type=jnp.int32), TypeError,
     r"preferred_element_type"),
    # ---- quantization
    ("pt-1d", lambda: dg.per_token_cast_to_fp8(f32((K,))), ValueError, r"per_token_cast_to_fp8.*\bx must be 2-D"),
    ("pt-3d", lambda: dg.per_token_cast_to_fp8(f32((1, M, K))), ValueError, r"\bx must be 2-D"),
    ("pt-int", lambda: dg.per_token_cast_to_fp8(jnp.ones((M, K), jnp.int32)), TypeError, r"\bx must be.*int32"),
    ("pb-1d", lambda: dg.per_block_cast_to_fp8(f32((K,))), ValueError, r"per_block_cast_to_fp8.*\bx must be 2-D"),
    ("pb-int", lambda: dg.per_block_cast_to_fp8(jnp.ones((M, K), jnp.int8)), TypeError, r"\bx must be.*int8"),
    ("deq-not-pair", lambda: dg.dequantize(base()["a"][0]), TypeError, r"pair"),
    ("deq-scale-rank", lambda: dg.dequantize((base()["a"][0], f32((2,)))), ValueError,
     r"pair\[1\] \(scale\) has shape \(2,\); expected \(1, 2\)"),
    ("deq-scale-shape", lambda: dg.dequantize((base()["a"][0], f32((M, 3)))), ValueError,
     r"pair\[1\] \(scale\) has shape \(3, 3\)"),
    ("deq-block-bad", lambda: dg.dequantize(base()["a"], block=(2, 128)), ValueError, r"block must be"),
    ("deq-block-mismatch", lambda: dg.dequantize(base()["a"], block=(128, 128)), ValueError,
     r"pair\[1\] \(scale\) has shape \(3, 2\); expected \(1, 2\)"),
    ("deq-1d", lambda: dg.dequantize((fp8((K,)), f32((2,)))), ValueError, r"pair\[0\].*rank >= 2"),
    # ---- layout helpers
    ("tma-elem-size", lambda: dg.get_tma_aligned_size(5, 3), ValueError, r"element_size.*3"),
    ("mn-major-1d", lambda: dg.get_mn_major_tma_aligned_tensor(f32((4,))), ValueError, r"\bscale"),
    ("mn-major-4d", lambda: dg.get_mn_major_tma_aligned_tensor(f32((1, 1, 4, 2))), ValueError, r"\bscale"),
    ("mn-major-int", lambda: dg.get_mn_major_tma_aligned_tensor(jnp.ones((4, 2), jnp.int32)), TypeError, r"\bscale"),
    ("sf-shape", lambda: dg.transform_sf_into_required_layout(f32((M, 3)), M, K, (1, 128, 128), is_sfa=True),
     ValueError, r"\bsf has shape"),
    ("sf-recipe-len", lambda: dg.transform_sf_into_required_layout(f32((M, 2)), M, K, (1, 128, 128, 1)),
     ValueError, r"recipe"),
    ("sf-granularity", lambda: dg.transform_sf_into_required_layout(f32((M, 4)), M, K, (1, 64)), ValueError,
     r"granularit"),
    ("sf-num-groups", lambda: dg.transform_sf_into_required_layout(f32((2, 2)), N, K, (1, 128, 128), num_groups=0),
     ValueError, r"num_groups"),
    ("sf-int", lambda: dg.transform_sf_into_required_layout(jnp.ones((M, 2), jnp.int32), M, K, (1, 128)), TypeError,
     r"\bsf"),
    # ---- runtime
    ("sms-zero", lambda: dg.set_num_sms(0), ValueError, r"set_num_sms.*\bn\b"),
    ("sms-negative", lambda: dg.set_num_sms(-4), ValueError, r"set_num_sms"),
    ("sms-bool", lambda: dg.set_num_sms(True), ValueError, r"set_num_sms"),
    ("sms-float", lambda: dg.set_num_sms(2.5), ValueError, r"set_num_sms"),
]


@pytest.mark.parametrize("fn,exc,match", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error(fn, exc, match, restore_num_sms, monkeypatch):
    def trap(self, *args, **kwargs):
        raise AssertionError(f"{self.primitive} was bound: the input reached a primitive unchecked")

    monkeypatch.setattr(primitives.Family, "bind", trap)  # every error is raised before any primitive
    with pytest.raises(exc, match=match):
        fn()


@pytest.mark.parametrize("name", ["fp8_gemm_nt", "m_grouped_fp8_gemm_nt_contiguous", "fp8_grouped_gemm_nt",
                                  "m_grouped_fp8_gemm_nt_masked", "fp8_dot", "ragged_dot"])
def test_errors_name_the_function(name):
    """Each message says which public function complained."""
    calls = {
        "fp8_gemm_nt": lambda: gemm_nt(out_dtype=jnp.float16),
        "m_grouped_fp8_gemm_nt_contiguous": lambda: contiguous(ids=jnp.zeros(M, F32)),
        "fp8_grouped_gemm_nt": lambda: ragged(sizes=jnp.zeros(G, F32)),
        "m_grouped_fp8_gemm_nt_masked": lambda: masked(expected_m=1.5),
        "fp8_dot": lambda: dg.fp8_dot(jnp.ones((M, K), jnp.int32), base()["w"]),
        "ragged_dot": lambda: dg.ragged_dot(base()["x"], base()["rhs"], jnp.zeros(G, F32)),
    }
    with pytest.raises(TypeError, match=name):
        calls[name]()


def test_errors_raised_at_trace_time_under_jit():
    """Validation happens when tracing: eval_shape (no execution) raises the same errors."""
    d = base()
    with pytest.raises(ValueError, match=r"b\[1\]"):
        jax.eval_shape(lambda a, b8, s: dg.fp8_gemm_nt(a, (b8, s)), d["a"], d["b"][0], f32((3, 2)))
    with pytest.raises(TypeError, match=r"m_indices"):
        jax.eval_shape(lambda ids: dg.m_grouped_fp8_gemm_nt_contiguous(d["a"], d["bg"], ids), jnp.zeros(M, F32))
    with pytest.raises(TypeError, match=r"out_dtype"):
        jax.jit(lambda a: dg.fp8_gemm_nt(a, d["b"], out_dtype=jnp.float16))(d["a"])


# ---------------------------------------------------------------- accepted inputs

@pytest.mark.parametrize("dtype", [np.int64, np.int16, np.int8, np.uint8, np.uint32, np.int32])
def test_index_dtypes_are_converted(dtype):
    """Other integer dtypes (NumPy arrays or lists) are accepted and give the int32 result."""
    d = base()
    ids = np.asarray([1, 0, 1], dtype)
    sizes = np.asarray([1, 2], dtype)
    masked_m = np.asarray([1, 3], dtype)
    ref_c = contiguous(ids=jnp.asarray([1, 0, 1], jnp.int32), out_dtype=F32)
    np.testing.assert_array_equal(np.asarray(contiguous(ids=ids, out_dtype=F32)), np.asarray(ref_c))
    ref_r = ragged(sizes=jnp.asarray([1, 2], jnp.int32), out_dtype=F32)
    np.testing.assert_array_equal(np.asarray(ragged(sizes=sizes, out_dtype=F32)), np.asarray(ref_r))
    valid = oracle.masked_valid([1, 3], G, M)
    ref_m = masked(masked_m=jnp.asarray([1, 3], jnp.int32), out_dtype=F32)
    np.testing.assert_array_equal(to64(masked(masked_m=masked_m, out_dtype=F32))[valid], to64(ref_m)[valid])
    if np.iinfo(dtype).max >= 128:
        np.testing.assert_array_equal(np.asarray(kgrouped(sizes=np.asarray([128, 128], dtype))),
                                      np.asarray(kgrouped()))
    rd = dg.ragged_dot(d["x"], d["rhs"], sizes, group_offset=np.asarray([0], dtype))
    np.testing.assert_array_equal(np.asarray(rd), np.asarray(dg.ragged_dot(d["x"], d["rhs"], sizes.astype(np.int32))))


def test_index_jax_arrays_of_other_dtypes_are_converted():
    ref = ragged(sizes=jnp.asarray([1, 2], jnp.int32), out_dtype=F32)
    for dtype in (jnp.int8, jnp.uint8, jnp.int16, jnp.uint16, jnp.uint32):
        out = ragged(sizes=jnp.asarray([1, 2], dtype), out_dtype=F32)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))
    # uint32 values above int32's range mean 'huge' (not negative): group 0 takes every row
    out = ragged(sizes=jnp.asarray([2**32 - 1, 1], jnp.uint32), out_dtype=F32)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ragged(sizes=jnp.asarray([M, 0], jnp.int32),
                                                                     out_dtype=F32)))


def test_index_lists_are_accepted():
    np.testing.assert_array_equal(np.asarray(ragged(sizes=[1, 2], out_dtype=F32)),
                                  np.asarray(ragged(sizes=jnp.asarray([1, 2], jnp.int32), out_dtype=F32)))


def test_int64_values_beyond_int32_are_clamped_not_wrapped():
    """A size or id that does not fit in int32 means 'huge' (or 'very negative'), not its low 32 bits:
    2**32 + 1 must not become 1, -2**32 + 2 must not become 2."""
    d = base()
    a64, b64 = oracle.dequant_lhs(*d["a"]), oracle.dequant_rhs(*d["bg"])
    sizes = np.asarray([2**32 + 1, 5], np.int64)  # group 0 takes every row
    out = ragged(sizes=sizes, out_dtype=F32)
    assert_matches(out, oracle.ragged(a64, b64, [M, 0]), oracle.ragged(a64, b64, [M, 0], oracle.gemm_bound), F32)
    sizes = np.asarray([-(2**32) + 2, 2**40], np.int64)  # group 0 empty, group 1 takes every row
    out = ragged(sizes=sizes, out_dtype=F32)
    assert_matches(out, oracle.ragged(a64, b64, [0, M]), oracle.ragged(a64, b64, [0, M], oracle.gemm_bound), F32)
    ids = np.asarray([2**32, 1, -(2**32) + 1], np.int64)  # out of range, 1, out of range
    out = contiguous(ids=ids, out_dtype=F32)
    assert np.all(to64(out)[[0, 2]] == 0) and np.any(to64(out)[1] != 0)
    masked_m = np.asarray([2**32 + 1, -(2**32) + 3], np.int64)  # clamp: M rows, 0 rows
    out = masked(masked_m=masked_m, out_dtype=F32)
    am64, bg64 = oracle.dequant_lhs(*d["am"]), oracle.dequant_rhs(*d["bg"])
    valid = oracle.masked_valid([M, 0], G, M)
    assert_matches(out, oracle.masked(am64, bg64), oracle.masked(am64, bg64, oracle.gemm_bound), F32, rows=valid)


@pytest.mark.parametrize("fn", ["nt", "contiguous", "ragged", "masked", "kgrouped", "fp8_dot", "ragged_dot"])
def test_numpy_arrays_accepted(fn):
    d = base()
    npy = jax.tree.map(np.asarray, d)
    if fn == "nt":
        out, ref = dg.fp8_gemm_nt(npy["a"], npy["b"], c=np.ones((M, N), np.float32)), gemm_nt(c=f32((M, N)))
    elif fn == "contiguous":
        out, ref = dg.m_grouped_fp8_gemm_nt_contiguous(npy["a"], npy["bg"], np.asarray([0, 1, -1])), contiguous(
            ids=jnp.asarray([0, 1, -1], jnp.int32))
    elif fn == "ragged":
        out, ref = dg.fp8_grouped_gemm_nt(npy["a"], npy["bg"], np.asarray([1, 2], np.int32)), ragged()
    elif fn == "masked":
        out = dg.m_grouped_fp8_gemm_nt_masked(npy["am"], npy["bg"], np.asarray([3, 3], np.int32), 3)
        ref = masked(masked_m=jnp.asarray([3, 3], jnp.int32))
    elif fn == "kgrouped":
        out = dg.k_grouped_fp8_gemm_nt_contiguous(npy["ka"], npy["kb"], np.asarray([128, 128], np.int32),
                                                  c=np.zeros((2, M, N), np.float32))
        ref = kgrouped()
    elif fn == "fp8_dot":
        out, ref = dg.fp8_dot(npy["x"], npy["w"]), dg.fp8_dot(d["x"], d["w"])
    else:
        out = dg.ragged_dot(npy["x"], npy["rhs"], np.asarray([1, 2], np.int32))
        ref = dg.ragged_dot(d["x"], d["rhs"], jnp.asarray([1, 2], jnp.int32))
    assert out.dtype == ref.dtype and out.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(out, np.float32), np.asarray(ref, np.float32))


def test_e5m2_and_ue8m0_accepted_everywhere():
    """float8_e5m2 data and float8_e8m0fnu scales pass validation in every GEMM (the math is tested elsewhere)."""
    d = base()
    a = (d["a"][0].astype(E5M2), d["a"][1].astype(UE8M0))
    bg = (d["bg"][0].astype(E5M2), d["bg"][1].astype(UE8M0))
    am = (d["am"][0].astype(E5M2), d["am"][1].astype(UE8M0))
    ka, kb = (d["ka"][0].astype(E5M2), d["ka"][1].astype(UE8M0)), (d["kb"][0], d["kb"][1].astype(UE8M0))
    sizes = jnp.asarray([1, 2], jnp.int32)
    shapes = [
        jax.eval_shape(dg.fp8_gemm_nt, a, (d["b"][0].astype(E5M2), d["b"][1].astype(UE8M0))).shape,
        jax.eval_shape(dg.m_grouped_fp8_gemm_nt_contiguous, a, bg, jnp.zeros(M, jnp.int32)).shape,
        jax.eval_shape(dg.fp8_grouped_gemm_nt, a, bg, sizes).shape,
        jax.eval_shape(lambda a, b, m: dg.m_grouped_fp8_gemm_nt_masked(a, b, m, 2), am, bg, sizes).shape,
        jax.eval_shape(dg.k_grouped_fp8_gemm_nt_contiguous, ka, kb, jnp.asarray([128, 128], jnp.int32)).shape,
        jax.eval_shape(dg.fp8_dot, d["x"], (d["b"][0].astype(E5M2), d["b"][1].astype(UE8M0))).shape,
    ]
    assert shapes == [(M, N), (M, N), (M, N), (G, M, N), (2, M, N), (M, N)]


def test_output_types_from_eval_shape():
    d = base()
    for out_dtype in (BF16, F32, "bfloat16", np.float32):
        s = jax.eval_shape(lambda a, b: dg.fp8_gemm_nt(a, b, out_dtype=out_dtype), d["a"], d["b"])
        assert s.shape == (M, N) and s.dtype == jnp.dtype(out_dtype)
    s = jax.eval_shape(lambda a, b: dg.m_grouped_fp8_gemm_nt_masked(a, b, jnp.ones(G, jnp.int32), 1,
                                                                      out_dtype=F32), d["am"], d["bg"])
    assert s.shape == (G, M, N) and s.dtype == F32
    s = jax.eval_shape(dg.k_grouped_fp8_gemm_nt_contiguous, d["ka"], d["kb"], jnp.ones(5, jnp.int32))
    assert s.shape == (5, M, N) and s.dtype == F32
    assert jax.eval_shape(dg.fp8_dot, jnp.ones((2, 4, K), BF16), d["w"]).dtype == BF16
