"""The differentiable ops called eagerly inside shard_map (also under jax.disable_jit()) and under Explicit mesh
axes, and the raw GEMM eagerly inside a shard_map over some axes, with the kernels (NOTES 163-166): each against the
same program under jit (a gradient taken outside a shard_map over some axes: against the one taken inside), bit for
bit, on this process's GPUs (one is enough: a mesh of one device still runs shard_map's eager trace and the
Explicit-axes path). Prints one line per case, then the eager and jitted times of fp8_dot (the inlined
jit makes an eager call one compiled program)."""

from __future__ import annotations

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import jax_deepgemm as dg
from jax_deepgemm import nn


def same(name, got, want):
    leaves = list(zip(jax.tree.leaves(got), jax.tree.leaves(want)))
    ok = all(np.array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32)) for a, b in leaves)
    diff = max(float(jnp.max(jnp.abs(a.astype(jnp.float32) - b.astype(jnp.float32)))) for a, b in leaves)
    print(f"{'same' if ok else 'DIFFERENT'}  {name}  max |diff| {diff:.3g}")
    return ok


def main():
    devices = jax.devices()
    print(jax.devices(), "sm_90 GPUs (the kernels run):", [dg.runtime.is_sm90(d) for d in dg.runtime.cuda_devices()])
    n = len(devices)
    key = jax.random.split(jax.random.key(0), 4)
    x = jax.random.normal(key[0], (n * 512, 2048), jnp.bfloat16)
    w = jax.random.normal(key[1], (2048, 1024), jnp.float32)
    rhs = jax.random.normal(key[2], (4, 2048, 512), jnp.float32)
    sizes = jnp.asarray([300, 0, 100, 60], jnp.int32)
    router_w, w_gate_up, w_down = nn.init_moe_weights(key[3], 2048, 512, 8)
    ok = True

    auto = jax.make_mesh((n,), ("x",), axis_types=(AxisType.Auto,), devices=devices)
    mapped = jax.shard_map(lambda x, w, rhs: (dg.fp8_dot(x, w), dg.ragged_dot(x, rhs, sizes)), mesh=auto,
                           in_specs=(P("x"), P(), P()), out_specs=(P("x"), P("x")))
    mapped_jit = jax.jit(mapped)(x, w, rhs)
    ok &= same("eager shard_map: fp8_dot, ragged_dot", mapped(x, w, rhs), mapped_jit)
    grads = jax.grad(lambda x, w: jnp.sum(mapped(x, w, rhs)[0].astype(jnp.float32) ** 2), argnums=(0, 1))
    grads_jit = jax.jit(grads)(x, w)
    ok &= same("grad through eager shard_map", grads(x, w), grads_jit)
    layer = partial(nn.moe, top_k=2, mesh=auto, axis_name="x")
    moe_jit = jax.jit(layer)(x, router_w, w_gate_up, w_down)
    ok &= same("expert-parallel moe, eager", layer(x, router_w, w_gate_up, w_down), moe_jit)
    # jax.disable_jit() turns off every jit, the one each op calls its custom VJP through too (NOTES 164); against
    # the jitted programs' arrays above.
    with jax.disable_jit():
        ok &= same("disable_jit: eager shard_map fp8_dot, ragged_dot", mapped(x, w, rhs), mapped_jit)
        ok &= same("disable_jit: grad through eager shard_map", grads(x, w), grads_jit)
        ok &= same("disable_jit: expert-parallel moe", layer(x, router_w, w_gate_up, w_down), moe_jit)

    explicit = jax.make_mesh((n,), ("x",), axis_types=(AxisType.Explicit,), devices=devices)
    with jax.set_mesh(explicit):
        xs = jax.device_put(x, NamedSharding(explicit, P("x")))
        ws = jax.device_put(w, NamedSharding(explicit, P(None, "x")))
        g = jax.jit(jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w).astype(jnp.float32) ** 2), argnums=(0, 1)))
        gx, gw = g(xs, ws)
        types = [str(jax.typeof(a).sharding.spec) for a in (gx, gw)]
        moe_x = jax.jit(partial(nn.moe, top_k=2))(xs, router_w, w_gate_up, w_down)
    print("explicit axes: gradient types", types)
    ok &= same("explicit axes: fp8_dot gradients", (gx, gw), g(x, w))
    ok &= same("explicit axes: moe", moe_x, jax.jit(partial(nn.moe, top_k=2))(x, router_w, w_gate_up, w_down))

    # A shard_map over dp, tp Explicit: the gradient taken outside it (jitted and eagerly) against the one inside.
    partial_mesh = jax.make_mesh((n, 1), ("dp", "tp"), axis_types=(AxisType.Explicit,) * 2, devices=devices)
    with jax.set_mesh(partial_mesh):
        xs = jax.device_put(x, NamedSharding(partial_mesh, P("dp")))
        ws = jax.device_put(w, NamedSharding(partial_mesh, P(None, "tp")))
        body = partial(jax.shard_map, in_specs=(P("dp"), P()), axis_names={"dp"})
        loss = lambda x, w: jnp.sum(body(dg.fp8_dot, out_specs=P("dp"))(x, w).astype(jnp.float32) ** 2)  # noqa: E731
        outside = jax.grad(loss, argnums=(0, 1))
        inside = jax.jit(body(jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w).astype(jnp.float32) ** 2),
                                       argnums=(0, 1)), out_specs=(P("dp"), P())))
        want = inside(xs, ws)
        # The raw GEMM's Auto region (Family.bind), eagerly: the quantized pair split over dp, B over tp.
        (a, sa), (b, sb) = dg.per_token_cast_to_fp8(x), dg.per_block_cast_to_fp8(w.T)
        gemm_args = [jax.device_put(v, NamedSharding(partial_mesh, spec))
                     for v, spec in ((a, P("dp")), (sa, P("dp")), (b, P("tp")), (sb, P()))]
        gemm = jax.shard_map(lambda a, sa, b, sb: dg.fp8_gemm_nt((a, sa), (b, sb)),
                             in_specs=(P("dp"),) * 2 + (P(),) * 2, out_specs=P("dp"), axis_names={"dp"})
        gemm_jit = jax.jit(gemm)(*gemm_args)
        ok &= same("partial shard_map: fp8_gemm_nt eager", gemm(*gemm_args), gemm_jit)
        ok &= same("partial shard_map: gradient outside, jitted", jax.jit(outside)(xs, ws), want)
        ok &= same("partial shard_map: gradient outside, eager", outside(xs, ws), want)
        with jax.disable_jit():
            ok &= same("partial shard_map: gradient outside, disable_jit", outside(xs, ws), want)
            ok &= same("partial shard_map: fp8_gemm_nt, disable_jit", gemm(*gemm_args), gemm_jit)
        # XLA should drop the backward's dead forward product and merge its quantization with the forward's.
        for name, f in (("outside", jax.jit(outside)), ("inside", inside)):
            hlo = f.lower(xs, ws).compile().as_text()
            calls = {target: hlo.count(f'custom_call_target="{target}"') for target in ("jdg_fp8_gemm",
                                                                                        "jdg_fp8_quantize_t")}
            print(f"partial shard_map: gradient {name}: compiled kernel calls {calls}")

    jitted = jax.jit(dg.fp8_dot)
    for name, f in (("eager", dg.fp8_dot), ("jit", jitted)):
        f(x, w).block_until_ready()
        t0 = time.perf_counter()
        for _ in range(50):
            out = f(x, w)
        out.block_until_ready()
        print(f"fp8_dot {x.shape} x {w.shape} {name}: {(time.perf_counter() - t0) / 50 * 1e6:.1f} us per call")
    print("ALL SAME" if ok else "SOME DIFFERENT")


if __name__ == "__main__":
    main()
