"""transposed_cast_to_fp8: the quantization of x^T, bit for bit the helpers' (per_token_cast_to_fp8(x.T),
per_block_cast_to_fp8(x.T)), through a block map built from group sizes or holding any values; token_cast_to_fp8: x's
own per-token quantization, bit for bit per_token_cast_to_fp8(x). On CPU this checks the reference lowering; with an
sm_90 GPU the cases whose rows are whole 16-byte vectors run the kernel (checked present in the program; the others
checked to take the reference), outputs poisoned before each launch, also inside a jitted lax.scan."""

from __future__ import annotations

import os
import re

os.environ["DG_POISON_OUTPUTS"] = "1"  # read when XLA compiles each program below: set before the first compile

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import BF16, F32, kernels_active, randn, seed_of  # noqa: E402

import jax_deepgemm as dg  # noqa: E402
from jax_deepgemm.transposed_cast import group_block_map, token_cast_to_fp8, transposed_cast_to_fp8  # noqa: E402

_helper = {False: jax.jit(dg.per_token_cast_to_fp8), True: jax.jit(dg.per_block_cast_to_fp8)}


def _bits(pair):
    data, scale = pair
    return np.asarray(data.view(jnp.uint8)), np.asarray(scale)


def _assert_same(got, want):
    (gd, gs), (wd, ws) = _bits(got), _bits(want)
    assert gd.shape == wd.shape and gs.shape == ws.shape, (gd.shape, wd.shape, gs.shape, ws.shape)
    np.testing.assert_array_equal(gs.view(np.uint32), ws.view(np.uint32))
    np.testing.assert_array_equal(gd, wd)


def _cast(x, per_block=False, block_map=None, untransposed=False, row_index=None):
    """transposed_cast_to_fp8 under jit; on the GPU also checks that the kernel runs where it takes x (bf16 / f32
    rows of whole 16-byte vectors) and only there."""
    fn = jax.jit(lambda x, rows, *m: transposed_cast_to_fp8(x, per_block=per_block, block_map=m or None,
                                                            untransposed=untransposed, row_index=rows))
    args = (x, row_index) + tuple(block_map or ())
    if kernels_active():
        takes = x.dtype in (BF16, F32) and x.shape[-1] % (16 // x.dtype.itemsize) == 0
        assert ('custom_call_target="jdg_fp8_quantize_t"' in fn.lower(*args).compile().as_text()) == takes
    return fn(*args)


def _token_cast(x, row_index=None):
    """token_cast_to_fp8 under jit, checked to take the kernel where it reads x (on the GPU), as _cast."""
    fn = jax.jit(lambda x, rows: token_cast_to_fp8(x, row_index=rows))
    if kernels_active():
        # (XLA drops a call whose results are empty from the compiled program)
        rows = x.shape[-2] if row_index is None else row_index.shape[0]
        takes = x.dtype in (BF16, F32) and x.shape[-1] % (16 // x.dtype.itemsize) == 0 and rows * x.shape[-1] > 0
        text = fn.lower(x, row_index).compile().as_text()
        assert ('custom_call_target="jdg_fp8_quantize_t"' in text) == takes
    return fn(x, row_index)


def _data(shape, dtype, seed):
    """Random data with a zero column and a column of subnormal-sized values (the amax floor, tiny quotients)."""
    x = np.array(randn(seed, shape, F32), np.float32)
    x[..., 0] = 0.0
    if shape[-1] > 2:
        x[..., 2] *= 1e-30
    return jnp.asarray(x).astype(dtype)


@pytest.mark.parametrize("dtype", [BF16, F32], ids=["bf16", "f32"])
@pytest.mark.parametrize("per_block", [False, True], ids=["rows", "blocks"])
@pytest.mark.parametrize("shape", [(256, 384), (300, 200), (1, 1), (129, 131), (2, 3, 260, 130), (4, 128, 2048)])
def test_equals_the_helpers(shape, per_block, dtype):
    x = _data(shape, dtype, seed_of("tcast", shape, per_block))
    got = _cast(x, per_block)
    flat = x.reshape((-1,) + x.shape[-2:])
    want = jax.vmap(lambda m: _helper[per_block](m.T))(flat)
    _assert_same(got, (want[0].reshape(got[0].shape), want[1].reshape(got[1].shape)))


@pytest.mark.parametrize("dtype", [BF16, F32, jnp.float16], ids=["bf16", "f32", "f16"])
@pytest.mark.parametrize("shape", [(256, 384), (300, 200), (1, 1), (129, 131), (2, 3, 260, 136), (4, 128, 2048),
                                   (1000, 7168), (0, 128), (3, 0)])
def test_token_cast_equals_the_helper(shape, dtype):
    """x's own per-token quantization: per_token_cast_to_fp8 of each matrix, bit for bit (rows past a 128-row block,
    columns past a 128-column block, float16 and rows of partial 16-byte vectors on the reference, empty x)."""
    x = _data(shape, dtype, seed_of("tokcast", shape)) if 0 not in shape else jnp.zeros(shape, dtype)
    got = _token_cast(x)
    flat = x.reshape((int(np.prod(x.shape[:-2])),) + x.shape[-2:])
    want = jax.vmap(_helper[False])(flat)
    _assert_same(got, (want[0].reshape(got[0].shape), want[1].reshape(got[1].shape)))


def test_casts_of_extreme_values():
    """Huge, tiny and all-zero rows, a block whose one large value rounds the rest to zero and rows whose values span
    2^-60..2^68 (every size of quotient: the kernels' reciprocal product against XLA's division): the helpers' bits,
    per token and transposed."""
    x = np.array(randn(seed_of("tokcast-extreme"), (256, 512), F32), np.float32)
    x[0] = 0.0                        # the amax floor
    x[1] *= 3e37                      # near the largest finite bfloat16 / float32
    x[2, :128] *= 1e-40               # subnormal
    x[3, 5] = 1e30                    # one large value
    x[4:8] *= np.exp2(np.arange(-60, 68, 0.25, dtype=np.float32))  # quotients of every size, 2^-60..2^68 in a row
    for dtype in (BF16, F32):
        xd = jnp.asarray(x).astype(dtype)
        _assert_same(_token_cast(xd), _helper[False](xd))
        for per_block in (False, True):
            _assert_same(_cast(xd.T, per_block), _helper[per_block](xd))


def test_token_cast_inside_scan_and_vmap():
    """Inside a jitted lax.scan (a command buffer on the GPU), and under vmap (the batch goes to the kernel's)."""
    xs = _data((3, 200, 264), BF16, seed_of("tokcast-scan"))
    data, scale = jax.jit(lambda xs: jax.lax.scan(lambda c, x: (c, token_cast_to_fp8(x)), 0, xs)[1])(xs)
    vdata, vscale = jax.jit(jax.vmap(token_cast_to_fp8))(xs)
    for i in range(3):
        want = _helper[False](xs[i])
        _assert_same((data[i], scale[i]), want)
        _assert_same((vdata[i], vscale[i]), want)


@pytest.mark.parametrize("dtype", [BF16, F32], ids=["bf16", "f32"])
@pytest.mark.parametrize("shape", [(256, 384), (300, 200), (129, 136), (2, 3, 260, 128), (3, 7168 // 8, 256)])
def test_untransposed_equals_the_helpers(shape, dtype):
    """untransposed=True: also x's own 128x128 quantization (the weights' dgrad operand), the helpers' bits, with
    scale's transpose as its scales."""
    x = _data(shape, dtype, seed_of("tcast-both", shape))
    data_t, scale, data = _cast(x, per_block=True, untransposed=True)
    flat = x.reshape((-1,) + x.shape[-2:])
    want_t = jax.vmap(lambda m: _helper[True](m.T))(flat)
    want = jax.vmap(_helper[True])(flat)
    _assert_same((data_t, scale), (want_t[0].reshape(data_t.shape), want_t[1].reshape(scale.shape)))
    scale_untransposed = jnp.swapaxes(scale, -1, -2)
    _assert_same((data, scale_untransposed), (want[0].reshape(data.shape), want[1].reshape(scale_untransposed.shape)))


def _gathered(x, block_src, block_rows):
    """NumPy: x [R, C] -> [128 nb, C], block b = rows block_src[b] .. of x clamped as the kernel clamps, then zeros."""
    r = x.shape[0]
    out = np.zeros((len(block_src) * 128, x.shape[1]), x.dtype)
    for b, (src, rows) in enumerate(zip(block_src, block_rows)):
        count = min(max(int(rows), 0), 128, r)
        start = min(max(int(src), 0), r - count)
        out[b * 128: b * 128 + count] = x[start: start + count]
    return out


GROUPS = {"mixed": [5, 130, 0, 100, 65], "aligned": [128, 256, 128], "one_token": [1, 1, 1, 1],
          "empty": [0, 0, 0], "past_m": [200, 300, 400], "negative_huge": [-5, 2**31 - 1, 7, -(2**31)]}


@pytest.mark.parametrize("dtype", [BF16, F32], ids=["bf16", "f32"])
@pytest.mark.parametrize("groups", sorted(GROUPS))
def test_group_block_map(groups, dtype):
    """Each group's rows from a 128-row block on, as the k-grouped weight gradient wants them."""
    m, c = 400, 192
    x = _data((m, c), dtype, seed_of("tcast-groups", groups))
    sizes = jnp.asarray(GROUPS[groups], jnp.int32)
    block_src, block_rows, padded = jax.jit(group_block_map, static_argnums=1)(sizes, m)
    # the padded sizes hold the (clamped) groups, each rounded up to 128 rows
    clamped = np.diff(np.minimum(np.cumsum(np.clip(np.asarray(GROUPS[groups], np.int64), 0, m)), m), prepend=0)
    np.testing.assert_array_equal(np.asarray(padded), -(-clamped // 128) * 128)
    assert len(block_src) == -(-m // 128) + len(GROUPS[groups])
    rows = np.asarray(block_rows).reshape(-1)
    assert int(rows.sum()) == int(clamped.sum())
    got = _cast(x, block_map=(block_src, block_rows))
    want = _helper[False](jnp.asarray(_gathered(np.asarray(x), np.asarray(block_src), rows)).T)
    _assert_same(got, want)


@pytest.mark.parametrize("rows", [300, 0], ids=["rows300", "empty_x"])
def test_any_block_map(rows):
    """Block maps holding any values read inside x (clamped) and give the reference's result."""
    rng = np.random.default_rng(seed_of("tcast-garbage", rows))
    nb, c = 9, 160
    block_src = rng.integers(-1000, 1000, nb).astype(np.int32)
    block_rows = rng.integers(-50, 300, nb).astype(np.int32)
    block_src[:3] = [2**31 - 1, -(2**31), rows - 3]
    block_rows[:3] = [2**31 - 1, 128, 2**31 - 1]
    x = _data((rows, c), BF16, seed_of("tcast-garbage-x", rows)) if rows else jnp.zeros((0, c), BF16)
    got = _cast(x, block_map=(jnp.asarray(block_src), jnp.asarray(block_rows)))
    want = _helper[False](jnp.asarray(_gathered(np.asarray(x), block_src, block_rows)).T)
    _assert_same(got, want)


def _rows_of(x, row_index):
    """NumPy: x [..., R, C] -> x[..., row_index, :], zero rows where an index is outside [0, R)."""
    inside = (row_index >= 0) & (row_index < x.shape[-2])
    if x.shape[-2] == 0:
        return np.zeros(x.shape[:-2] + (len(row_index), x.shape[-1]), x.dtype)
    out = x[..., np.where(inside, row_index, 0), :].copy()
    out[..., ~inside, :] = 0
    return out


@pytest.mark.parametrize("dtype", [BF16, F32], ids=["bf16", "f32"])
@pytest.mark.parametrize("per_block", [False, True], ids=["rows", "blocks"])
# 1160 columns: 10 column tiles, the gathered order walks each column tile's row blocks in turn (fp8_quantize.cuh)
@pytest.mark.parametrize("shape,picked", [((300, 200), 700), ((64, 136), 129), ((2, 50, 256), 260), ((0, 128), 5),
                                          ((50, 1160), 300), ((2, 40, 1160), 300)])
def test_row_index_equals_the_gathered_rows(shape, picked, per_block, dtype):
    """row_index: the quantization of x[..., row_index, :] (each row picked any number of times, in any order;
    indices outside x, negative or past its end or int32's extremes, read zero rows), the helpers' bits on the
    gathered rows, with and without a block map of groups over the picked rows."""
    rng = np.random.default_rng(seed_of("tcast-rows", shape, picked))
    x = _data(shape, dtype, seed_of("tcast-rows-x", shape)) if shape[-2] else jnp.zeros(shape, dtype)
    row_index = rng.integers(-3, shape[-2] + 3, picked).astype(np.int32)
    row_index[:2] = [2**31 - 1, -(2**31)]
    gathered = _rows_of(np.asarray(x), row_index)
    flat = jnp.asarray(gathered).reshape((-1,) + gathered.shape[-2:])
    got = _cast(x, per_block, row_index=jnp.asarray(row_index))
    want = jax.vmap(lambda m: _helper[per_block](m.T))(flat)
    _assert_same(got, (want[0].reshape(got[0].shape), want[1].reshape(got[1].shape)))
    if not per_block:  # x's own per-token quantization of the same rows, also under Explicit mesh axes (the helper)
        want = jax.vmap(_helper[False])(flat)
        want = want[0].reshape(gathered.shape), want[1].reshape(gathered.shape[:-1] + (-1,))
        _assert_same(_token_cast(x, jnp.asarray(row_index)), want)
        mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,), devices=jax.devices("cpu")[:2])
        replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
        args = jax.device_put((x, jnp.asarray(row_index)), replicated)
        with jax.set_mesh(mesh):
            _assert_same(jax.jit(lambda x, rows: token_cast_to_fp8(x, row_index=rows))(*args), want)
    if per_block or len(shape) > 2:
        return
    sizes = jnp.asarray([picked // 3, 0, picked // 2, 7], jnp.int32)
    block_src, block_rows, _ = group_block_map(sizes, picked)
    got = _cast(x, block_map=(block_src, block_rows), row_index=jnp.asarray(row_index))
    want = _helper[False](jnp.asarray(_gathered(gathered, np.asarray(block_src), np.asarray(block_rows))).T)
    _assert_same(got, want)


def test_inside_scan():
    """Inside a jitted lax.scan (a command buffer on the GPU), with the block map as device data per step."""
    m, c = 256, 256
    xs = _data((3, m, c), BF16, seed_of("tcast-scan"))
    sizes = jnp.asarray([[100, 156], [0, 256], [256, 0]], jnp.int32)

    @jax.jit
    def run(xs, sizes):
        def step(carry, xs_sizes):
            x, s = xs_sizes
            src, rows, _ = group_block_map(s, m)
            return carry, transposed_cast_to_fp8(x, block_map=(src, rows))
        return jax.lax.scan(step, 0, (xs, sizes))[1]

    data, scale = run(xs, sizes)
    for i in range(3):
        src, rows, _ = group_block_map(sizes[i], m)
        want = _helper[False](jnp.asarray(_gathered(np.asarray(xs[i]), np.asarray(src), np.asarray(rows))).T)
        _assert_same((data[i], scale[i]), want)


def test_vmap():
    """vmap: an unbatched map goes to the kernel's batch; a batched one takes the reference per element."""
    m, c = 200, 136
    xs = _data((2, m, c), F32, seed_of("tcast-vmap"))
    per = [group_block_map(jnp.asarray(s, jnp.int32), m) for s in ([50, 150], [199, 1])]
    shared = jax.jit(jax.vmap(lambda x: transposed_cast_to_fp8(x, block_map=per[0][:2])))(xs)
    maps = [jnp.stack([p[i] for p in per]) for i in range(2)]
    own = jax.jit(jax.vmap(lambda x, s, r: transposed_cast_to_fp8(x, block_map=(s, r))))(xs, *maps)
    for i in range(2):
        for got, (src, rows, _) in ((shared, per[0]), (own, per[i])):
            want = _helper[False](jnp.asarray(_gathered(np.asarray(xs[i]), np.asarray(src), np.asarray(rows))).T)
            _assert_same((got[0][i], got[1][i]), want)


def _padded_groups(x, sizes):
    """x [M, C] with each group's rows (sizes clamped into M, as the GEMMs read them) from a 128-row block on, zeros
    between, over ceil(M / 128) + G blocks; and the padded sizes."""
    m = x.shape[0]
    ends = np.minimum(np.cumsum(np.clip(np.asarray(sizes, np.int64), 0, m)), m)
    clamped = np.diff(ends, prepend=0)
    padded = -(-clamped // 128) * 128
    out = np.zeros(((-(-m // 128) + len(clamped)) * 128, x.shape[1]), x.dtype)
    for start, size, to in zip(ends - clamped, clamped, np.cumsum(padded) - padded):
        out[to:to + size] = x[start:start + size]
    return out, padded


@pytest.mark.parametrize("groups", ["mixed", "negative_huge", "past_m"])
def test_ragged_dot_operands(groups):
    """ragged_dot's weight-gradient operands (the block map of its groups) equal the helpers on the groups padded to
    128-row blocks, bit for bit, and its weights' quantization the helpers' 128x128 one of each W^T."""
    from jax_deepgemm import differentiable

    m = 400
    lhs, g = _data((m, 192), BF16, seed_of("tcast-rd", groups)), _data((m, 256), BF16, seed_of("tcast-rd-g", groups))
    sizes = jnp.asarray(GROUPS[groups], jnp.int32)
    lhs_q, g_q, padded = jax.jit(differentiable._token_major_operands)(lhs, g, sizes)
    for got, x in ((lhs_q, lhs), (g_q, g)):
        x_padded, want_padded = _padded_groups(np.asarray(x), GROUPS[groups])
        _assert_same(got, _helper[False](jnp.asarray(x_padded).T))
    np.testing.assert_array_equal(np.asarray(padded), want_padded)
    w = _data((3, 256, 136), F32, seed_of("tcast-rd-w"))
    want = [_helper[True](w[i].T) for i in range(3)]
    _assert_same(jax.jit(differentiable._quantize_weight)(w), (jnp.stack([d for d, _ in want]),
                                                               jnp.stack([s for _, s in want])))


@pytest.mark.gpu
@pytest.mark.skipif(not kernels_active(), reason="needs an sm_90 GPU with the kernels active (XLA's GPU program is "
                                                 "what this checks); none is present here")
def test_token_major_scales_reach_the_gemms_untransposed():
    """The weight gradients' token-major operands: the kernel stores their scales as the GEMMs read them ([row blocks,
    columns]), so XLA cancels transposed_cast_to_fp8's swapaxes against the GEMM's transpose, and the compiled
    program holds no transpose of them (fp8_dot's X^T and grad^T, ragged_dot's through the groups' block map)."""
    x, w = randn(1, (256, 512), BF16), randn(2, (512, 384), BF16)
    sizes = jnp.array([100, 0, 156], jnp.int32)
    ws = randn(3, (3, 512, 384), BF16)
    programs = {"fp8_dot": (lambda w, x: jnp.sum(dg.fp8_dot(x, w).astype(F32) ** 2), (w, x)),
                "ragged_dot": (lambda w, x: jnp.sum(dg.ragged_dot(x, w, sizes).astype(F32) ** 2), (ws, x))}
    for name, (loss, args) in programs.items():
        text = jax.jit(jax.grad(loss)).lower(*args).compile().as_text()
        assert 'custom_call_target="jdg_fp8_quantize_t"' in text, name
        # A scale array, [columns, row blocks] or [row blocks, 1, columns] (the kernel's batch axis), the columns x's
        # or the gradient's features (512, 384), a few row blocks of 128 tokens; moved by a transpose or by a copy
        # that changes its layout.
        found = re.findall(r"f32\[([\d,]+)\]\{[^}]*\} (?:transpose|copy)\(", text)
        moved = [tuple(map(int, d.split(","))) for d in found]
        scale_moves = [d for d in moved if {512, 384} & set(d) and min(d) <= 8]
        assert not scale_moves, (name, scale_moves)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"token_cast_to_fp8: x must be \[\.\.\., R, C\] \(rank >= 2\), got shape"):
        token_cast_to_fp8(jnp.ones((8,), F32))
    with pytest.raises(TypeError, match=r"token_cast_to_fp8: x must be a floating array, got int32"):
        token_cast_to_fp8(jnp.ones((8, 8), jnp.int32))
    with pytest.raises(ValueError, match=r"token_cast_to_fp8: row_index must be an int32 \[R'\] array, got float32"):
        token_cast_to_fp8(jnp.ones((8, 8), F32), row_index=jnp.zeros(4, F32))
    with pytest.raises(ValueError, match=r"transposed_cast_to_fp8: x must be \[\.\.\., R, C\]"):
        transposed_cast_to_fp8(jnp.ones((8,), F32))
    with pytest.raises(TypeError, match=r"transposed_cast_to_fp8: x must be a floating"):
        transposed_cast_to_fp8(jnp.ones((8, 8), jnp.int32))
    with pytest.raises(ValueError, match=r"block_map must be \(block_src, block_rows\), two int32 \[nb\]"):
        transposed_cast_to_fp8(jnp.ones((8, 8), F32), block_map=(jnp.zeros(2, jnp.int32), jnp.zeros(3, jnp.int32)))
    needs = r"untransposed=True needs per_block=True, no block_map and no row_index"
    with pytest.raises(ValueError, match=needs):
        transposed_cast_to_fp8(jnp.ones((8, 8), F32), untransposed=True)
    with pytest.raises(ValueError, match=needs):
        transposed_cast_to_fp8(jnp.ones((8, 8), F32), per_block=True, untransposed=True,
                               block_map=(jnp.zeros(2, jnp.int32), jnp.zeros(2, jnp.int32)))
    with pytest.raises(ValueError, match=needs):
        transposed_cast_to_fp8(jnp.ones((8, 8), F32), per_block=True, untransposed=True,
                               row_index=jnp.zeros(2, jnp.int32))
    with pytest.raises(ValueError, match=r"row_index must be an int32 \[R'\] array, got float32 \(4,\)"):
        transposed_cast_to_fp8(jnp.ones((8, 8), F32), row_index=jnp.zeros(4, F32))
    with pytest.raises(ValueError, match=r"row_index must be an int32 \[R'\] array, got int32 \(2, 2\)"):
        transposed_cast_to_fp8(jnp.ones((8, 8), F32), row_index=jnp.zeros((2, 2), jnp.int32))
    with pytest.raises(ValueError, match=r"block_map must be"):
        transposed_cast_to_fp8(jnp.ones((8, 8), F32), block_map=(jnp.zeros((2,), jnp.float32),) * 2)
