"""The benchmark's split of a profiler trace into calls (bench.per_call_us), on synthetic kernel events: no GPU."""

import pytest

from jax_deepgemm import bench

FLUSH = {"flush_a", "flush_b"}


def events(*calls):
    """(name, start_ns, end_ns) in order: each call is a flush of two kernels, then (name, duration_us) kernels."""
    out, t = [], 0
    for kernels in calls:
        for name, us in [("flush_a", 5.0), ("flush_b", 1.0), *kernels]:
            out.append((name, t, t + int(us * 1000)))
            t += int(us * 1000) + 100
    return out


def test_each_call_is_the_kernels_between_two_flushes():
    ev = events([("jdg_gemm", 10.0)], [("jdg_gemm", 12.0), ("other", 3.0)], [("jdg_gemm", 11.0)])
    assert bench.per_call_us(ev, FLUSH, None, 3) == [10.0, 15.0, 11.0]
    assert bench.per_call_us(ev, FLUSH, "jdg_", 3) == [10.0, 12.0, 11.0]


def test_too_few_calls_is_an_error():
    with pytest.raises(RuntimeError, match="found 1 of 4 calls"):
        bench.per_call_us(events([("jdg_gemm", 10.0)]), FLUSH, None, 4)


def test_a_timed_kernel_named_like_the_flush_is_an_error_not_a_number():
    ev = events([("jdg_gemm", 10.0), ("flush_b", 2.0), ("jdg_gemm", 4.0)], [("jdg_gemm", 10.0)])
    with pytest.raises(RuntimeError, match="share a name with the flush"):
        bench.per_call_us(ev, FLUSH, None, 2)
