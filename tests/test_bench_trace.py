"""The benchmark's split of a profiler trace into calls (bench.per_call_us) and its wall time per call
(bench.wall_us_per_call), on synthetic kernel events and a fake clock: no GPU."""

import types

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


def test_wall_time_per_call_is_the_median_of_its_loops(monkeypatch):
    """One slow loop (a host pause) does not move the reported wall time per call."""
    clock = iter([0.0, 0.010, 1.0, 1.500, 2.0, 2.012])  # loops of 10 ms, 500 ms and 12 ms over 10 calls each
    monkeypatch.setattr(bench, "time", types.SimpleNamespace(perf_counter=lambda: next(clock)))  # bench's clock only
    calls = []
    us = bench.wall_us_per_call(lambda *args: calls.append(args) or 0.0, (1, 2), iters=10, rounds=3)
    assert len(calls) == 30 and calls[0] == (1, 2)
    assert us == pytest.approx(1200.0)  # the 12 ms loop's 1.2 ms per call, the middle of 1.0, 1.2 and 50
