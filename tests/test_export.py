"""Programs holding our GEMMs through `jax.export`: exported for CPU and CUDA at once, serialized, deserialized and
called, against the float64 oracle and the same program called directly. On the CPU the artifact runs its reference
branch; on an sm_90 GPU its kernel calls, also from a fresh process that never lowered one of our ops (the targets
are registered by `import jax_deepgemm`). Last, a program lowered for more SMs than the GPU has (as an artifact
from a larger GPU would be) runs the configuration for the GPU it runs on, and a program taken from JAX's persistent
compilation cache in another process computes what it computed when compiled.
"""

from __future__ import annotations

import os

os.environ["DG_POISON_OUTPUTS"] = "1"  # read when XLA compiles each program below: set before the first compile

import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import BF16, F32, assert_matches, q_lhs, q_lhs_batched, q_rhs, q_rhs_batched, randn, seed_of  # noqa
from jax import export  # noqa: E402

import jax_deepgemm as dg  # noqa: E402
import oracle  # noqa: E402
from jax_deepgemm.nn.moe import moe  # noqa: E402
from jax_deepgemm import runtime  # noqa: E402

_SM90 = [d for d in runtime.cuda_devices() if runtime.is_sm90(d)]
PLATFORMS = ("cpu", "cuda")


def _dense():
    a = q_lhs(randn(seed_of("export", "a"), (200, 384)))
    b = q_rhs(randn(seed_of("export", "b"), (260, 384)))
    c = randn(seed_of("export", "c"), (200, 260))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    return (lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=F32)), (a, b, c), \
        oracle.gemm(a64, b64, oracle.f64(c)), oracle.gemm_bound(a64, b64, oracle.f64(c)), F32


def _contiguous():
    ids = np.asarray([1] * 128 + [-1] * 128 + [0] * 128 + [2] * 128, np.int32)  # -1: padding rows, zeros
    a = q_lhs(randn(seed_of("export", "ca"), (512, 256)))
    b = q_rhs_batched(randn(seed_of("export", "cb"), (3, 192, 256)))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    return dg.m_grouped_fp8_gemm_nt_contiguous, (a, b, jnp.asarray(ids)), oracle.contiguous(a64, b64, ids), \
        oracle.contiguous(a64, b64, ids, fn=oracle.gemm_bound), BF16


def _ragged():
    sizes = np.asarray([70, 0, 150, 36], np.int32)
    a = q_lhs(randn(seed_of("export", "ra"), (256, 256)))
    b = q_rhs_batched(randn(seed_of("export", "rb"), (4, 192, 256)))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    return dg.fp8_grouped_gemm_nt, (a, b, jnp.asarray(sizes)), oracle.ragged(a64, b64, sizes), \
        oracle.ragged(a64, b64, sizes, fn=oracle.gemm_bound), BF16


def _masked():
    masked_m = np.asarray([100, 0, 256], np.int32)
    a = q_lhs_batched(randn(seed_of("export", "ma"), (3, 256, 256)))
    b = q_rhs_batched(randn(seed_of("export", "mb"), (3, 160, 256)))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    rows = oracle.masked_valid(masked_m, 3, 256)
    fn = lambda a, b, m: dg.m_grouped_fp8_gemm_nt_masked(a, b, m, expected_m=128)  # noqa: E731
    return fn, (a, b, jnp.asarray(masked_m)), oracle.masked(a64, b64), oracle.masked(a64, b64, fn=oracle.gemm_bound), \
        BF16, rows


def _k_grouped():
    sizes = np.asarray([256, 128, 384], np.int32)
    a = q_lhs(randn(seed_of("export", "ka"), (136, 768)))
    b = q_lhs(randn(seed_of("export", "kb"), (200, 768)))
    c = randn(seed_of("export", "kc"), (3, 136, 200))
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_lhs(*b)
    fn = lambda a, b, s, c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c)  # noqa: E731
    return fn, (a, b, jnp.asarray(sizes), c), oracle.k_grouped(a64, b64, sizes, oracle.f64(c)), \
        oracle.k_grouped(a64, b64, sizes, oracle.f64(c), fn=oracle.gemm_bound), F32


CASES = {"dense": _dense, "contiguous": _contiguous, "ragged": _ragged, "masked": _masked, "k_grouped": _k_grouped}


def _round_trip(fn, args):
    exported = export.export(jax.jit(fn), platforms=PLATFORMS, disabled_checks=dg.export_disabled_checks())(*args)
    return exported, export.deserialize(exported.serialize())


@pytest.mark.parametrize("case", sorted(CASES))
def test_exported_program_round_trip(case):
    fn, args, expected, bound, out_dtype, *rows = CASES[case]()
    exported, restored = _round_trip(fn, args)
    assert restored.platforms == PLATFORMS
    assert "jdg_fp8_gemm" in exported.mlir_module(), "the CUDA branch should call the kernel"
    out = restored.call(*args)
    assert_matches(out, expected, bound, out_dtype, rows=rows[0] if rows else None)
    direct = jax.jit(fn)(*args)
    mask = rows[0] if rows else np.ones(out.shape[:-1], bool)
    np.testing.assert_array_equal(oracle.f64(out)[mask], oracle.f64(direct)[mask])


def test_export_needs_the_disabled_checks():
    """Without them JAX refuses our custom call (it cannot know the target stays stable); the error names it."""
    fn, args, *_ = _dense()
    with pytest.raises(ValueError, match="jdg_fp8_gemm"):
        export.export(jax.jit(fn), platforms=("cuda",))(*args)


def test_import_registered_the_target_and_a_refused_registration_is_no_error(monkeypatch):
    """`import jax_deepgemm` registered the FFI target. If JAX refused a registration, the import (which registers)
    must not fail: register_ffi_targets says False, and extension_error() why."""
    assert runtime.register_ffi_targets() and runtime._registered
    monkeypatch.setattr(runtime, "_registered", False)
    monkeypatch.setattr(runtime, "_ext_error", None)

    def refuse(*args, **kwargs):
        raise RuntimeError("a registration JAX refuses")
    monkeypatch.setattr(jax.ffi, "register_ffi_type", lambda *args, **kwargs: None)  # (registered already)
    monkeypatch.setattr(jax.ffi, "register_ffi_target", refuse)
    assert runtime.register_ffi_targets() is False
    assert "registering the FFI targets failed: RuntimeError: a registration JAX refuses" in runtime.extension_error()


def test_exported_gradient_of_fp8_dot():
    """fp8_dot's FP8 backward pass (custom VJP: three GEMM calls) exports like any program."""
    x = randn(seed_of("export", "x"), (64, 256)).astype(BF16)
    w = randn(seed_of("export", "w"), (256, 192), spread=False)
    grad = jax.grad(lambda x, w: jnp.sum(dg.fp8_dot(x, w).astype(F32) ** 2), argnums=(0, 1))
    exported, restored = _round_trip(grad, (x, w))
    assert exported.mlir_module().count("jdg_fp8_gemm") >= 3
    for got, want in zip(restored.call(x, w), jax.jit(grad)(x, w)):
        np.testing.assert_array_equal(oracle.f64(got), oracle.f64(want))


@pytest.mark.parametrize("op", ["fp8_dot", "ragged_dot"])
def test_artifact_serialized_with_its_vjp_differentiates(op):
    """An artifact of the forward op alone, serialized with vjp_order=1, is differentiated after deserializing: the
    gradient is the op's own FP8 backward pass (its GEMM calls in the artifact's VJP module), equal to grad of the
    op."""
    x = randn(seed_of("export", "vx"), (64, 256)).astype(BF16)
    if op == "fp8_dot":
        fn, args = dg.fp8_dot, (x, randn(seed_of("export", "vw"), (256, 192), spread=False))
    else:
        fn, args = dg.ragged_dot, (x, randn(seed_of("export", "vws"), (3, 256, 192), spread=False),
                                   jnp.asarray([20, 0, 30], jnp.int32))
    exported = export.export(jax.jit(fn), platforms=PLATFORMS, disabled_checks=dg.export_disabled_checks())(*args)
    restored = export.deserialize(exported.serialize(vjp_order=1))
    assert exported.vjp().mlir_module().count("@jdg_fp8_gemm") >= 2, "dgrad and wgrad GEMMs in the VJP module"
    loss = lambda f: lambda x, w, *rest: jnp.sum(f(x, w, *rest).astype(F32) ** 2)  # noqa: E731
    got = jax.grad(loss(restored.call), argnums=(0, 1))(*args)
    want = jax.jit(jax.grad(loss(fn), argnums=(0, 1)))(*args)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(oracle.f64(g), oracle.f64(w))


def test_exported_shard_map_program():
    """Inside shard_map our calls lower per shard, with no partitioning callback, so the program exports (a jit over
    sharded operands partitions through custom_partitioning, whose callback jax.export cannot serialize)."""
    devices = jax.devices()[:4]
    mesh = jax.sharding.Mesh(np.asarray(devices), ("d",))
    P = jax.sharding.PartitionSpec
    fn, (a, b, c), expected, bound, out_dtype = _dense()
    a = (a[0][:192], a[1][:192])
    c = c[:192]
    expected, bound = expected[:192], bound[:192]
    body = jax.shard_map(fn, mesh=mesh, in_specs=((P("d"), P("d")), (P(), P()), P("d")), out_specs=P("d"))
    args = jax.device_put((a, b, c), ((jax.sharding.NamedSharding(mesh, P("d")),) * 2,
                                      (jax.sharding.NamedSharding(mesh, P()),) * 2,
                                      jax.sharding.NamedSharding(mesh, P("d"))))
    exported, restored = _round_trip(body, args)
    assert restored.nr_devices == len(devices)
    out = restored.call(*args)
    assert_matches(out, expected, bound, out_dtype)


def _with_symbolic(args, dims, symbol="m"):
    """Specs of `args` (a pytree of arrays) with the dimensions `dims` names (leaf index -> axis) as `symbol`."""
    (m,) = export.symbolic_shape(symbol)
    leaves, tree = jax.tree.flatten(args)
    specs = []
    for i, x in enumerate(leaves):
        shape = list(x.shape)
        for axis in dims.get(i, ()):
            shape[axis] = m
        specs.append(jax.ShapeDtypeStruct(tuple(shape), x.dtype))
    return jax.tree.unflatten(tree, specs)


def _grad_of(fn):
    return jax.grad(lambda x, w, *rest: jnp.sum(fn(x, w, *rest).astype(F32) ** 2), argnums=(0, 1))


def _symbolic_cases():
    """(function, concrete args, {leaf: symbolic axes}) per op: the token / row count symbolic (the MoE layer: its
    dispatch sorts a symbolic number of entries)."""
    x = randn(seed_of("export", "px"), (72, 256)).astype(BF16)
    w = randn(seed_of("export", "pw"), (256, 192), spread=False)
    ws = randn(seed_of("export", "pws"), (3, 256, 192), spread=False)
    sizes = jnp.asarray([30, 0, 50], jnp.int32)  # past the 72 rows: cut
    router = randn(seed_of("export", "pr"), (256, 3))
    w_gate_up = randn(seed_of("export", "pg"), (3, 256, 384), spread=False).astype(BF16)
    w_down = randn(seed_of("export", "pd"), (3, 192, 256), spread=False).astype(BF16)
    dense, dense_args, *_ = _dense()
    ragged, ragged_args, *_ = _ragged()
    k_grouped, k_args, *_ = _k_grouped()
    masked, masked_args, *_ = _masked()
    contiguous, contiguous_args, *_ = _contiguous()
    return {
        "dense": (dense, dense_args, {0: (0,), 1: (0,), 4: (0,)}),  # a [M, K], its scales [M, kb], c [M, N]
        "ragged": (ragged, ragged_args, {0: (0,), 1: (0,)}),
        "contiguous": (contiguous, contiguous_args, {0: (0,), 1: (0,), 4: (0,)}),
        "masked": (masked, masked_args, {0: (1,), 1: (1,)}),  # a [G, M, K], its scales [G, M, kb]
        "k_grouped": (k_grouped, k_args, {0: (0,), 1: (0,), 5: (1,)}),  # a [M, K], its scales, c [G, M, N]
        "fp8_dot_grad": (_grad_of(dg.fp8_dot), (x, w), {0: (0,)}),
        "ragged_dot_grad": (_grad_of(dg.ragged_dot), (x, ws, sizes), {0: (0,)}),
        "moe_grad": (jax.grad(lambda x, r, w1, w2: jnp.sum(moe(x, r, w1, w2, top_k=2).astype(F32) ** 2),
                              argnums=(0, 1, 2, 3)), (x, router, w_gate_up, w_down), {0: (0,)}),
    }


# The group count symbolic instead (leaf index -> axes of size G): the grouped GEMMs and ragged_dot's gradient (whose
# k-grouped weight gradient then has a symbolic K too). The MoE layer's expert count stays static (top_k is checked
# against it).
_SYMBOLIC_GROUPS = {
    "ragged": {2: (0,), 3: (0,), 4: (0,)},
    "contiguous": {2: (0,), 3: (0,)},
    "masked": {0: (0,), 1: (0,), 2: (0,), 3: (0,), 4: (0,)},
    "k_grouped": {4: (0,), 5: (0,)},
    "ragged_dot_grad": {1: (0,), 2: (0,)},
}


@pytest.mark.parametrize("case", ["dense", "ragged", "contiguous", "masked", "k_grouped", "fp8_dot_grad",
                                  "ragged_dot_grad", "moe_grad"] + [f"{c}/groups" for c in _SYMBOLIC_GROUPS])
def test_shape_polymorphic_export_takes_the_reference(case, monkeypatch):
    """A symbolic row (or group) count cannot take the kernels (each is compiled for its static shapes): the CUDA
    branch lowers to the reference, with a warning (an error under JAX_DEEPGEMM_STRICT), and the artifact computes,
    for the concrete shapes it is called with, what the reference computes (run on the CPU, where both sides are
    it)."""
    name, _, groups = case.partition("/")
    fn, args, dims = _symbolic_cases()[name]
    specs = _with_symbolic(args, _SYMBOLIC_GROUPS[name], "g") if groups else _with_symbolic(args, dims)
    monkeypatch.setattr(runtime, "_warned_fallbacks", set())
    with pytest.warns(RuntimeWarning, match="symbolic dimensions"):
        exported = export.export(jax.jit(fn), platforms=PLATFORMS, disabled_checks=dg.export_disabled_checks())(
            *specs)
    # (the gradients' weight quantizations, of static shapes, keep their kernels)
    assert "jdg_fp8_gemm" not in exported.mlir_module(), "no GEMM kernel call for symbolic shapes"
    restored = export.deserialize(exported.serialize())
    args = jax.device_put(args, jax.devices("cpu")[0])  # (on a GPU too: the reference on both sides)
    got, want = restored.call(*args), jax.jit(fn)(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        if name == "moe_grad":  # (XLA compiles the refined program's f32 sums in another order: an ulp or so)
            np.testing.assert_allclose(oracle.f64(g), oracle.f64(w), rtol=1e-5, atol=1e-5 * np.abs(oracle.f64(w)).max())
        else:
            np.testing.assert_array_equal(oracle.f64(g), oracle.f64(w))
    monkeypatch.setenv("JAX_DEEPGEMM_STRICT", "1")
    with pytest.raises(RuntimeError, match="symbolic dimensions.*JAX_DEEPGEMM_STRICT"):
        export.export(jax.jit(fn), platforms=("cuda",), disabled_checks=dg.export_disabled_checks())(*specs)


def test_symbolic_expert_count_is_refused_by_name():
    """The MoE layer's expert count must be static (its top_k and dispatch depend on it): named, not JAX's
    inconclusive comparison."""
    fn, args, _ = _symbolic_cases()["moe_grad"]
    specs = _with_symbolic(args, {1: (1,), 2: (0,), 3: (0,)}, "e")  # router_w [D, E], the experts' weights [E, ...]
    with pytest.raises(ValueError, match=r"moe: the expert count E \(router_w's last dimension\) must be static"):
        export.export(jax.jit(fn), platforms=PLATFORMS, disabled_checks=dg.export_disabled_checks())(*specs)


def _run_fresh(script: str, folder, args) -> subprocess.CompletedProcess:
    """Runs `script` in a fresh Python process, after a prelude that loads `args` (stored in `folder` here) as
    `args`, a tuple of arrays; `folder` is the script's too."""
    leaves = [np.asarray(x) for x in jax.tree.leaves(args)]
    np.savez(folder / "args.npz", *[x.view(np.uint8) for x in leaves])  # float8 data travels as its bytes
    (folder / "dtypes.txt").write_text(" ".join(x.dtype.name for x in leaves))
    prelude = textwrap.dedent("""
        import sys
        import jax, jax.numpy as jnp, numpy as np
        folder = sys.argv[1]
        stored = np.load(folder + "/args.npz")
        dtypes = open(folder + "/dtypes.txt").read().split()
        args = tuple(jnp.asarray(stored[f"arr_{i}"].view(jnp.dtype(t))) for i, t in enumerate(dtypes))
    """)
    done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script), str(folder)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.gpu
@pytest.mark.skipif(not _SM90, reason="needs an sm_90 GPU (H100/H200); none is present here")
@pytest.mark.parametrize("case", sorted(CASES))
def test_artifact_runs_in_a_fresh_process(case, tmp_path):
    """A process that imports jax_deepgemm, deserializes and calls, without lowering one of our ops itself."""
    fn, args, expected, bound, out_dtype, *rows = CASES[case]()
    exported, _ = _round_trip(fn, args)
    (tmp_path / "program.bin").write_bytes(exported.serialize())
    _run_fresh("""
        from jax import export
        import jax_deepgemm  # registers the FFI targets
        restored = export.deserialize(open(folder + "/program.bin", "rb").read())
        assert jax.devices()[0].platform == "gpu", jax.devices()
        out = restored.call(*jax.tree.unflatten(restored.in_tree, args)[0])
        np.save(folder + "/out.npy", np.asarray(out.astype(jnp.float32)))
    """, tmp_path, args)
    out = jnp.asarray(np.load(tmp_path / "out.npy")).astype(out_dtype)
    assert_matches(out, expected, bound, out_dtype, rows=rows[0] if rows else None)


def test_persistent_compilation_cache(tmp_path):
    """JAX's persistent compilation cache: a second process takes the program holding our call from the cache (on a
    GPU: an executable with our custom call, instantiated again) and computes the same result."""
    _, (a, b, c), expected, bound, out_dtype = _dense()
    script = """
        jax.config.update("jax_compilation_cache_dir", folder + "/cache")
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        hits = []
        jax.monitoring.register_event_listener(lambda name, **_: hits.append(name) if name.endswith("/cache_hits")
                                               else None)
        import jax_deepgemm as dg
        a0, a1, b0, b1, c = args
        out = jax.jit(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=jnp.float32))((a0, a1), (b0, b1), c)
        np.save(folder + f"/out{len(hits)}.npy", np.asarray(out))
    """
    _run_fresh(script, tmp_path, (a, b, c))  # compiles, and stores the program: out0.npy
    _run_fresh(script, tmp_path, (a, b, c))  # one cache hit: out1.npy
    assert (tmp_path / "out1.npy").exists(), "the second process did not take the program from the cache"
    first, second = np.load(tmp_path / "out0.npy"), np.load(tmp_path / "out1.npy")
    np.testing.assert_array_equal(first, second)
    assert_matches(jnp.asarray(second), expected, bound, out_dtype)

# Problems of more tiles than an H100 or H200 has SMs, whose configuration for four times the SMs differs: (M, N,
# K), forced DG_TUNE_* settings. At 528 SMs the heuristics take 512 tiles of 256 x 128 (128 CTAs at 132 SMs), split K
# over 132 pairs of 64 x 16 tiles (66 pairs of 64 x 32), and tiles forced into clusters of 2 sharing A.
MANY_TILES = {"dense": ((4096, 4096, 4096), {}), "split_k": ((64, 2112, 7168), {}),
              "clusters": ((4096, 4096, 4096), {"DG_TUNE_CLUSTER": "2"})}


@pytest.mark.gpu
@pytest.mark.skipif(not _SM90, reason="needs an sm_90 GPU (H100/H200); none is present here")
@pytest.mark.parametrize("kind", sorted(MANY_TILES) + ["masked_tail_split"])
def test_program_lowered_for_more_sms(kind, monkeypatch, capfd):
    """The lowering's SM count (an attribute) is four times the GPU's, as in an artifact from a larger GPU: the
    handler takes the configuration for this GPU's SMs when XLA instantiates the call, and the results are right."""
    sms = min(d.core_count for d in _SM90)
    monkeypatch.setattr(runtime, "get_num_sms", lambda: 4 * sms)
    monkeypatch.setenv("DG_JIT_DEBUG", "1")  # its "ready on device" line gives the grid launched
    ext = runtime.extension()
    if kind == "masked_tail_split":  # over long K: the tail split's pairs; masked_m from the device, 1..1024 rows
        masked_m = jnp.asarray([1024, 700, 1, 513], jnp.int32)
        a = q_lhs_batched(randn(seed_of("sms", 1), (4, 1024, 4096)))
        b = q_rhs_batched(randn(seed_of("sms", 2), (4, 1024, 4096)))
        fn = lambda a, b, m: dg.m_grouped_fp8_gemm_nt_masked(a, b, m, expected_m=800)  # noqa: E731
        args = (a, b, masked_m)
        config = lambda s: ext.select_fp8_gemm_config(1024, 1024, 4096, s, grouping="masked", num_groups=4,  # noqa
                                                      expected_m=800)
    else:
        (m, n, k), forced = MANY_TILES[kind]
        for name, value in forced.items():
            monkeypatch.setenv(name, value)
        a, b = q_lhs(randn(seed_of("sms", m), (m, k))), q_rhs(randn(seed_of("sms", n), (n, k)))
        fn, args = dg.fp8_gemm_nt, (a, b)
        config = lambda s: ext.select_fp8_gemm_config(m, n, k, s, hbm_gbs=runtime.get_hbm_gbs())  # noqa: E731
    assert config(4 * sms) != config(sms), "not a case whose configuration depends on the SM count"
    jax.clear_caches()  # the environment is read when XLA compiles
    assert f"num_sms = {4 * sms}" in jax.jit(fn).lower(*args).as_text()
    out = jax.jit(fn)(*args)
    a64, b64 = oracle.dequant_lhs(*a), oracle.dequant_rhs(*b)
    if kind == "masked_tail_split":
        rows = oracle.masked_valid(np.asarray(masked_m), 4, 1024)
        assert_matches(out, oracle.masked(a64, b64), oracle.masked(a64, b64, fn=oracle.gemm_bound), BF16, rows=rows)
    else:
        assert_matches(out, oracle.gemm(a64, b64), oracle.gemm_bound(a64, b64), BF16)
    grids = [int(g) for g in re.findall(r"ready on device .*?: grid=(\d+)", capfd.readouterr().err)]
    assert grids == [config(sms)["grid"]], grids
    jax.clear_caches()  # later tests compile for the GPU's own SM count
