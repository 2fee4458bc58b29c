"""The expert-parallel MoE layer on 8 devices gives the single-device layer's result, forward and gradients; with
a capacity it drops exactly the pairs past it; it composes with a user's own shard_map on a 2-D mesh.

The tests need 8 devices. XLA reads the host device count once, when JAX starts, so when this process has fewer,
`test_expert_parallel_on_8_cpu_devices` runs this file again in a subprocess with
XLA_FLAGS=--xla_force_host_platform_device_count=8 and passes only if every test passed there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, PartitionSpec as P

from jax_deepgemm import nn
import nn_common
from conftest import to64
from jax_deepgemm import calc_diff
from nn_common import assert_close_in_direction, kept_pairs, moe_oracle, random_moe, route_oracle

DEVICES = 8
HAVE_DEVICES = len(jax.devices()) >= DEVICES
needs_devices = pytest.mark.skipif(not HAVE_DEVICES, reason=f"needs {DEVICES} devices; "
                                   "test_expert_parallel_on_8_cpu_devices runs these tests in a subprocess with them")

# 32 tokens per device, 2 experts per device. Skewed routing sends most tokens to expert 0, so that device gets
# far more rows than the others and expert 0's FP8 weight gradient spans several 128-token blocks.
T, E, TOP_K = 256, 16, 2
SKEW = 2.5


def mesh_1d(axis_type=AxisType.Auto):
    return jax.make_mesh((DEVICES,), ("ep",), axis_types=(axis_type,), devices=jax.devices()[:DEVICES])


def assert_same(got, want, what):
    """Equal up to float32 rounding (the two layers do the same FP8 math on the same rows, in the same order), but
    for a few elements: XLA may fuse the two programs' bf16 steps differently (seen with jax 0.12 on the CPU), and a
    value rounded once more or less can land in another FP8 step, moving the elements it feeds by about an FP8 step.
    Rows taken in another order or quantized in other 128-row blocks would move whole experts (>= 1/E of all
    elements) at that size, far past both limits below."""
    got64, want64 = to64(got), to64(want)
    scale = np.abs(want64).max()
    assert scale > 0, f"{what}: all zeros"
    off = np.abs(got64 - want64) > 1e-5 * scale
    assert off.mean() <= 1e-3, f"{what}: {off.sum()} of {off.size} elements differ by more than float32 rounding"
    np.testing.assert_allclose(got64, want64, rtol=0, atol=2e-2 * scale, err_msg=what)
    assert calc_diff(got64, want64) < 1e-7, (what, calc_diff(got64, want64))


def value_and_grads(layer, args, probe):
    def loss(*a):
        y = layer(*a)
        return jnp.sum(y.astype(jnp.float32) * probe), y
    (_, y), g = jax.jit(jax.value_and_grad(loss, argnums=range(len(args)), has_aux=True))(*args)
    return y, g


@pytest.fixture(scope="module")
def one_device():
    """The single-device FP8 layer's output and gradients (x, router_w, w_gate_up, w_down) on skewed routing."""
    args = random_moe(10, T, E, skew=SKEW)
    _, ids = route_oracle(*args[:2], TOP_K)
    assert np.sum(ids == 0) > 128, "the skew should give expert 0 more than one 128-row block"
    probe = jax.random.normal(jax.random.key(11), (T, nn_common.D), jnp.float32)
    y, g = value_and_grads(lambda *a: nn.moe(*a, top_k=TOP_K), args, probe)
    assert_close_in_direction(y, moe_oracle(*args, TOP_K), "single-device FP8 layer")
    return args, probe, y, g


@needs_devices
def test_forward_and_grads_equal_one_device(one_device):
    args, probe, y1, g1 = one_device
    y8, g8 = value_and_grads(lambda *a: nn.moe(*a, top_k=TOP_K, mesh=mesh_1d(), axis_name="ep"), args, probe)
    assert_same(y8, y1, "expert-parallel output")
    for name, a, b in zip(("x", "router_w", "w_gate_up", "w_down"), g8, g1):
        assert a.shape == b.shape and a.dtype == b.dtype, name
        assert_same(a, b, f"expert-parallel grad {name}")


@needs_devices
def test_explicit_mesh_and_sharded_weights():
    """On an Explicit mesh axis (jax.make_mesh's default) the layer lays its operands out itself; weights placed
    with shard_experts stay where they are."""
    x, router_w, w_gate_up, w_down = random_moe(12, T, E, dtype=jnp.bfloat16)
    mesh = mesh_1d(AxisType.Explicit)
    w_gate_up8, w_down8 = nn.shard_experts(w_gate_up, mesh, "ep"), nn.shard_experts(w_down, mesh, "ep")
    assert w_gate_up8.sharding.shard_shape(w_gate_up8.shape) == (E // DEVICES, *w_gate_up.shape[1:])
    y8 = jax.jit(lambda *a: nn.moe(*a, top_k=TOP_K, mesh=mesh, axis_name="ep"))(x, router_w, w_gate_up8, w_down8)
    y1 = jax.jit(lambda *a: nn.moe(*a, top_k=TOP_K))(x, router_w, w_gate_up, w_down)
    assert y8.dtype == jnp.bfloat16 and y8.shape == x.shape
    np.testing.assert_allclose(to64(y8), to64(y1), rtol=1e-2, atol=1e-2 * np.abs(to64(y1)).max())
    assert_close_in_direction(y8, moe_oracle(x, router_w, w_gate_up, w_down, TOP_K), "bf16 expert-parallel output")


@needs_devices
@pytest.mark.parametrize("capacity_factor, skew", [(0.5, SKEW), (4.0, SKEW), (2.0, 0.0)])
def test_capacity_drops_exactly_the_pairs_past_it(capacity_factor, skew):
    """fp8=False makes the layer exact, so the oracle with the dropped pairs' weights zeroed must match to float32
    rounding: a pair kept or dropped wrongly changes its token by a whole expert output. (Skewed, factor 4 drops a
    single pair; balanced, factor 2 drops none.)"""
    args = random_moe(13, T, E, skew=skew)
    local = T // DEVICES
    cap = nn.capacity(local, TOP_K, E // DEVICES, DEVICES, capacity_factor)
    assert cap == min(local * TOP_K, int(np.ceil(capacity_factor * local * TOP_K / DEVICES)))
    _, ids = route_oracle(*args[:2], TOP_K)
    keep = kept_pairs(ids, DEVICES, E, cap)
    with jax.default_matmul_precision("highest"):
        y = jax.jit(lambda *a: nn.moe(*a, top_k=TOP_K, fp8=False, mesh=mesh_1d(), axis_name="ep",
                                      capacity_factor=capacity_factor))(*args)
    assert_same(y, moe_oracle(*args, TOP_K, keep=keep), f"capacity {cap}, {keep.size - keep.sum()} pairs dropped")
    if keep.all():
        y_fp8 = jax.jit(lambda *a: nn.moe(*a, top_k=TOP_K, mesh=mesh_1d(), axis_name="ep",
                                          capacity_factor=capacity_factor))(*args)
        assert_same(y_fp8, jax.jit(lambda *a: nn.moe(*a, top_k=TOP_K))(*args), "FP8 layer, nothing dropped")
    else:
        assert keep.any()


@needs_devices
def test_body_inside_a_users_shard_map_on_a_2d_mesh():
    """moe_expert_parallel inside the caller's shard_map: tokens split over both axes of a (2, 4) mesh, experts
    over "ep" only, so each "data" row of the mesh exchanges tokens among its own 4 devices."""
    mesh = jax.make_mesh((2, 4), ("data", "ep"), axis_types=(AxisType.Auto,) * 2, devices=jax.devices()[:DEVICES])
    args = random_moe(14, T, E)
    body = partial(nn.moe_expert_parallel, top_k=TOP_K, axis_name="ep", fp8=False)
    layer = jax.shard_map(body, mesh=mesh, in_specs=(P(("data", "ep")), P(), P("ep"), P("ep")),
                          out_specs=P(("data", "ep")))
    with jax.default_matmul_precision("highest"):
        y = jax.jit(layer)(*args)
    assert_same(y, moe_oracle(*args, TOP_K), "2-D mesh output")


@needs_devices
def test_flax_and_equinox_modules_on_a_mesh_equal_one_device(one_device):
    """FP8MoE with a mesh: its weights are created split over the devices, and a jitted gradient step gives the
    single-device layer's loss and weight gradients."""
    import equinox as eqx
    from flax import nnx

    from jax_deepgemm.nn import equinox as dg_eqx, flax as dg_flax

    (x, router_w, w_gate_up, w_down), probe, y1, g1 = one_device
    mesh = mesh_1d()
    size = (nn_common.D, nn_common.F, E, TOP_K)
    flax_8 = dg_flax.FP8MoE(*size, mesh=mesh, axis_name="ep", rngs=nnx.Rngs(0))
    eqx_8 = dg_eqx.FP8MoE(*size, mesh=mesh, axis_name="ep", key=jax.random.key(0))
    for w in (flax_8.gate_up[...], flax_8.down[...], eqx_8.gate_up, eqx_8.down):
        assert w.sharding.shard_shape(w.shape)[0] == E // DEVICES
    weights = (router_w, nn.shard_experts(w_gate_up, mesh, "ep"), nn.shard_experts(w_down, mesh, "ep"))
    flax_8.router, flax_8.gate_up, flax_8.down = (nnx.Param(w) for w in weights)
    eqx_8 = eqx.tree_at(lambda m: (m.router, m.gate_up, m.down), eqx_8, weights)
    x3 = x.reshape(4, T // 4, -1)  # the modules take any leading dimensions

    def loss(model):
        return jnp.sum(model(x3).reshape(T, -1) * probe)

    flax_loss, flax_grads = nnx.jit(nnx.value_and_grad(loss))(flax_8)
    eqx_loss, eqx_grads = eqx.filter_jit(eqx.filter_value_and_grad(loss))(eqx_8)
    want_loss = jnp.sum(y1 * probe)
    for name, got_loss, got in (("flax", flax_loss, (flax_grads["router"], flax_grads["gate_up"],
                                                     flax_grads["down"])),
                                ("equinox", eqx_loss, (eqx_grads.router, eqx_grads.gate_up, eqx_grads.down))):
        assert_same(got_loss, want_loss, f"{name} loss")
        for w, a, b in zip(("router", "gate_up", "down"), got, g1[1:]):
            assert_same(a[...] if name == "flax" else a, b, f"{name} grad {w}")


@needs_devices
def test_runs_eagerly_as_under_jit():
    """Called without a jit, as README's example does (its shard_map then runs eagerly, and so do the Flax and Equinox
    modules): the jitted layer's output and gradients, up to float32 rounding (eagerly, XLA compiles the router's and
    the combine's steps one by one), and so under jax.disable_jit(). Eager shard_map used to refuse the layer's custom
    VJPs (symbolic zeros)."""
    from flax import nnx

    from jax_deepgemm.nn import equinox as dg_eqx, flax as dg_flax

    args = random_moe(18, T, E)
    layer = partial(nn.moe, top_k=TOP_K, mesh=mesh_1d(), axis_name="ep")
    want_out = jax.jit(layer)(*args)
    assert_same(layer(*args), want_out, "eager output")
    grad = jax.grad(lambda *a: jnp.sum(layer(*a) ** 2), argnums=(0, 2))
    want_grads = jax.jit(grad)(*args)
    for name, got, want in zip(("x", "w_gate_up"), grad(*args), want_grads):
        assert_same(got, want, f"eager grad {name}")
    with jax.disable_jit():  # every jit off, the one the layer's ops call their custom VJPs through as well
        assert_same(layer(*args), want_out, "output without jit")
        for name, got, want in zip(("x", "w_gate_up"), grad(*args), want_grads):
            assert_same(got, want, f"grad without jit {name}")
    size = (nn_common.D, nn_common.F, E, TOP_K)
    for module in (dg_flax.FP8MoE(*size, mesh=mesh_1d(), axis_name="ep", rngs=nnx.Rngs(0)),
                   dg_eqx.FP8MoE(*size, mesh=mesh_1d(), axis_name="ep", key=jax.random.key(0))):
        jitted = nnx.jit(lambda m, x: m(x)) if isinstance(module, nnx.Module) else jax.jit(lambda m, x: m(x))
        assert_same(module(args[0]), jitted(module, args[0]), f"eager {type(module).__module__}")


@needs_devices
def test_rejects_what_cannot_be_split():
    mesh = mesh_1d()
    x, router_w, w_gate_up, w_down = random_moe(16, T, E)
    layer = partial(nn.moe, top_k=TOP_K, mesh=mesh)
    with pytest.raises(ValueError, match=r"moe: router_w \[D, E\] has E = 12 experts, not a multiple of the 8 "
                                         r"devices of mesh axis 'ep'"):
        layer(x, router_w[:, :12], w_gate_up[:12], w_down[:12], axis_name="ep")
    with pytest.raises(ValueError, match=r"moe: x \(250, 256\) has 250 tokens .* not a multiple of the 8 devices"):
        layer(x[:250], router_w, w_gate_up, w_down, axis_name="ep")
    with pytest.raises(ValueError, match=r"moe: axis_name 'expert' is not an axis of the mesh \(axes \('ep',\)\)"):
        layer(x, router_w, w_gate_up, w_down, axis_name="expert")
    for bad, error in ((0.0, ValueError), (-1.0, ValueError), (float("inf"), ValueError), ("2", TypeError)):
        with pytest.raises(error, match=r"moe: capacity_factor must be"):
            layer(x, router_w, w_gate_up, w_down, axis_name="ep", capacity_factor=bad)


@needs_devices
def test_no_tokens_give_an_empty_result():
    x, router_w, w_gate_up, w_down = random_moe(17, T, E)
    y = nn.moe(x[:0], router_w, w_gate_up, w_down, top_k=TOP_K, mesh=mesh_1d(), axis_name="ep")
    assert y.shape == (0, x.shape[1]) and y.dtype == x.dtype


@needs_devices
def test_body_rejects_experts_not_split_over_the_axis():
    """Inside a caller's shard_map the body sees per-device weights: all E experts on every device is an error."""
    mesh = mesh_1d()
    body = partial(nn.moe_expert_parallel, top_k=TOP_K, axis_name="ep")
    layer = jax.shard_map(body, mesh=mesh, in_specs=(P("ep"), P(), P(), P()), out_specs=P("ep"))
    with pytest.raises(ValueError, match=r"moe_expert_parallel: w_gate_up has shape \(16, 256, 256\); expected "
                                         r"\[2, 256, 2F\] \(\[E / devices, D, 2F\]"):
        jax.jit(layer).trace(*random_moe(17, T, E))


@pytest.mark.skipif(HAVE_DEVICES, reason=f"this process has {DEVICES} devices: the tests above ran in it")
def test_expert_parallel_on_8_cpu_devices(tmp_path):
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={DEVICES}".strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    # -I: as ./dev.sh runs pytest, so the installed package is tested, never a source tree on sys.path.
    command = [sys.executable, "-I", "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider",
               "-k", "not on_8_cpu_devices"]
    r = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    report = f"{' '.join(command)}\n{r.stdout[-8000:]}\n{r.stderr[-3000:]}"
    assert r.returncode == 0, report
    assert re.search(r"\d+ passed", summary) and not re.search(r"skipped|failed|error", summary), report


@needs_devices
def test_demo_runs_the_expert_parallel_layer():
    """The demo's expert-parallel part (what `python -m jax_deepgemm demo` adds with several devices), on a small
    shape: it splits over all 8 devices, agrees with the single-device FP8 layer, and its report reads right."""
    from jax_deepgemm import demo

    shape = demo.MoEShape(tokens=64, hidden=256, intermediate=128, experts=8, top_k=2)
    params = demo.init_params(shape, jax.random.key(18))
    x = jax.random.normal(jax.random.key(19), (shape.tokens, shape.hidden), jnp.float32).astype(jnp.bfloat16)

    def loss(params, x):
        y = demo.moe_layer(params, x, top_k=shape.top_k, fp8=True)
        return jnp.mean(jnp.square(y.astype(jnp.float32))), y

    one_device = (jax.jit(lambda p, x: loss(p, x)[1])(params, x),
                  jax.jit(jax.grad(lambda p, x: loss(p, x)[0], argnums=(0, 1)))(params, x))
    ep = demo._expert_parallel(shape, params, x, one_device, repeats=1)
    assert ep["devices"] == DEVICES
    assert set(ep["diff"]) == {"output", "grad_x", "grad_gate_up", "grad_down", "grad_out"}
    # Far below the FP8 error (~3e-3): the same FP8 math on the same rows, up to intermediate roundings.
    assert all(0 <= v < 1e-3 for v in ep["diff"].values()), ep["diff"]
    assert ep["forward_ms"] > 0 and ep["forward_backward_ms"] > 0
    lines = demo.expert_parallel_lines(ep)
    assert lines[0].startswith("  expert-parallel FP8 layer over 8 devices")
    assert re.fullmatch(r"    ep-fp8 forward\s+[0-9.]+\s+forward\+backward\s+[0-9.]+", lines[2]), lines
