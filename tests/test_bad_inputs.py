"""A generated matrix of bad inputs to every public function that takes arrays.

For each argument of each function, every kind of wrong value (dtype, rank, each dimension off by one, an empty
dimension, a Python scalar, None, a NumPy array of a wrong dtype, a traced value where a static one is needed) and
each mismatch between arguments (K, N, G) must raise TypeError or ValueError when the function is traced, with a
message that starts with "<function>: <argument>" and says what was expected. Every case runs eagerly and under
jax.jit, with the primitives' bind replaced by a trap: an error that surfaced only inside a primitive (or a kernel)
fails the test. tests/test_validation.py holds the hand-written cases (layouts, out_dtype, accepted inputs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_deepgemm as dg
from jax_deepgemm import primitives

M, N, K, G = 3, 130, 200, 2
KB, NB = 2, 2  # ceil(K / 128), ceil(N / 128)
KK = 256  # k-grouped K (a multiple of 128)
E4M3, F32 = jnp.float8_e4m3fn, jnp.float32


def ones(shape, dtype=F32):
    """A JAX array of ones, built on the host (jnp.ones would compile one XLA program per shape and dtype)."""
    return jnp.asarray(np.ones(shape, dtype))


def zeros(shape, dtype=F32):
    return jnp.asarray(np.zeros(shape, dtype))


@dataclass(frozen=True)
class Arg:
    """One argument: its kind decides the wrong values tried (see `mutations`), `shape`/`value` its valid value."""

    kind: str  # fp8 | scale | index | float | hint | flag | c
    shape: tuple = ()
    value: object = None
    any_length: bool = False  # index: any length is valid (k-grouped group_sizes)
    any_rank: bool = False  # float: any rank >= 1 is valid (fp8_dot's x); fp8: any rank >= 2 (dequantize)
    allow_empty: bool = False  # float, fp8: empty dimensions are valid (the quantizers and dequantize)
    optional: bool = False  # None is valid
    allow_fp8: bool = False  # float: FP8 is valid (the quantizers re-quantize it)
    shape_free: bool = False  # scale: any [MN, kb] / [G, MN, kb] shape is valid (layout helper)
    minimum: int = 0  # hint: smallest valid value

    def valid(self):
        if self.kind in ("hint", "flag"):
            return self.value
        dtype = {"fp8": E4M3, "index": jnp.int32}.get(self.kind, F32)
        return ones(self.shape, dtype) if self.kind != "index" else zeros(self.shape, dtype)


@dataclass(frozen=True)
class Fn:
    name: str
    call: Callable[[dict], object]
    args: dict[str, Arg]
    # ({argument: wrong value}, exception, regex): mismatches between arguments, which no single argument owns
    mismatches: list = field(default_factory=list)


def fp8(*shape):
    return Arg("fp8", shape)


def scale(*shape, **kw):
    return Arg("scale", shape, **kw)


def pair(v, name):
    return v[f"{name}[0]"], v[f"{name}[1]"]


def dense(name, a_shape, b_shape):
    f = getattr(dg, name)
    return Fn(name, lambda v: f(pair(v, "a"), pair(v, "b"), c=v["c"]),
              {"a[0]": fp8(*a_shape), "a[1]": scale(M, KB), "b[0]": fp8(*b_shape), "b[1]": scale(NB, KB),
               "c": Arg("c", (M, N))},
              [({"b[0]": ones(tuple(d + (d == K) for d in b_shape), E4M3)}, ValueError, r"K mismatch.*K=200.*K=201")])


FUNCTIONS = [
    dense("fp8_gemm_nt", (M, K), (N, K)),
    dense("fp8_gemm_nn", (M, K), (K, N)),
    dense("fp8_gemm_tn", (K, M), (K, N)),
    dense("fp8_gemm_tt", (K, M), (N, K)),
    Fn("m_grouped_fp8_gemm_nt_contiguous", lambda v: dg.m_grouped_fp8_gemm_nt_contiguous(
        pair(v, "a"), pair(v, "b"), v["m_indices"]),
       {"a[0]": fp8(M, K), "a[1]": scale(M, KB), "b[0]": fp8(G, N, K), "b[1]": scale(G, NB, KB),
        "m_indices": Arg("index", (M,))},
       [({"b[0]": ones((G, N, K + 1), E4M3)}, ValueError, r"K mismatch.*K=200.*K=201")]),
    Fn("fp8_grouped_gemm_nt", lambda v: dg.fp8_grouped_gemm_nt(pair(v, "a"), pair(v, "b"), v["group_sizes"]),
       {"a[0]": fp8(M, K), "a[1]": scale(M, KB), "b[0]": fp8(G, N, K), "b[1]": scale(G, NB, KB),
        "group_sizes": Arg("index", (G,))},
       [({"b[0]": ones((G, N, K - 1), E4M3)}, ValueError, r"K mismatch.*K=200.*K=199")]),
    Fn("m_grouped_fp8_gemm_nt_masked", lambda v: dg.m_grouped_fp8_gemm_nt_masked(
        pair(v, "a"), pair(v, "b"), v["masked_m"], v["expected_m"]),
       {"a[0]": fp8(G, M, K), "a[1]": scale(G, M, KB), "b[0]": fp8(G, N, K), "b[1]": scale(G, NB, KB),
        "masked_m": Arg("index", (G,)), "expected_m": Arg("hint", value=2)},
       [({"b[0]": ones((G + 1, N, K), E4M3), "b[1]": ones((G + 1, NB, KB))}, ValueError,
         r"group count mismatch.*G=2.*G=3"),
        ({"b[0]": ones((G, N, K + 1), E4M3)}, ValueError, r"K mismatch.*K=200.*K=201")]),
    Fn("k_grouped_fp8_gemm_nt_contiguous", lambda v: dg.k_grouped_fp8_gemm_nt_contiguous(
        pair(v, "a"), pair(v, "b"), v["group_sizes"], c=v["c"]),
       {"a[0]": fp8(M, KK), "a[1]": scale(M, 2), "b[0]": fp8(N, KK), "b[1]": scale(N, 2),
        "group_sizes": Arg("index", (G,), any_length=True), "c": Arg("c", (G, M, N))},
       [({"b[0]": ones((N, KK + 128), E4M3)}, ValueError, r"K mismatch.*K=256.*K=384"),
        ({"a[0]": ones((M, K), E4M3), "b[0]": ones((N, K), E4M3)}, ValueError,
         r"K must be a multiple of 128.*K=200")]),
    Fn("fp8_dot", lambda v: dg.fp8_dot(v["x"], v["w"]),  # (empty dimensions: x @ w's result, test_differentiable)
       {"x": Arg("float", (M, K), any_rank=True, allow_empty=True), "w": Arg("float", (K, N), allow_empty=True)},
       [({"w": ones((K + 1, N))}, ValueError, r"K mismatch.*K=200.*K=201")]),
    Fn("fp8_dot", lambda v: dg.fp8_dot(v["x"], pair(v, "w")),
       {"w[0]": fp8(N, K), "w[1]": scale(NB, KB), "x": Arg("float", (M, K), any_rank=True, allow_empty=True)},
       [({"w[0]": ones((N, K + 1), E4M3)}, ValueError, r"K mismatch.*K=200.*K=201")]),
    Fn("ragged_dot", lambda v: dg.ragged_dot(v["lhs"], v["rhs"], v["group_sizes"], group_offset=v["group_offset"]),
       {"lhs": Arg("float", (M, K), allow_empty=True), "rhs": Arg("float", (G, K, N), allow_empty=True),
        "group_sizes": Arg("index", (G,)),
        "group_offset": Arg("index", (1,), optional=True)},
       [({"rhs": ones((G, N, K))}, ValueError, r"K mismatch.*K=200.*K=130")]),
    Fn("per_token_cast_to_fp8", lambda v: dg.per_token_cast_to_fp8(v["x"], use_ue8m0=v["use_ue8m0"]),
       {"x": Arg("float", (M, K), allow_empty=True, allow_fp8=True), "use_ue8m0": Arg("flag", value=True)}),
    Fn("per_block_cast_to_fp8", lambda v: dg.per_block_cast_to_fp8(v["x"], use_ue8m0=v["use_ue8m0"]),
       {"x": Arg("float", (N, K), allow_empty=True, allow_fp8=True), "use_ue8m0": Arg("flag", value=False)}),
    Fn("dequantize", lambda v: dg.dequantize(pair(v, "pair"), block=(1, 128)),
       {"pair[0]": Arg("fp8", (M, K), any_rank=True, allow_empty=True), "pair[1]": scale(M, KB)}),
    Fn("get_mn_major_tma_aligned_tensor", lambda v: dg.get_mn_major_tma_aligned_tensor(v["scale"]),
       {"scale": scale(M, KB, shape_free=True)}),
    Fn("transform_sf_into_required_layout", lambda v: dg.transform_sf_into_required_layout(
        v["sf"], v["mn"], v["k"], (1, 128, 128), num_groups=v["num_groups"], is_sfa=v["is_sfa"]),
       {"sf": scale(1, M, KB), "mn": Arg("hint", value=M, minimum=1), "k": Arg("hint", value=K, minimum=1),
        "num_groups": Arg("hint", value=1, minimum=1, optional=True), "is_sfa": Arg("flag", value=True)}),
    Fn("get_tma_aligned_size", lambda v: dg.get_tma_aligned_size(v["x"], v["element_size"]),
       {"x": Arg("hint", value=5), "element_size": Arg("hint", value=4, minimum=1)}),
]


# ---------------------------------------------------------------- the wrong values

def _dims_off_by_one(shape):
    for i, d in enumerate(shape):
        for delta in (1, -1):
            yield f"dim{i}{delta:+d}", shape[:i] + (d + delta,) + shape[i + 1:]


def mutations(arg: Arg):
    """(case id, wrong value, exception type, regex the message must match, modes) for one argument."""
    s, eager_and_jit = arg.shape, ("eager", "jit")

    def case(cid, value, exc, regex, modes=eager_and_jit):
        return cid, value, exc, regex, modes

    common = [case("python-float", 1.0, TypeError, r"must be an array, got float"),
              case("none", None, TypeError, r"must be an array, got NoneType")]
    if arg.kind == "fp8":
        want = r"must be float8_e4m3fn or float8_e5m2, got "
        yield from [case(f"dtype-{d}", ones(s, d), TypeError, want + jnp.dtype(d).name)
                    for d in (jnp.float32, jnp.bfloat16, jnp.int8, jnp.float8_e4m3fnuz)]
        yield case("numpy-int64", np.ones(s, np.int64), TypeError, want + "int64")
        if arg.any_rank:
            yield case("1-D", ones(s[-1:], E4M3), ValueError, r"rank >= 2\), got shape")
        else:
            yield case("rank+1", ones((1,) + s, E4M3), ValueError, rf"must be {len(s)}-D, got shape")
            yield case("rank-1", ones(s[1:], E4M3), ValueError, rf"must be {len(s)}-D, got shape")
        for i in range(0 if arg.allow_empty else len(s)):
            yield case(f"empty-dim{i}", ones(s[:i] + (0,) + s[i + 1:], E4M3), ValueError,
                       r"empty dimension.*must be >= 1")
        yield from common
    elif arg.kind == "scale":
        want = r"must be float32 or float8_e8m0fnu, got "
        yield from [case(f"dtype-{d}", ones(s, d), TypeError, want + jnp.dtype(d).name)
                    for d in (jnp.int32, jnp.bfloat16, jnp.float16, jnp.bool_, E4M3)]
        yield case("numpy-int64", np.ones(s, np.int64), TypeError, want + "int64")
        if arg.shape_free:
            yield case("rank-1", ones(s[1:]), ValueError, r"must be \[MN, kb\] or \[G, MN, kb\]")
            yield case("rank+2", ones((1, 1) + s), ValueError, r"must be \[MN, kb\] or \[G, MN, kb\]")
        else:
            expected = re.escape(f"expected {s}")
            for cid, shape in [*_dims_off_by_one(s), ("rank+1", (1,) + s), ("rank-1", s[1:])]:
                yield case(cid, ones(shape), ValueError, rf"has shape {re.escape(str(shape))}; {expected}")
        yield from common
    elif arg.kind == "index":
        want = r"must be an integer array \(int32\), got "
        yield from [case(f"dtype-{d}", zeros(s, d), TypeError, want + jnp.dtype(d).name)
                    for d in (jnp.float32, jnp.bool_, jnp.bfloat16)]
        yield case("numpy-float64", np.zeros(s), TypeError, want + "float64")
        yield case("ragged-list", [[0], [0, 1]], TypeError, want + "list")
        yield case("huge-python-ints", [2**70] * s[0], TypeError, want + "list of objects")
        yield case("2-D", zeros(s + (1,), jnp.int32), ValueError, r"has shape \(\d+, 1\); expected")
        if arg.any_length:
            yield case("no-groups", zeros((0,), jnp.int32), ValueError, r"at least one group")
        else:
            for n in (s[0] + 1, s[0] - 1):
                yield case(f"length-{n}", zeros((n,), jnp.int32), ValueError,
                           re.escape(f"has shape {(n,)}; expected {s}"))
        yield case("python-int", 0, TypeError, r"must be an array, got int")
        if not arg.optional:
            yield case("none", None, TypeError, r"must be an array, got NoneType")
    elif arg.kind == "float":
        want = r"must be float32/bfloat16/float16" + ("/float8_e4m3fn/float8_e5m2" if arg.allow_fp8 else "") + ", got "
        # (FP8 and FP4 encodings the kernels do not read are refused even where e4m3fn / e5m2 are taken)
        narrow = (jnp.float8_e4m3fnuz, jnp.float8_e4m3b11fnuz, jnp.float8_e4m3, jnp.float8_e3m4, jnp.float4_e2m1fn,
                  jnp.float8_e8m0fnu)
        bad = (jnp.int32, jnp.bool_) + narrow + (() if arg.allow_fp8 else (E4M3,))
        yield from [case(f"dtype-{jnp.dtype(d).name}", ones(s, d), TypeError, want + jnp.dtype(d).name)
                    for d in bad]
        yield case("numpy-int64", np.ones(s, np.int64), TypeError, want + "int64")
        if arg.any_rank:
            yield case("0-D", ones(()), ValueError, r"must be \[\.\.\., K\], got a scalar")
        else:
            yield case("rank+1", ones((1,) + s), ValueError, rf"must be {len(s)}-D")
            yield case("rank-1", ones(s[1:]), ValueError, rf"must be {len(s)}-D")
        if not arg.allow_empty:
            for i in range(len(s)):
                yield case(f"empty-dim{i}", ones(s[:i] + (0,) + s[i + 1:]), ValueError,
                           r"empty dimension.*must be >= 1")
        yield from common
    elif arg.kind == "c":
        yield case("dtype-int32", ones(s, jnp.int32), TypeError, r"must be float32, bfloat16 or float16, got int32")
        yield case("numpy-int64", np.ones(s, np.int64), TypeError, r"must be float32, bfloat16 or float16, got int64")
        for cid, shape in [*_dims_off_by_one(s), ("transposed", s[:-2] + s[-2:][::-1])]:
            yield case(cid, ones(shape), ValueError,
                       rf"has shape {re.escape(str(shape))}; expected {re.escape(str(s))}")
        yield case("python-float", 1.0, TypeError, r"must be an array, got float")
    elif arg.kind == "hint":
        want = r"must be a static Python int, got "
        yield case("float", arg.value + 0.5, TypeError, want + "float")
        yield case("bool", True, TypeError, want + "bool")
        yield case("string", "2", TypeError, want + "str")
        if not arg.optional:
            yield case("none", None, TypeError, want + "NoneType")
        yield case("below-minimum", arg.minimum - 1, ValueError, rf"must be >= {arg.minimum}, got {arg.minimum - 1}")
        yield case("traced", jnp.asarray(arg.value), TypeError, want + "a traced value", modes=("jit",))
    elif arg.kind == "flag":
        want = r"must be a static Python bool, got "
        yield case("string", "yes", TypeError, want + "str")
        yield case("none", None, TypeError, want + "NoneType")
        yield case("traced", jnp.asarray(True), TypeError, want + "a traced value", modes=("jit",))
    else:
        raise AssertionError(arg.kind)


def _fn_id(fn: Fn) -> str:
    return fn.name + ("-pair" if "w[0]" in fn.args else "")


CASES = []
for _fn in FUNCTIONS:
    for _name, _arg in _fn.args.items():
        for _cid, _value, _exc, _regex, _modes in mutations(_arg):
            for _mode in _modes:
                CASES.append(pytest.param(_fn, _name, _value, _exc, _regex, _mode,
                                          id=f"{_fn_id(_fn)}-{_name}-{_cid}-{_mode}"))
    for _i, (_values, _exc, _regex) in enumerate(_fn.mismatches):
        for _mode in ("eager", "jit"):
            CASES.append(pytest.param(_fn, None, _values, _exc, _regex, _mode,
                                      id=f"{_fn_id(_fn)}-mismatch{_i}-{'+'.join(_values)}-{_mode}"))


def valid_values(fn: Fn) -> dict:
    return {name: arg.valid() for name, arg in fn.args.items()}


def run(fn: Fn, values: dict, mode: str):
    """Eagerly, or under jax.jit with every JAX array traced (NumPy arrays and Python values stay static)."""
    if mode == "eager":
        return fn.call(values)
    traced = {k: v for k, v in values.items() if isinstance(v, jax.Array)}
    static = {k: v for k, v in values.items() if k not in traced}
    return jax.jit(lambda t: fn.call({**static, **t}))(traced)


@pytest.fixture
def trap(monkeypatch):
    """No bad input may get as far as a primitive (and so a kernel)."""

    def bind(self, *args, **kwargs):
        raise AssertionError(f"{self.primitive} was bound: the input reached a primitive unchecked")

    monkeypatch.setattr(primitives.Family, "bind", bind)


@pytest.mark.parametrize("fn,name,value,exc,regex,mode", CASES)
def test_bad_input(fn, name, value, exc, regex, mode, trap):
    values = valid_values(fn)
    values.update(value if name is None else {name: value})
    with pytest.raises(exc) as info:
        run(fn, values, mode)
    message = str(info.value)
    prefix = f"{fn.name}: " + ("" if name is None else name)
    assert message.startswith(prefix), f"the message does not start with {prefix!r}: {message}"
    assert re.search(regex, message), f"{regex!r} not found in: {message}"


@pytest.mark.parametrize("fn", FUNCTIONS, ids=_fn_id)
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_valid_values_pass(fn, mode):
    """The control: the valid values the matrix starts from are accepted, so each error above is the mutation's
    (traced only, with concrete or traced arrays: what the functions compute is tested elsewhere)."""
    values = valid_values(fn)
    traced = {k: v for k, v in values.items() if isinstance(v, jax.Array) and mode == "jit"}
    static = {k: v for k, v in values.items() if k not in traced}
    jax.eval_shape(lambda t: fn.call({**static, **t}), traced)


def test_every_public_array_function_is_in_the_matrix():
    covered = {fn.name for fn in FUNCTIONS}
    # No array arguments: nothing to mutate. set_num_sms has its cases in test_validation.py; ceil_to_ue8m0 is
    # elementwise math on any real array; calc_diff is checked below; the export helpers take no arguments; the
    # checkpoint names and policy are not functions of arrays; warmup takes a program (test_warmup.py).
    exempt = {"get_m_alignment_for_contiguous_layout", "get_num_sms", "set_num_sms", "ceil_to_ue8m0", "calc_diff",
              "export_disabled_checks", "register_ffi_targets", "CHECKPOINT_NAMES", "fp8_dots_saveable", "warmup"}
    assert set(dg.__all__) - exempt == covered


@pytest.mark.parametrize("x,y", [(np.ones(3), np.ones(4)), (np.ones((3, 1)), np.ones(4)), (np.ones(()), np.ones(2))])
def test_calc_diff_shape_mismatch(x, y):
    """Broadcasting would compare the wrong elements and return a plausible number."""
    with pytest.raises(ValueError, match=r"calc_diff: x has shape .* and y has shape .*; they must be equal"):
        dg.calc_diff(x, y)
