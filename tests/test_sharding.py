"""Sharded execution on 8 CPU devices (conftest.py asks XLA for them): plain jax.jit with NamedSharding operands
(Shardy) runs each op locally where its layout allows (checked in the compiled HLO: no all-gather, all-to-all or
collective-permute; an all-reduce only when K is split) and gives the unsharded result; shard_map (check_vma True and
False) and pmap of every op, forward and gradients, equal the op applied shard by shard."""

from __future__ import annotations

import os
import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import jax_deepgemm as dg
from jax_deepgemm import differentiable, nn
from conftest import BF16, CPU_DEVICES, F32, cosine, q_lhs, q_lhs_batched, q_rhs, q_rhs_batched, randn, to64

D = CPU_DEVICES
MOVES = ("all-gather", "all-to-all", "collective-permute")
REDUCES = ("all-reduce", "reduce-scatter")


@pytest.fixture(autouse=True)
def _on_cpu():
    """Everything here runs on the CPU devices, the unsharded calls too (on a GPU machine the default device is a GPU,
    whose kernels would be compared with the CPU reference). test_gpu_sharding.py runs sharded calls on GPUs."""
    with jax.default_device(_devices()[0]):
        yield


def _devices():
    devices = jax.devices("cpu")
    assert len(devices) >= D, f"{len(devices)} CPU devices: XLA was started before conftest.py asked for {D}"
    return devices[:D]


def _mesh(shape=(D,), names=("x",)):
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape), devices=_devices())


def _put(tree, specs, mesh):
    """Each leaf of `tree` placed with the PartitionSpec at the same place in `specs` (a prefix: a spec for a pair
    applies to data and scale)."""
    if isinstance(specs, P) or specs is None:
        return jax.tree.map(lambda x: jax.device_put(x, NamedSharding(mesh, specs or P())), tree)
    return type(tree)(_put(t, s, mesh) for t, s in zip(tree, specs))


def _close(got, expected, exact):
    g, e = to64(got), to64(expected)
    assert g.shape == e.shape and got.dtype == expected.dtype
    if exact:  # the same per-shard products as unsharded
        np.testing.assert_array_equal(g, e)
    else:  # K split: float32 partial sums added in another order, then rounded to the output dtype
        # bf16: both sides rounded once from float32 sums, so up to one ulp (2^-7 relative) apart
        tol = 1e-5 * np.abs(e).max() + (2.0**-7 * np.abs(e) if got.dtype == BF16 else 0)
        np.testing.assert_array_less(np.abs(g - e), tol + 1e-30)


# ---------------------------------------------------------------- operands

M, N, K = 32, 1024, 1024  # N and K: one 128 block per device


def dense_args(per_row=False, c=False):
    a = q_lhs(randn(1, (M, K)))
    w = randn(2, (N, K))
    args = (a, q_lhs(w) if per_row else q_rhs(w))
    return args + ((randn(3, (M, N)),) if c else ())


def masked_args():
    g, m, n = D, 16, 256
    a = q_lhs_batched(randn(4, (g, m, K)))
    b = q_rhs_batched(randn(5, (g, n, K)))
    return a, b, jnp.asarray([0, 16, 3, 9, 16, 1, 5, 11], jnp.int32)


def ragged_args():
    a = q_lhs(randn(6, (64, K)))
    b = q_rhs_batched(randn(7, (3, N, K)))
    return a, b, jnp.asarray([10, 0, 41], jnp.int32)  # rows 51.. past the groups: zeros


def contiguous_args(m=D * 128):
    a = q_lhs(randn(8, (m, 128)))
    b = q_rhs_batched(randn(9, (3, 256, 128)))
    ids = np.repeat(np.asarray([0, 2, -1, 1, 1, 0, 2, 2]), 128)[:m]
    return a, b, jnp.asarray(ids, jnp.int32)


def k_grouped_args(c=False):
    a, b = q_lhs(randn(10, (16, 8 * 128))), q_lhs(randn(11, (24, 8 * 128)))
    sizes = jnp.asarray([128, 256, 0, 128, 0, 384, 0, 128], jnp.int32)  # whole 128 blocks, 7 of 8 used
    return (a, b, sizes) + ((randn(12, (D, 16, 24)),) if c else ())


dense = lambda a, b: dg.fp8_gemm_nt(a, b)  # noqa: E731
dense_c = lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=F32)  # noqa: E731
dense_c_over = lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=F32, overwrite_c=True)  # noqa: E731
masked = lambda a, b, mm: dg.m_grouped_fp8_gemm_nt_masked(a, b, mm, 8)  # noqa: E731
ragged = lambda a, b, s: dg.fp8_grouped_gemm_nt(a, b, s)  # noqa: E731
contiguous = lambda a, b, i: dg.m_grouped_fp8_gemm_nt_contiguous(a, b, i)  # noqa: E731
k_grouped = lambda a, b, s, *c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c[0] if c else None)  # noqa: E731
k_grouped_over = lambda a, b, s, c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c, overwrite_c=True)  # noqa: E731


# ---------------------------------------------------------------- jit with NamedSharding operands

JIT_CASES = [
    # name, fn, operands (built when the test runs), in specs, allowed collectives, output spec
    ("dense M (data parallel)", dense, dense_args, (P("x"), None), (), P("x")),
    ("dense N (tensor parallel)", dense, dense_args, (None, P("x")), (), P(None, "x")),
    ("dense N per-row scale", dense, partial(dense_args, per_row=True), (None, P("x")), (), P(None, "x")),
    ("dense K", dense, dense_args, (P(None, "x"), P(None, "x")), REDUCES, P()),
    ("dense with C, K", dense_c, partial(dense_args, c=True), (P(None, "x"), P(None, "x"), None), REDUCES, P()),
    # overwrite_c: the per-shard calls write D over their C; split over K, the partial products take no C
    ("dense with C overwritten, M", dense_c_over, partial(dense_args, c=True), (P("x"), None, P("x")), (), P("x")),
    ("dense with C overwritten, K", dense_c_over, partial(dense_args, c=True), (P(None, "x"), P(None, "x"), None),
     REDUCES, P()),
    ("masked experts", masked, masked_args, (P("x"), P("x"), P("x")), (), P("x")),
    ("masked M", masked, masked_args, (P(None, "x"), None, None), (), P(None, "x")),
    ("ragged M", ragged, ragged_args, (P("x"), None, None), (), P("x")),
    ("ragged N", ragged, ragged_args, (None, P(None, "x"), None), (), P(None, "x")),
    ("contiguous M (128-row runs)", contiguous, contiguous_args, (P("x"), None, P("x")), (), P("x")),
    ("k-grouped experts (C)", k_grouped, partial(k_grouped_args, c=True), (None, None, None, P("x")), (), P("x")),
    ("k-grouped experts (C overwritten)", k_grouped_over, partial(k_grouped_args, c=True), (None, None, None, P("x")),
     (), P("x")),
    ("k-grouped M", k_grouped, k_grouped_args, (P("x"), None, None), (), P(None, "x")),
]


@pytest.mark.parametrize("name,fn,args,specs,allowed,out_spec", JIT_CASES, ids=[c[0] for c in JIT_CASES])
def test_jit_with_sharded_operands_runs_locally(name, fn, args, specs, allowed, out_spec):
    mesh, args = _mesh(), args()
    sharded = _put(args, specs, mesh)
    f = jax.jit(fn)
    hlo = f.lower(*sharded).compile().as_text()
    assert not [c for c in MOVES if c in hlo], f"{name}: data moves between devices"
    for c in REDUCES:
        assert (c in hlo) <= (c in allowed), f"{name}: unexpected {c}"
    if allowed:
        assert any(c in hlo for c in allowed), f"{name}: K is split but nothing sums the partial products"
    out = f(*sharded)
    assert out.sharding.is_equivalent_to(NamedSharding(mesh, out_spec), out.ndim), out.sharding
    _close(out, f(*args), exact=not allowed)


def test_jit_two_dimensional_mesh():
    """M over one mesh axis and N (128-row blocks) over the other, scales following their data."""
    mesh = _mesh((2, 4), ("x", "y"))
    args = dense_args()
    sharded = _put(args, (P("x"), P("y")), mesh)
    f = jax.jit(dense)
    hlo = f.lower(*sharded).compile().as_text()
    assert not [c for c in MOVES + REDUCES if c in hlo]
    out = f(*sharded)
    assert out.sharding.is_equivalent_to(NamedSharding(mesh, P("x", "y")), 2)
    _close(out, f(*args), exact=True)


@pytest.mark.parametrize("fn,args,specs", [
    (contiguous, partial(contiguous_args, m=D * 64), (P("x"), None, P("x"))),  # 64-row shards would cut 128-row runs
    (dense, lambda: (q_lhs(randn(13, (M, 200))), q_rhs(randn(14, (256, 200)))),  # K=200: no whole 128 blocks per shard
     ((P(None, "x"), None), (P(None, "x"), None))),
    (dense, lambda: dense_args()[:1] + (q_rhs(randn(14, (256, K))),), (None, (P("x"), None))),  # 32-row blocks
])
def test_jit_splits_that_would_change_the_op_are_gathered(fn, args, specs):
    """A split that cannot run as the same op on every shard is undone (XLA gathers the operand): slower, exact."""
    mesh, args = _mesh(), args()
    sharded = _put(args, specs, mesh)
    f = jax.jit(fn)
    assert "all-gather" in f.lower(*sharded).compile().as_text()
    _close(f(*sharded), f(*args), exact=True)


@pytest.mark.parametrize("fn,args,specs", [
    (dense, lambda: dense_args()[:1] + (q_rhs(randn(14, (256, K))),), (P("y"), (P("x"), None))),  # N: 2 blocks
    (contiguous, contiguous_args, (P(("x", "y")), (P(None, "x"), None), P(("x", "y")))),  # the same, per expert
    (dense, lambda: (q_lhs(randn(13, (M, 256))), q_rhs(randn(14, (N, 256)))),  # K: 2 blocks
     ((P(None, "x"), None), (P(None, "x"), None))),
])
def test_jit_split_along_an_axis_that_does_not_divide_the_blocks(fn, args, specs):
    """On a 4 x 2 mesh, two 128 blocks of N or K split 4 ways (the other axis would divide them): where Shardy splits
    the scales' blocks along part of the axis (a sub-axis, which no PartitionSpec holds: the contiguous case, which
    failed to compile), the call takes them as unsplit and XLA gathers them; every case exact."""
    mesh = _mesh((4, 2), ("x", "y"))
    args = args()
    f = jax.jit(fn)
    _close(f(*_put(args, specs, mesh)), f(*args), exact=True)


def test_jit_grad_of_fp8_dot_data_parallel():
    """A data-parallel training step: tokens sharded, weights replicated. The weight gradient contracts over the
    tokens, so exactly one reduction (an all-reduce) appears; nothing is gathered."""
    mesh = _mesh()
    x, w = randn(15, (D * 128, 256)), randn(16, (256, 384))
    grad = jax.jit(jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w) ** 2), argnums=(0, 1)))
    sharded = _put((x, w), (P("x"), None), mesh)
    hlo = grad.lower(*sharded).compile().as_text()
    assert not [c for c in MOVES if c in hlo]
    gx, gw = grad(*sharded)
    ex, ew = grad(x, w)
    assert gx.sharding.is_equivalent_to(NamedSharding(mesh, P("x")), 2)
    _close(gx, ex, exact=True)
    _close(gw, ew, exact=False)


def test_jit_grad_of_fp8_dot_with_fewer_tokens_than_a_k_block_per_device():
    """Tokens split 8 ways, 32 per device: the weight gradient's K (the tokens) is 2 blocks of 128, which no axis
    splits whole. Shardy would carry the split into the K-block dimension of the scales as part of an axis, which
    the partitioner cannot take in; those dimensions are gathered instead, and the gradients equal one device's."""
    mesh = _mesh()
    x, w = randn(17, (32 * D, 512)), randn(18, (512, 256))
    grad = jax.jit(jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w) ** 2), argnums=(0, 1)))
    gx, gw = grad(*_put((x, w), (P("x"), None), mesh))
    ex, ew = grad(x, w)
    _close(gx, ex, exact=True)
    _close(gw, ew, exact=True)


def test_jit_grad_of_fp8_dot_with_tokens_split_along_an_axis_that_does_not_divide_their_blocks():
    """A 2 x 4 mesh, 256 tokens split 4 ways (64 per device) and the weights' N 2 ways: the weight gradient's K is 2
    blocks, which the 2-way axis would split whole but the 4-way one splits along part of it (a sub-axis; this failed
    to compile). The gradients equal one device's, up to the order of the input gradient's K-split sums."""
    mesh = _mesh((2, 4), ("x", "y"))
    x, w = randn(19, (256, 1024)), randn(20, (1024, 256))
    grad = jax.jit(jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w) ** 2), argnums=(0, 1)))
    gx, gw = grad(*_put((x, w), (P("y"), P(None, "x")), mesh))
    ex, ew = grad(x, w)
    _close(gx, ex, exact=False)
    _close(gw, ew, exact=True)


EXPLICIT_CASES = [c for c in JIT_CASES if c[0] in ("dense N (tensor parallel)", "dense K", "masked experts")]


@pytest.mark.parametrize("name,fn,args,specs,allowed,out_spec", EXPLICIT_CASES, ids=[c[0] for c in EXPLICIT_CASES])
def test_explicit_sharding_types(name, fn, args, specs, allowed, out_spec):
    """Under jax.set_mesh with Explicit axes (jax.make_mesh's default) the result's type carries the sharding the
    partitioned call gives it, and the program is the same as with Auto axes."""
    args = args()
    mesh = jax.make_mesh((D,), ("x",), axis_types=(AxisType.Explicit,), devices=_devices())
    sharded = _put(args, specs, mesh)
    with jax.set_mesh(mesh):
        f = jax.jit(fn)
        hlo = f.lower(*sharded).compile().as_text()
        out = f(*sharded)
    assert not [c for c in MOVES if c in hlo]
    assert jax.typeof(out).sharding.spec == out_spec + (None,) * (out.ndim - len(out_spec))
    _close(out, jax.jit(fn)(*args), exact=not allowed)


def test_explicit_sharding_types_grad_of_fp8_dot():
    mesh = jax.make_mesh((D,), ("x",), axis_types=(AxisType.Explicit,), devices=_devices())
    x, w = randn(25, (D * 128, 256)), randn(26, (256, 384))
    grad = jax.jit(jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w) ** 2), argnums=(0, 1)))
    with jax.set_mesh(mesh):
        gx, gw = grad(*_put((x, w), (P("x"), None), mesh))
    assert jax.typeof(gx).sharding.spec == P("x", None) and jax.typeof(gw).sharding.spec == P(None, None)
    ex, ew = grad(x, w)
    _close(gx, ex, exact=True)
    _close(gw, ew, exact=False)


def _explicit_mesh():
    return jax.make_mesh((D,), ("x",), axis_types=(AxisType.Explicit,), devices=_devices())


_X, _W, _RHS = (D * 16, 256), (256, D * 16), (D, 256, D * 8)
_SIZES = np.resize([5, 0, 30, 3, 7, 0, 9, 60], D)  # (one group per device where the groups are split)
EXPLICIT_DIFFERENTIABLE_CASES = [
    # name, fn(x, w), operand specs, result spec, exact (no K split: the same per-shard products)
    ("fp8_dot x over M", dg.fp8_dot, (P("x"), P()), P("x", None), True),
    ("fp8_dot w over N", dg.fp8_dot, (P(), P(None, "x")), P(None, "x"), True),
    ("fp8_dot both", dg.fp8_dot, (P("x"), P(None, "x")), P("x", None), True),
    ("fp8_dot over K", dg.fp8_dot, (P(None, "x"), P("x")), P(None, None), False),
    ("ragged_dot lhs over M", lambda l, r: dg.ragged_dot(l, r, jnp.asarray(_SIZES, jnp.int32)), (P("x"), P()),
     P("x", None), True),
    ("ragged_dot rhs over N", lambda l, r: dg.ragged_dot(l, r, jnp.asarray(_SIZES, jnp.int32)),
     (P(), P(None, None, "x")), P(None, "x"), True),
    ("ragged_dot rhs over groups", lambda l, r: dg.ragged_dot(l, r, jnp.asarray(_SIZES, jnp.int32)),
     (P(), P("x")), P(None, None), True),
]


@pytest.mark.parametrize("name,fn,specs,out_spec,exact", EXPLICIT_DIFFERENTIABLE_CASES,
                         ids=[c[0] for c in EXPLICIT_DIFFERENTIABLE_CASES])
def test_explicit_sharding_types_of_the_differentiable_ops(name, fn, specs, out_spec, exact):
    """Under jax.set_mesh with Explicit axes, fp8_dot and ragged_dot (custom VJPs around several calls) type their
    result from the operands', and their gradients like the operands, forward and backward as without a mesh (their
    custom VJPs want each cotangent typed as its operand: they run with the axes made Auto)."""
    x, w = randn(27, _X), randn(28, _RHS if "ragged" in name else _W)
    grad = jax.grad(lambda x, w: jnp.sum(fn(x, w).astype(F32) ** 2), argnums=(0, 1))
    mesh = _explicit_mesh()
    with jax.set_mesh(mesh):
        operands = _put((x, w), specs, mesh)
        out, (gx, gw) = jax.jit(fn)(*operands), jax.jit(grad)(*operands)
        eager = fn(*operands)
    assert jax.typeof(out).sharding.spec == out_spec and jax.typeof(eager).sharding.spec == out_spec
    for g, operand in ((gx, operands[0]), (gw, operands[1])):
        assert jax.typeof(g).sharding.spec == jax.typeof(operand).sharding.spec
    want_out, (want_gx, want_gw) = jax.jit(fn)(x, w), jax.jit(grad)(x, w)
    _close(out, want_out, exact)
    _close(eager, want_out, exact)
    _close(gx, want_gx, exact=False)  # (the cotangent's K split or psum: float32 sums in another order)
    _close(gw, want_gw, exact=False)


def test_locations_name_the_callers_lines_not_the_packages():
    """The package's frames stay out of the Python stacks JAX writes into a program's locations, as JAX's own do: the
    ops' equations point at the caller's line. With them in, XLA's call inliner looped forever on the gradient of
    ragged_dot below, compiled after its forward, at one stack depth (NOTES 166,
    benchmarks/experiments/xla_stack_frame_hang.py); which depth moves with any code change, so this checks the
    frames instead."""
    fn = next(case[1] for case in EXPLICIT_DIFFERENTIABLE_CASES if case[0] == "ragged_dot lhs over M")
    grad = jax.grad(lambda x, w: jnp.sum(fn(x, w) ** 2), argnums=(0, 1))
    mesh = _explicit_mesh()
    with jax.set_mesh(mesh):
        operands = _put((randn(27, _X), randn(28, _RHS)), (P("x"), P()), mesh)
        jax.jit(fn)(*operands)
        text = jax.jit(grad).trace(*operands).lower().as_text(debug_info=True)
        package = os.path.dirname(os.path.abspath(dg.__file__))
        assert os.path.abspath(__file__) in text  # the caller's frames are there
        assert package not in text, [line for line in text.splitlines() if package in line][:3]
        jax.jit(grad)(*operands)  # (compiles: the case that looped)


def test_explicit_sharding_types_of_the_layers():
    """The MoE layer, expert_ffn and fp8_linear under Explicit axes: tokens, experts or columns split, result and
    gradients typed like their operands, values as without a mesh (up to float32 rounding: XLA orders the
    reference's sums as the layout suits it)."""
    from jax_deepgemm import nn

    x = randn(29, (D * 4, 256))
    router_w, w_gate_up, w_down = nn.init_moe_weights(jax.random.key(30), 256, 64, D)
    w, b = randn(31, (256, D * 16)), randn(32, (D * 16,))
    moe = partial(nn.moe, top_k=2)
    # expert_ffn with its dispatch and combine, over the tokens in reverse order: D groups of 4 rows, weights 1/2
    sizes, order = jnp.full((D,), 4, jnp.int32), jnp.arange(D * 4, dtype=jnp.int32)[::-1]
    ffn = partial(nn.expert_ffn, group_sizes=sizes, gather=(order, 1), combine=jnp.full((D * 4, 1), 0.5))
    moe_grad = jax.grad(lambda *a: jnp.sum(moe(*a) ** 2), argnums=(0, 2, 3))
    linear_grad = jax.grad(lambda *a: jnp.sum(nn.fp8_linear(*a) ** 2), argnums=(0, 1, 2))
    mesh = _explicit_mesh()
    with jax.set_mesh(mesh):
        moe_args = _put((x, router_w, w_gate_up, w_down), (P("x"), P(), P("x"), P("x")), mesh)
        linear_args = _put((x, w, b), (P("x"), P(None, "x"), P("x")), mesh)
        results = [(jax.jit(moe)(*moe_args), P("x", None)), (moe(*moe_args), P("x", None)),
                   (jax.jit(nn.fp8_linear)(*linear_args), P("x", None)),
                   (jax.jit(ffn)(*[moe_args[i] for i in (0, 2, 3)]), P("x", None))]
        grads = [(jax.jit(moe_grad)(*moe_args), [moe_args[i] for i in (0, 2, 3)]),
                 (jax.jit(linear_grad)(*linear_args), linear_args)]
    wants = (moe(x, router_w, w_gate_up, w_down),) * 2 + (nn.fp8_linear(x, w, b), ffn(x, w_gate_up, w_down))
    for (out, spec), want in zip(results, wants, strict=True):
        assert jax.typeof(out).sharding.spec == spec
        _close(out, want, exact=False)
    for (got, operands), want in zip(grads, (moe_grad(x, router_w, w_gate_up, w_down), linear_grad(x, w, b))):
        for g, operand, e in zip(got, operands, want):
            assert jax.typeof(g).sharding.spec == jax.typeof(operand).sharding.spec
            np.testing.assert_allclose(to64(g), to64(e), rtol=1e-4, atol=1e-4 * np.abs(to64(e)).max())


def test_shard_map_over_some_axes_leaves_the_others_explicit():
    """A shard_map over one axis of a 2-D mesh whose other axis is Explicit: inside, the calls make only that other
    axis Auto (the manual one cannot be), so the GEMMs and fp8_dot run on weights split over it, jitted or eagerly. A
    gradient taken inside the body comes typed like the weight (gradients taken outside: the next test)."""
    mesh = jax.make_mesh((2, D // 2), ("dp", "tp"), axis_types=(AxisType.Explicit,) * 2, devices=_devices())
    x, w = randn(33, (D * 8, 256)), randn(34, (256, D * 16))
    (a_data, a_scale), (b_data, b_scale) = q_lhs(x), q_rhs(w.T)

    def body(x, w, a_data, a_scale, b_data, b_scale):
        return dg.fp8_dot(x, w), dg.fp8_gemm_nt((a_data, a_scale), (b_data, b_scale))

    local = jax.shard_map(body, in_specs=(P("dp"), P(), P("dp"), P("dp"), P(), P()), out_specs=(P("dp"), P("dp")),
                          axis_names={"dp"})
    with jax.set_mesh(mesh):
        operands = _put((x, w, a_data, a_scale, b_data, b_scale), (P("dp"), P(None, "tp"), P("dp"), P("dp"),
                                                                   P("tp"), P()), mesh)
        dot, gemm = jax.jit(local)(*operands)
        eager = local(*operands)  # (eager shard_map traces each op's Auto region whole: op by op it is refused)
    for got, want in zip(eager, (dot, gemm)):
        assert jax.typeof(got).sharding.spec == jax.typeof(want).sharding.spec
        np.testing.assert_array_equal(got, want)
    assert jax.typeof(dot).sharding.spec == P("dp", "tp")
    _close(dot, jax.jit(dg.fp8_dot)(x, w), exact=False)  # (float32 out: XLA may order the reference's sums otherwise)
    _close(gemm, jax.jit(dg.fp8_gemm_nt)((a_data, a_scale), (b_data, b_scale)), exact=True)

    def weight_grad(x, w):
        return jax.grad(lambda w: jnp.sum(dg.fp8_dot(x, w)))(w)  # (w invariant over dp: its gradient is the sum)

    with jax.set_mesh(mesh):
        grad_w = jax.jit(jax.shard_map(weight_grad, in_specs=(P("dp"), P()), out_specs=P(), axis_names={"dp"}))(
            *operands[:2])
    assert jax.typeof(grad_w).sharding.spec == P(None, "tp")
    per_shard = [jax.jit(jax.grad(lambda w, x=x: jnp.sum(dg.fp8_dot(x, w))))(w) for x in jnp.split(x, 2)]
    _close(grad_w, per_shard[0] + per_shard[1], exact=False)


def _op_inside_a_partial_shard_map(name):
    """(op, operands, their specs inside the body (over dp), their outer specs (dp and the Explicit tp))."""
    t, d, e, f = D * 8, 256, 4, 128
    x, router = randn(40, (t, d)), 0.1 * randn(41, (d, e))
    w_gate_up, w_down = 0.05 * randn(42, (e, d, 2 * f)), 0.05 * randn(43, (e, f, d))
    sizes = jnp.asarray([9, 0, 13, 7], jnp.int32)
    return {
        "fp8_dot": (dg.fp8_dot, (x, randn(44, (d, 256))), (P("dp"), P()), (P("dp"), P(None, "tp"))),
        "ragged_dot": (lambda x, w: dg.ragged_dot(x, w, sizes), (x, w_gate_up), (P("dp"), P()),
                       (P("dp"), P(None, None, "tp"))),
        "moe": (lambda x, r, wgu, wd: nn.moe(x, r, wgu, wd, top_k=2), (x, router, w_gate_up, w_down),
                (P("dp"), P(), P(), P()), (P("dp"), P(), P(None, None, "tp"), P(None, "tp"))),
    }[name]


@pytest.mark.parametrize("mode", ["jit", "eager", "disable_jit"])
@pytest.mark.parametrize("name", ["fp8_dot", "ragged_dot", "moe"])
def test_gradients_taken_outside_a_shard_map_over_some_axes(name, mode):
    """The gradient of a loss through a shard_map over dp of a (dp, tp) mesh, tp Explicit, taken outside it: each
    operand's gradient is typed like the operand and equals the gradient taken inside the body (check_vma sums the
    replicated weights' over dp), bit for bit; jitted, eagerly and under jax.disable_jit(). (The op's backward
    re-runs its forward inside the Auto region: residuals made there would reach JAX typed on the outer mesh, which
    it refuses. On the CPU the compiled program holds as many products as the one taken inside.)"""
    op, operands, inner, outer = _op_inside_a_partial_shard_map(name)
    mesh = jax.make_mesh((2, D // 2), ("dp", "tp"), axis_types=(AxisType.Explicit,) * 2, devices=_devices())
    argnums = tuple(range(len(operands)))

    def loss(*args):
        return jnp.sum(jax.shard_map(op, in_specs=inner, out_specs=P("dp"), axis_names={"dp"})(*args) ** 2)

    def inside(*args):
        return jax.grad(lambda *a: jnp.sum(op(*a) ** 2), argnums=argnums)(*args)

    with jax.set_mesh(mesh):
        placed = _put(operands, outer, mesh)
        inside_program = jax.shard_map(inside, in_specs=inner, out_specs=inner, axis_names={"dp"})
        want = jax.jit(inside_program)(*placed)
        outside = jax.grad(loss, argnums=argnums)
        if mode == "jit":
            got = jax.jit(outside)(*placed)
            # XLA drops the backward's dead forward product and merges what it re-runs with the forward's
            programs = [jax.jit(f).lower(*placed).compile().as_text() for f in (outside, inside_program)]
            assert len(re.findall(r" dot\(", programs[0])) == len(re.findall(r" dot\(", programs[1])) > 0
        elif mode == "eager":
            got = outside(*placed)
        else:
            with jax.disable_jit():
                got = outside(*placed)
    for g, w, operand in zip(got, want, placed):
        assert jax.typeof(g).sharding.spec == jax.typeof(operand).sharding.spec
        np.testing.assert_array_equal(g, w)
        assert np.abs(to64(g)).max() > 0


def test_unhashable_python_arguments_inside_a_partial_shard_map():
    """An op's Python arguments key the jit of its Auto region there; one that cannot (ragged_dot's precision,
    accepted and unused, given as a set) runs the region unjitted inside the caller's jit, with the same result."""
    mesh = jax.make_mesh((2, D // 2), ("dp", "tp"), axis_types=(AxisType.Explicit,) * 2, devices=_devices())
    x, rhs, sizes = randn(45, (D * 8, 256)), randn(46, (3, 256, 128)), jnp.asarray([7, 0, 12], jnp.int32)

    def local(precision):
        return jax.jit(jax.shard_map(lambda x, rhs: dg.ragged_dot(x, rhs, sizes, precision=precision),
                                     in_specs=(P("dp"), P()), out_specs=P("dp"), axis_names={"dp"}))

    with jax.set_mesh(mesh):
        operands = _put((x, rhs), (P("dp"), P(None, None, "tp")), mesh)
        np.testing.assert_array_equal(local({"highest"})(*operands), local(None)(*operands))


# ---------------------------------------------------------------- shard_map and pmap: the op shard by shard

def _split(x, spec, i):
    """Device i's block of x under a 1-D mesh spec (at most one sharded dim)."""
    for dim, name in enumerate(tuple(spec or ())):
        if name is not None:
            size = x.shape[dim] // D
            return jax.lax.slice_in_dim(x, i * size, (i + 1) * size, axis=dim)
    return x


def _leaves_with_specs(tree, specs):
    if isinstance(specs, P) or specs is None:
        return [(leaf, specs) for leaf in jax.tree.leaves(tree)]
    return [pair for t, s in zip(tree, specs) for pair in _leaves_with_specs(t, s)]


def shard_by_shard(fn, args, specs):
    """fn applied to each device's block, the blocks of the outputs concatenated along their sharded dim."""
    flat = _leaves_with_specs(args, specs)
    treedef = jax.tree.structure(args)
    outs = [fn(*jax.tree.unflatten(treedef, [_split(x, s, i) for x, s in flat])) for i in range(D)]
    return outs


def _small_dense():
    return q_lhs(randn(17, (D * 4, 256))), q_rhs(randn(18, (256, 256)))


def _tn():
    """fp8_gemm_tn operands split over N in 128-row blocks: A stored [K, M], B stored [K, N]."""
    a, b = q_lhs(randn(17, (8, 256))), q_rhs(randn(18, (D * 128, 256)))
    return (a[0].T, a[1]), (b[0].T, b[1])


def _small_masked():
    a = q_lhs_batched(randn(4, (D, 8, 256)))
    b = q_rhs_batched(randn(5, (D, 130, 256)))
    return a, b, jnp.asarray([0, 8, 3, 9, -1, 1, 5, 7], jnp.int32)


def _small_ragged():
    return q_lhs(randn(6, (D * 8, 256))), q_rhs_batched(randn(7, (3, 130, 256))), jnp.asarray([3, 0, 4], jnp.int32)


def _small_k_grouped():
    a, b = q_lhs(randn(10, (D * 2, 3 * 128))), q_lhs(randn(11, (24, 3 * 128)))
    return a, b, jnp.asarray([128, 0, 256], jnp.int32)


SHARD_MAP_CASES = [
    # name, fn, operands (a function: built when the test runs), in specs, out spec (the dim the blocks stack along)
    ("dense M", dense, _small_dense, (P("x"), None), P("x")),
    ("dense TN N", lambda a, b: dg.fp8_gemm_tn(a, b), _tn, (None, (P(None, "x"), P("x"))), P(None, "x")),
    ("masked experts", masked, _small_masked, (P("x"), P("x"), P("x")), P("x")),
    ("ragged rows", ragged, _small_ragged, (P("x"), None, None), P("x")),
    ("contiguous rows", contiguous, contiguous_args, (P("x"), None, P("x")), P("x")),
    ("k-grouped M", k_grouped, _small_k_grouped, (P("x"), None, None), P(None, "x")),
]
SHARD_MAP_IDS = [c[0] for c in SHARD_MAP_CASES]


def _concat(outs, spec):
    dim = next(i for i, name in enumerate(spec) if name is not None)
    return jnp.concatenate(outs, axis=dim)


@pytest.mark.parametrize("check_vma", [True, False])
@pytest.mark.parametrize("name,fn,args,specs,out_spec", SHARD_MAP_CASES, ids=SHARD_MAP_IDS)
def test_shard_map_forward(name, fn, args, specs, out_spec, check_vma):
    args = args()
    in_specs = tuple(P() if s is None else s for s in specs)
    f = jax.jit(jax.shard_map(fn, mesh=_mesh(), in_specs=in_specs, out_specs=out_spec, check_vma=check_vma))
    expected = _concat(shard_by_shard(jax.jit(fn), args, specs), out_spec)
    _close(f(*args), expected, exact=True)


@pytest.mark.parametrize("name,fn,args,specs,out_spec", SHARD_MAP_CASES, ids=SHARD_MAP_IDS)
def test_pmap_forward(name, fn, args, specs, out_spec):
    """pmap over the leading axis of per-device blocks (the shard_map blocks, stacked)."""
    args = args()
    flat = _leaves_with_specs(args, specs)
    treedef = jax.tree.structure(args)
    stacked = jax.tree.unflatten(treedef, [jnp.stack([_split(x, s, i) for i in range(D)]) for x, s in flat])
    out = jax.pmap(fn, devices=_devices())(*stacked)
    expected = jnp.stack(shard_by_shard(jax.jit(fn), args, specs))
    _close(out, expected, exact=True)


def _float_grads(fn, treedef, wrt):
    """leaves -> the gradient of sum(fn(...)**2) with respect to the leaves at `wrt` (the float32 operands: scales
    and C; the raw GEMMs are differentiable in those through the reference's JVP)."""
    def grads(*leaves):
        def loss(*diff):
            values = list(leaves)
            for i, d in zip(wrt, diff):
                values[i] = d
            return jnp.sum(fn(*jax.tree.unflatten(treedef, values)).astype(F32) ** 2)

        return jax.grad(loss, argnums=tuple(range(len(wrt))))(*(leaves[i] for i in wrt))

    return grads


@pytest.mark.parametrize("name,fn,args,specs,out_spec", SHARD_MAP_CASES, ids=SHARD_MAP_IDS)
def test_shard_map_grad_of_every_op(name, fn, args, specs, out_spec):
    """Gradients inside shard_map (check_vma=True): a replicated operand's gradient is the sum of the shards'
    gradients (the psum comes from the operands' varying axes), a sharded operand's the concatenation of its blocks.
    (check_vma=False, where the caller sums, is tested with fp8_dot and ragged_dot below.)"""
    args = args()
    flat = _leaves_with_specs(args, specs)
    wrt = [i for i, (x, _) in enumerate(flat) if x.dtype == F32]
    wrt_specs = tuple(flat[i][1] or P() for i in wrt)
    grads = _float_grads(fn, jax.tree.structure(args), wrt)
    f = jax.jit(jax.shard_map(grads, mesh=_mesh(), in_specs=tuple(s or P() for _, s in flat), out_specs=wrt_specs))
    got = f(*(x for x, _ in flat))
    one = jax.jit(grads)
    blocks = [one(*(_split(x, s, d) for x, s in flat)) for d in range(D)]
    for j, s in enumerate(wrt_specs):
        parts = [b[j] for b in blocks]
        expected = sum(parts[1:], parts[0]) if s == P() else _concat(parts, s)
        _close(got[j], expected, exact=s != P())


def _dot_grads(sizes):
    """Gradients of fp8_dot and ragged_dot (both on x) with respect to both their operands."""
    def grads(x, w, rhs):
        gx, gw = jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w) ** 2), argnums=(0, 1))(x, w)
        gl, gr = jax.grad(lambda l, r: jnp.sum(dg.ragged_dot(l, r, sizes) ** 2), argnums=(0, 1))(x, rhs)
        return gx, gw, gl, gr

    return grads


@pytest.mark.parametrize("check_vma", [True, False])
def test_shard_map_grads_of_fp8_dot_and_ragged_dot(check_vma):
    mesh = _mesh()
    x, w = randn(19, (D * 16, 256)), randn(20, (256, 130))
    rhs, sizes = randn(21, (3, 256, 24)), jnp.asarray([5, 0, 9], jnp.int32)
    grads = _dot_grads(sizes)

    def local(x, w, rhs):
        gx, gw, gl, gr = grads(x, w, rhs)
        if not check_vma:  # without vma tracking, summing a replicated operand's gradient is the caller's job
            gw, gr = jax.lax.psum(gw, "x"), jax.lax.psum(gr, "x")
        return gx, gw, gl, gr

    f = jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(P("x"), P(), P()), out_specs=(P("x"), P(), P("x"), P()),
                              check_vma=check_vma))
    gx, gw, gl, gr = f(x, w, rhs)
    blocks = [jax.jit(grads)(x[i * 16:(i + 1) * 16], w, rhs) for i in range(D)]
    _close(gx, jnp.concatenate([b[0] for b in blocks]), exact=True)
    _close(gl, jnp.concatenate([b[2] for b in blocks]), exact=True)
    _close(gw, sum(b[1] for b in blocks[1:]) + blocks[0][1], exact=False)
    _close(gr, sum(b[3] for b in blocks[1:]) + blocks[0][3], exact=False)
    # the shards' losses add up to the whole batch's: its exact weight gradient
    assert cosine(gw, 2 * to64(x).T @ (to64(x) @ to64(w))) > 0.995


@pytest.mark.parametrize("check_vma", [True, False])
def test_differentiable_ops_run_eagerly_inside_shard_map(check_vma):
    """shard_map without a jit around it runs its body eagerly: the differentiable ops (custom VJPs with symbolic
    zeros, which eager shard_map refuses in JAX 0.11 / 0.12) give the jitted program's arrays, forward and gradients;
    under jax.disable_jit() too, which turns off the jit each op calls its custom VJP through."""
    mesh = _mesh()
    x, w = randn(25, (D * 16, 256)), randn(26, (256, 130))
    rhs, sizes = randn(27, (3, 256, 24)), jnp.asarray([5, 0, 9], jnp.int32)
    w_q = q_rhs(w.T)

    def forward(x, w, rhs):
        order = jnp.arange(x.shape[0] * 2, dtype=jnp.int32)[::-1]
        return (dg.fp8_dot(x, w), dg.fp8_dot(x, w_q), dg.ragged_dot(x, rhs, sizes),
                differentiable.dispatched_ragged_dot(x, order, 2, rhs, sizes))

    def local_grads(x, w, rhs):
        gx, gw, gl, gr = _dot_grads(sizes)(x, w, rhs)
        return gx, jax.lax.psum(gw, "x") if not check_vma else gw, gl, jax.lax.psum(gr, "x") if not check_vma else gr

    for body, out_specs in ((forward, (P("x"), P("x"), P("x"), P("x"))), (local_grads, (P("x"), P(), P("x"), P()))):
        mapped = jax.shard_map(body, mesh=mesh, in_specs=(P("x"), P(), P()), out_specs=out_specs,
                               check_vma=check_vma)
        want = jax.jit(mapped)(x, w, rhs)
        with jax.disable_jit():
            without_jit = mapped(x, w, rhs)
        for got in (mapped(x, w, rhs), without_jit):
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)


def test_pmap_grads_of_fp8_dot_and_ragged_dot():
    x, w = randn(22, (D, 16, 256)), randn(23, (256, 130))
    rhs, sizes = randn(24, (3, 256, 24)), jnp.asarray([5, 0, 9], jnp.int32)
    grads = _dot_grads(sizes)
    got = jax.pmap(grads, in_axes=(0, None, None), devices=_devices())(x, w, rhs)
    expected = [jax.jit(grads)(x[i], w, rhs) for i in range(D)]
    for j in range(4):
        _close(got[j], jnp.stack([e[j] for e in expected]), exact=True)


def test_cuda_lowering_of_a_sharded_program_goes_through_the_partitioner():
    """Lowered for CUDA (no GPU needed), a sharded call is the custom_partitioning call carrying our Shardy rule: the
    per-shard FFI call is made by its partition callback when XLA compiles for the GPUs (test_gpu_sharding.py)."""
    sharded = _put(dense_args(), (P(None, "x"), P(None, "x")), _mesh())
    text = jax.jit(dense).trace(*sharded).lower(lowering_platforms=("cuda",)).as_text()
    assert "@CustomSPMDPartitioning" in text and "sdy.sharding_rule" in text and "reduction={" in text
    assert "jdg_fp8_gemm" not in text  # not lowered in place: that would run the whole GEMM on every GPU
    single = jax.jit(dense).trace(*dense_args()).lower(lowering_platforms=("cuda",)).as_text()
    assert "@CustomSPMDPartitioning" not in single and "jdg_fp8_gemm" in single
