"""The CUDA lowering, checked without a GPU: jit programs lowered for "cuda" hold our typed FFI custom call with the
static configuration as attributes, and no XLA dot (the reference is not silently used)."""

from functools import partial
import re

import jax
import jax.numpy as jnp
import pytest

import jax_deepgemm as dg


def _lower_cuda(fn, *args) -> str:
    return jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def _pairs(m, n, k, per_row=False, dtype=jnp.float8_e4m3fn):
    x = jax.random.normal(jax.random.key(0), (m, k))
    w = jax.random.normal(jax.random.key(1), (n, k))
    a = dg.per_token_cast_to_fp8(x)
    b = dg.per_token_cast_to_fp8(w) if per_row else dg.per_block_cast_to_fp8(w)
    return (a[0].astype(dtype), a[1]), (b[0].astype(dtype), b[1])


def _attributes(text: str) -> dict:
    calls = re.findall(r"stablehlo\.custom_call @jdg_fp8_gemm\((.*)", text)
    assert len(calls) == 1, text
    config = re.search(r"mhlo\.backend_config = \{(.*?)\}", calls[0]).group(1)
    return dict(item.strip().split(" = ", 1) for item in config.split(","))


# K padded to 16 bytes for TMA through wider integer views of the rows (kernels._pad_k): the same bytes as a pad of
# the FP8 array itself, for every K remainder the views take (4-, 2- and 1-byte), with group axes in front.
@pytest.mark.parametrize("k", [1000, 1002, 1004, 999, 7000, 1024])
@pytest.mark.parametrize("dtype", [jnp.float8_e4m3fn, jnp.float8_e5m2])
def test_k_padding_keeps_every_byte(k, dtype):
    from jax_deepgemm import kernels

    x = (jax.random.normal(jax.random.key(k), (3, 5, k)) * 100).astype(dtype)
    padded = jax.jit(kernels._pad_k)(x)
    expected = jnp.pad(x, [(0, 0), (0, 0), (0, -k % 16)])
    assert padded.shape == expected.shape and padded.dtype == dtype
    as_bytes = partial(jax.lax.bitcast_convert_type, new_dtype=jnp.uint8)
    assert bool(jnp.all(as_bytes(padded) == as_bytes(expected)))


@pytest.mark.parametrize("m,n,k", [(1, 16, 16), (130, 150, 200), (4096, 7168, 2048)])
def test_dense_lowers_to_the_ffi_call(m, n, k):
    a, b = _pairs(m, n, k)
    text = _lower_cuda(dg.fp8_gemm_nt, a, b)
    assert "dot_general" not in text
    attrs = _attributes(text)
    assert attrs["m"] == f"{m} : i64" and attrs["n"] == f"{n} : i64"
    assert attrs["k"] == f"{-(-k // 16) * 16} : i64"  # K padded to 16 bytes for TMA
    assert attrs["arch"] == '"sm_90a"'
    assert attrs["c_kind"] == "0 : i64" and attrs["out_f32"] == "false" and attrs["b_scale_per_row"] == "false"
    assert "api_version = 4" in text or "mhlo.backend_config" in text  # typed FFI (attributes as a dictionary)


def test_dense_attributes_follow_the_call():
    a, b = _pairs(256, 384, 512, per_row=True, dtype=jnp.float8_e5m2)
    c = jnp.ones((256, 384), jnp.float32)
    text = _lower_cuda(lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=jnp.float32), a, b, c)
    attrs = _attributes(text)
    assert attrs["c_kind"] == "2 : i64" and attrs["out_f32"] == "true" and attrs["b_scale_per_row"] == "true"
    assert attrs["a_e5m2"] == "true" and attrs["b_e5m2"] == "true"


def test_hbm_bandwidth_reaches_the_call(monkeypatch):
    """The GPU's peak memory bandwidth (for the split-K choice) is an attribute: the driver's, 0 without a GPU."""
    from jax_deepgemm import runtime

    a, b = _pairs(128, 256, 512)
    expected = runtime.get_hbm_gbs()
    assert expected >= 0 and (expected > 0 or not runtime.cuda_devices())
    assert _attributes(_lower_cuda(dg.fp8_gemm_nt, a, b))["hbm_gbs"] == f"{expected} : i64"
    monkeypatch.setattr(runtime, "_hbm_gbs", 4917)  # a new function: jit would reuse the first trace
    assert _attributes(_lower_cuda(lambda a, b: dg.fp8_gemm_nt(a, b), a, b))["hbm_gbs"] == "4917 : i64"


@pytest.mark.parametrize("layout", ["nn", "tn", "tt"])
def test_other_layouts_reach_the_same_kernel(layout):
    a, b = _pairs(128, 256, 384)
    a_data = a[0].T if layout[0] == "t" else a[0]
    b_data = b[0] if layout[1] == "t" else b[0].T
    fn = getattr(dg, f"fp8_gemm_{layout}")
    text = _lower_cuda(fn, (a_data, a[1]), (b_data, b[1]))
    assert "dot_general" not in text
    assert text.count("custom_call @jdg_fp8_gemm") == 1


def _aliased_operand(text: str):
    """The operand index that the (single) jdg_fp8_gemm call's output aliases, or None."""
    call = re.search(r"stablehlo\.custom_call @jdg_fp8_gemm\(.*", text).group(0)
    found = re.search(r"output_operand_alias<output_tuple_indices = \[\], operand_index = (\d+)", call)
    return None if found is None else int(found.group(1))


@pytest.mark.parametrize("out_dtype", [jnp.float32, jnp.bfloat16])
def test_overwrite_c_aliases_d_to_c(out_dtype):
    """overwrite_c=True makes C (the call's fifth operand; sixth for k-grouped, after the sizes) the buffer D is
    written into, so that XLA copies C only where it is still needed; without it, D is a buffer of its own. The same
    under vmap (C folded with the batch) and inside lax.scan."""
    a, b = _pairs(256, 384, 512)
    c = jnp.ones((256, 384), out_dtype)
    dense = lambda over: lambda a, b, c: dg.fp8_gemm_nt(a, b, c=c, out_dtype=out_dtype, overwrite_c=over)  # noqa
    assert _aliased_operand(_lower_cuda(dense(True), a, b, c)) == 4
    assert _aliased_operand(_lower_cuda(dense(False), a, b, c)) is None
    assert _aliased_operand(_lower_cuda(lambda a, b, c: dg.fp8_gemm_tn((a[0].T, a[1]), (b[0].T, b[1]), c=c,
                                                                       out_dtype=out_dtype, overwrite_c=True),
                                        a, b, c)) == 4
    batched = jax.vmap(dense(True), in_axes=(0, None, 0))
    a2 = (jnp.stack([a[0], a[0]]), jnp.stack([a[1], a[1]]))
    assert _aliased_operand(_lower_cuda(batched, a2, b, jnp.stack([c, c]))) == 4
    scan = lambda a, b, c: jax.lax.scan(lambda acc, _: (dense(True)(a, b, acc), None), c, None, length=3)[0]  # noqa
    assert _aliased_operand(_lower_cuda(scan, a, b, c)) == 4


def test_overwrite_c_aliases_k_grouped_d_to_c():
    x, w = jax.random.normal(jax.random.key(2), (128, 512)), jax.random.normal(jax.random.key(3), (256, 512))
    a, b = dg.per_token_cast_to_fp8(x), dg.per_token_cast_to_fp8(w)
    sizes, c = jnp.asarray([256, 256], jnp.int32), jnp.ones((2, 128, 256), jnp.float32)
    k_grouped = lambda over: lambda a, b, s, c: dg.k_grouped_fp8_gemm_nt_contiguous(a, b, s, c=c,  # noqa: E731
                                                                                      overwrite_c=over)
    assert _aliased_operand(_lower_cuda(k_grouped(True), a, b, sizes, c)) == 5
    assert _aliased_operand(_lower_cuda(k_grouped(False), a, b, sizes, c)) is None


def _quantize_calls(text):
    """The quantization kernel's calls in a lowered program: (transposing ones, rowwise ones)."""
    calls = re.findall(r"stablehlo\.custom_call @jdg_fp8_quantize_t\((.*)", text)
    transposing = [c for c in calls if "rowwise = false" in c and "swiglu_backward = false" in c
                   and "swiglu_forward = false" in c]
    return transposing, [c for c in calls if "rowwise = true" in c]


def test_fp8_dot_forward_and_backward_use_the_kernel():
    x = jax.random.normal(jax.random.key(0), (256, 512), jnp.bfloat16)
    w = jax.random.normal(jax.random.key(1), (512, 384), jnp.bfloat16)
    loss = lambda x, w: jnp.square(dg.fp8_dot(x, w).astype(jnp.float32)).sum()  # needs the forward value
    text = _lower_cuda(jax.grad(loss, argnums=(0, 1)), x, w)
    assert "dot_general" not in text
    assert text.count("custom_call @jdg_fp8_gemm") == 3  # forward, dgrad, wgrad
    # the transposed operands, each one call of the quantization kernel: W^T (128x128, with W itself for the dgrad),
    # X^T and grad^T (1x128); and the A operands of the forward and the dgrad, x and grad (1x128, rowwise)
    calls, rowwise = _quantize_calls(text)
    assert len(calls) == 3 and len(rowwise) == 2, text
    assert sorted(re.search(r"rows = (\d+) ", c).group(1) for c in rowwise) == ["256", "256"]
    modes = sorted((re.search(r"per_block = (\w+)", c).group(1), re.search(r"untransposed = (\w+)", c).group(1))
                   for c in calls)
    assert modes == [("false", "false"), ("false", "false"), ("true", "true")]
    assert all("block_map = false" in c and 'arch = "sm_90a"' in c for c in calls)


def test_ragged_dot_backward_quantizes_with_the_kernel():
    lhs = jax.random.normal(jax.random.key(0), (300, 256), jnp.bfloat16)
    rhs = jax.random.normal(jax.random.key(1), (3, 256, 384), jnp.float32)
    sizes = jnp.asarray([100, 0, 150], jnp.int32)
    loss = lambda lhs, rhs: jnp.square(dg.ragged_dot(lhs, rhs, sizes).astype(jnp.float32)).sum()  # noqa: E731
    text = _lower_cuda(jax.grad(loss, argnums=(0, 1)), lhs, rhs)
    assert "ragged_dot" not in text and "dot_general" not in text
    # the weights' 128x128 blocks in both layouts (batched over the groups), then lhs^T and grad^T through the groups'
    # block map; lhs and grad rowwise for the forward and the dgrad
    calls, rowwise = _quantize_calls(text)
    assert len(calls) == 3 and len(rowwise) == 2, text
    names = ("per_block", "block_map", "untransposed")
    modes = sorted(tuple(re.search(rf"{name} = (\w+)", c).group(1) for name in names) for c in calls)
    assert modes == [("false", "true", "false"), ("false", "true", "false"), ("true", "false", "true")]
    assert sum("batch = 3 " in c for c in calls) == 1


@pytest.mark.parametrize("op", ["fp8_dot", "ragged_dot"])
@pytest.mark.parametrize("argnums,gemms,untransposed", [(0, 2, True), (1, 2, False)], ids=["x_only", "w_only"])
def test_one_argument_grads_lower_only_what_they_need(op, argnums, gemms, untransposed):
    """Only x differentiated: no wgrad, and the weights' second layout for the dgrad; only w: no dgrad, one layout."""
    x = jax.random.normal(jax.random.key(0), (300, 256), jnp.bfloat16)
    if op == "fp8_dot":
        w, fn = jax.random.normal(jax.random.key(1), (256, 384), jnp.float32), dg.fp8_dot
    else:
        w = jax.random.normal(jax.random.key(1), (3, 256, 384), jnp.float32)
        fn = partial(dg.ragged_dot, group_sizes=jnp.asarray([100, 0, 150], jnp.int32))
    loss = lambda x, w: jnp.square(fn(x, w).astype(jnp.float32)).sum()  # noqa: E731
    text = _lower_cuda(jax.grad(loss, argnums=argnums), x, w)
    assert text.count("custom_call @jdg_fp8_gemm") == gemms  # the forward and the one gradient
    calls, rowwise = _quantize_calls(text)
    assert sum("untransposed = true" in c for c in calls) == int(untransposed)
    assert len(calls) == (1 if untransposed else 3)  # the weights; with the wgrad also its two token-major operands
    assert len(rowwise) == (2 if untransposed else 1)  # the forward's x; with the dgrad also the gradient


@pytest.mark.parametrize("op", ["fp8_dot", "ragged_dot"])
@pytest.mark.parametrize("w_dtype", [jnp.bfloat16, jnp.float32, jnp.float16])
def test_weight_gradient_is_written_in_the_weights_dtype(op, w_dtype):
    """bf16 weights: the wgrad kernel writes bf16 itself (no float32 result and conversion after it); float32 and
    float16 ones get a float32 result (float16 from bf16 would round twice)."""
    x = jax.random.normal(jax.random.key(0), (300, 256), jnp.bfloat16)
    if op == "fp8_dot":
        w, fn, is_wgrad = jax.random.normal(jax.random.key(1), (256, 384), w_dtype), dg.fp8_dot, "b_scale_per_row = true"
    else:
        w = jax.random.normal(jax.random.key(1), (3, 256, 384), w_dtype)
        fn, is_wgrad = partial(dg.ragged_dot, group_sizes=jnp.asarray([100, 0, 150], jnp.int32)), "k_grouped"
    loss = lambda x, w: jnp.square(fn(x, w).astype(jnp.float32)).sum()  # noqa: E731
    text = _lower_cuda(jax.grad(loss, argnums=1), x, w)
    wgrad = [c for c in re.findall(r"stablehlo\.custom_call @jdg_fp8_gemm\((.*)", text) if is_wgrad in c]
    assert len(wgrad) == 1, text
    assert f"out_f32 = {'false' if w_dtype == jnp.bfloat16 else 'true'}" in wgrad[0]


@pytest.mark.parametrize("cols,dtype,kernel", [(136, jnp.bfloat16, True), (130, jnp.bfloat16, False),
                                               (132, jnp.float32, True), (130, jnp.float32, False),
                                               (136, jnp.float16, False)])
@pytest.mark.parametrize("cast", ["transposed_cast_to_fp8", "token_cast_to_fp8"])
def test_quantization_takes_the_kernel_for_whole_16_byte_rows(cols, dtype, kernel, cast):
    from jax_deepgemm import transposed_cast

    x = jnp.ones((200, cols), dtype)
    text = _lower_cuda(getattr(transposed_cast, cast), x)
    assert ("custom_call @jdg_fp8_quantize_t" in text) == kernel
    if kernel:
        assert ("rowwise = true" in text) == (cast == "token_cast_to_fp8")


@pytest.mark.parametrize("f,dtype,kernel", [(256, jnp.bfloat16, True), (192, jnp.bfloat16, False),
                                           (256, jnp.float32, False)])
def test_moe_backward_takes_the_swiglu_kernel(f, dtype, kernel):
    """The MoE layer's backward forms the SwiGLU's gradients and their FP8 operand in one kernel call (bfloat16, F a
    multiple of 128), and otherwise in the reference's XLA ops."""
    from jax_deepgemm import nn

    t, d, e, top_k = 64, 256, 4, 2
    x = jnp.ones((t, d), dtype)
    router, w_gate_up, w_down = nn.init_moe_weights(jax.random.key(0), d, f, e)
    loss = lambda x, w1, w2: jnp.sum(nn.moe(x, router, w1, w2, top_k=top_k).astype(jnp.float32))  # noqa: E731
    text = _lower_cuda(jax.grad(loss, argnums=(0, 1, 2)), x, w_gate_up, w_down)
    calls = [c for c in re.findall(r"stablehlo\.custom_call @jdg_fp8_quantize_t\((.*)", text)
             if "swiglu_backward = true" in c]
    assert len(calls) == int(kernel), calls
    if kernel:
        assert f"rows = {t * top_k} : i64" in calls[0] and f"cols = {2 * f} : i64" in calls[0]


@pytest.mark.parametrize("f,dtype,kernel", [(256, jnp.bfloat16, True), (192, jnp.bfloat16, False),
                                           (256, jnp.float32, False)])
def test_moe_forward_quantizes_h_in_the_swiglu_kernel(f, dtype, kernel):
    """The MoE layer's forward forms h and its FP8 operand in one kernel call (bfloat16, F a multiple of 128); otherwise
    h comes from XLA's ops and its quantization from a rowwise call of its own. Either way x's rows are quantized as
    the rowwise kernel reads them through the dispatch's index."""
    from jax_deepgemm import nn

    t, d, e, top_k = 64, 256, 4, 2
    x = jnp.ones((t, d), dtype)
    router, w_gate_up, w_down = nn.init_moe_weights(jax.random.key(0), d, f, e)
    text = _lower_cuda(lambda x: nn.moe(x, router, w_gate_up, w_down, top_k=top_k), x)
    swiglu_calls = [c for c in re.findall(r"stablehlo\.custom_call @jdg_fp8_quantize_t\((.*)", text)
                    if "swiglu_forward = true" in c]
    assert len(swiglu_calls) == int(kernel), swiglu_calls
    if kernel:
        assert f"rows = {t * top_k} : i64" in swiglu_calls[0] and f"cols = {2 * f} : i64" in swiglu_calls[0]
    _, rowwise = _quantize_calls(text)
    row_maps = sorted(re.search(r"row_map = (\w+)", c).group(1) for c in rowwise)
    assert row_maps == (["true"] if kernel else ["false", "true"]), row_maps


def test_fp8_dot_in_a_sharded_program_quantizes_with_xla():
    """Over several devices (jit with sharded operands) the quantization lowers to the reference, which XLA
    partitions op by op; a kernel call there would be gathered whole."""
    mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,), devices=jax.devices("cpu")[:2])
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    x = jax.device_put(jax.random.normal(jax.random.key(0), (256, 512), jnp.bfloat16), sharding)
    w = jax.random.normal(jax.random.key(1), (512, 384), jnp.bfloat16)
    loss = lambda x, w: jnp.square(dg.fp8_dot(x, w).astype(jnp.float32)).sum()  # noqa: E731
    text = _lower_cuda(jax.grad(loss, argnums=(0, 1)), x, w)
    assert "jdg_fp8_quantize_t" not in text
    assert text.count("CustomSPMDPartitioning") == 3  # the GEMMs, partitioned (sharding.py)


def test_disable_kernels_falls_back_to_the_reference(monkeypatch):
    monkeypatch.setenv("JAX_DEEPGEMM_DISABLE_KERNELS", "1")
    a, b = _pairs(64, 64, 128)
    text = _lower_cuda(dg.fp8_gemm_nt, a, b)
    assert "jdg_fp8_gemm" not in text and "dot_general" in text


class _FakeGpu:
    compute_capability = "8.0"
    device_kind = "NVIDIA A100"
    core_count = 108


def test_other_gpus_fall_back_with_one_warning(monkeypatch):
    from jax_deepgemm import runtime

    monkeypatch.setattr(runtime, "cuda_devices", lambda: [_FakeGpu()])
    monkeypatch.setattr(runtime, "_warned_fallbacks", set())
    a, b = _pairs(64, 112, 128)  # shapes no other test lowers: lowerings are cached per shape
    with pytest.warns(RuntimeWarning, match="sm_90"):
        text = _lower_cuda(dg.fp8_gemm_nt, a, b)
    assert "jdg_fp8_gemm" not in text and "dot_general" in text
    a, b = _pairs(64, 144, 128)  # a new shape: lowered again, and no second warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _lower_cuda(dg.fp8_gemm_nt, a, b)


def test_strict_mode_makes_the_fallback_an_error(monkeypatch):
    from jax_deepgemm import runtime

    monkeypatch.setattr(runtime, "cuda_devices", lambda: [_FakeGpu()])
    monkeypatch.setenv("JAX_DEEPGEMM_STRICT", "1")
    a, b = _pairs(64, 176, 128)
    with pytest.raises(Exception, match="JAX_DEEPGEMM_STRICT"):
        _lower_cuda(dg.fp8_gemm_nt, a, b)


@pytest.mark.parametrize("op", ["dispatched", "combined"])
def test_the_moe_gemms_read_rows_through_the_gather(op):
    """The MoE layer's expert GEMMs: no gathered copy for the weight gradient, whose token-major operand reads the
    rows in place (row_map): the first GEMM's x (its forward gathers x's FP8 quantization), the second's output
    gradient (its backward quantizes the T rows of the gradient, not T * top_k gathered copies)."""
    from jax_deepgemm.differentiable import combined_ragged_dot, dispatched_ragged_dot

    fn = dispatched_ragged_dot if op == "dispatched" else combined_ragged_dot
    lhs = jax.random.normal(jax.random.key(0), (100 if op == "dispatched" else 300, 256), jnp.bfloat16)
    w = jax.random.normal(jax.random.key(1), (3, 256, 384), jnp.float32)
    order = jax.random.permutation(jax.random.key(2), 300).astype(jnp.int32)
    sizes = jnp.asarray([100, 0, 150], jnp.int32)
    loss = lambda lhs, w: jnp.square(fn(lhs, order, 3, w, sizes).astype(jnp.float32)).sum()  # noqa: E731
    text = _lower_cuda(jax.grad(loss, argnums=(0, 1)), lhs, w)
    assert text.count("custom_call @jdg_fp8_gemm") == 3
    calls, rowwise = _quantize_calls(text)
    assert len(calls) == 3 and len(rowwise) == 2, text
    assert sorted(re.search(r"row_map = (\w+)", c).group(1) for c in calls) == ["false", "false", "true"]
    # the gathered GEMM's A operand (the first's forward, the second's dgrad) quantized as it reads the rows
    assert sorted(re.search(r"row_map = (\w+)", c).group(1) for c in rowwise) == ["false", "true"]
    # (no gathered copy of FP8 rows, nor of their 32-bit words, left to XLA)
    gathered = [line.split("->")[-1] for line in text.splitlines() if "stablehlo.gather" in line]
    assert not [result for result in gathered if "xf8E4M3FN>" in result or "xui32>" in result]
    gathered = next(c for c in calls if "row_map = true" in c)
    assert "x_rows = 100 " in gathered and "rows = 300 " in gathered and "block_map = true" in gathered
