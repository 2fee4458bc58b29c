"""The JIT's FFMA hint pass (ffi/sass_hints.h): which FFMAs of a cubin it changes and how, on hand-made ELF images
with known instructions, its refusal of malformed images, and its place in the JIT (a real kernel compiled with and
without it, DG_JIT_FFMA_YIELD_PERIOD in the cache key). Runs without a GPU; the real kernel needs NVRTC."""

from __future__ import annotations

import glob
import struct

import pytest
from jit_support import (  # noqa: F401  (isolated and stub_dir are fixtures)
    _C,
    CUDA_DIR,
    PROBLEM,
    isolated,
    needs_nvrtc,
    needs_real_kernel,
    nvrtc_candidates,
    stub_dir,
)

NO_YIELD, REUSE_B, REUSE_ALL = 1 << 45, 1 << 59, 0xF << 58
PTXAS_HI = 0x000FE20000000000  # a high word as ptxas writes an FFMA's (stall 1, no barriers), yield bit set


def ffma(dest, a, b, c, hi=PTXAS_HI, predicate=7):
    return (0x223 | predicate << 12 | dest << 16 | a << 24 | b << 32, hi | c)


def bra(offset_bytes):
    """BRA to `offset_bytes` past the next instruction (the encoding the pass decodes)."""
    words = offset_bytes // 4
    lo = 0x947 | 7 << 12 | (words & 0xFF) << 16 | ((words >> 8) & ((1 << 30) - 1)) << 34
    return (lo, PTXAS_HI | ((words >> 38) & 0x3FFFF))


NOP = (0x918 | 7 << 12, PTXAS_HI)


def elf(sections: dict[str, list[tuple[int, int]]]) -> bytes:
    """A minimal ELF64 image: the null section, the name table, and one PROGBITS section per entry."""
    names = b"\0.shstrtab\0" + b"".join(n.encode() + b"\0" for n in sections)
    bodies = [b"".join(struct.pack("<QQ", lo, hi) for lo, hi in code) for code in sections.values()]
    offset, blobs, headers = 64, [], [bytes(64)]
    headers.append(struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, offset, len(names), 0, 0, 1, 0))
    blobs.append(names)
    offset += len(names)
    name_at = 11
    for name, body in zip(sections, bodies):
        pad = -offset % 16
        blobs.append(bytes(pad))
        offset += pad
        headers.append(struct.pack("<IIQQQQIIQQ", name_at, 1, 6, 0, offset, len(body), 0, 0, 16, 0))
        name_at += len(name) + 1
        blobs.append(body)
        offset += len(body)
    shoff = offset + (-offset % 8)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(headers), 1)
    body = b"".join(blobs)
    return header + body + bytes(shoff - offset) + b"".join(headers)


def code_of(image: bytes, name: str) -> list[tuple[int, int]]:
    """The instructions of section `name` in an image made by elf() (same layout after the rewrite)."""
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shnum, = struct.unpack_from("<H", image, 0x3C)
    names_offset, = struct.unpack_from("<Q", image, shoff + 64 + 0x18)
    for i in range(2, shnum):
        name_at, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", image, shoff + 64 * i)
        end = image.index(b"\0", names_offset + name_at)
        if image[names_offset + name_at:end].decode() == name:
            return [struct.unpack_from("<QQ", image, offset + j) for j in range(0, size, 16)]
    raise KeyError(name)


def hints(word):
    hi = word[1]
    return ("keep" if hi & NO_YIELD and hi & REUSE_B and not hi & (REUSE_ALL & ~REUSE_B) else
            "yield" if not hi & (NO_YIELD | REUSE_ALL) else "other")


def test_a_chain_keeps_its_scale_and_yields_every_period():
    chain = [ffma(100 + i, 20 + i, 7, 100 + i) for i in range(10)]
    image = elf({".text.k": chain})
    out, changed = _C.rewrite_ffma_hints(image, 4)
    code = code_of(out, ".text.k")
    assert [hints(w) for w in code] == ["keep"] * 3 + ["yield"] + ["keep"] * 3 + ["yield", "keep", "yield"]
    assert [w[0] for w in code] == [w[0] for w in chain]  # operands and opcodes untouched
    assert all(w[1] & ~(NO_YIELD | REUSE_ALL) == c[1] & ~(NO_YIELD | REUSE_ALL) for w, c in zip(code, chain))
    assert changed == sum(w != c for w, c in zip(code, chain))
    assert _C.rewrite_ffma_hints(image, 1)[0] != out
    assert [hints(w) for w in code_of(_C.rewrite_ffma_hints(image, 1)[0], ".text.k")] == ["yield"] * 10


def test_what_ends_or_skips_a_chain():
    lone = ffma(50, 51, 9, 50, hi=PTXAS_HI | REUSE_ALL)  # strange flags, but in no chain: left as ptxas made it
    code = [
        ffma(100, 20, 7, 100), ffma(101, 21, 7, 101),  # chain over B = R7 ...
        ffma(102, 22, 6, 102), ffma(103, 23, 6, 103),  # ... then B = R6: the first chain ends at 101
        NOP, lone, NOP,
        ffma(7, 24, 7, 7), ffma(104, 25, 7, 104),  # writes its own B: no reuse into the next
        ffma(105, 26, 255, 105), ffma(106, 27, 255, 106),  # RZ is no register
        ffma(107, 28, 5, 107, predicate=0), ffma(108, 29, 5, 108),  # predicated: not a plain FFMA
        ffma(110, 30, 4, 110), ffma(111, 31, 4, 111), ffma(112, 32, 4, 112),  # a branch lands on 112
        bra(-16 * 2),
    ]
    out = code_of(_C.rewrite_ffma_hints(elf({".text.k": code}), 8)[0], ".text.k")
    assert [hints(w) for w in out[:4]] == ["keep", "yield", "keep", "yield"]
    assert out[5] == lone and out[4] == NOP
    assert out[7:13] == code[7:13]
    assert [hints(w) for w in out[13:15]] == ["keep", "yield"]  # the branch target after 14 ends the chain
    assert out[15:] == code[15:]


def test_sections_with_unknown_control_flow_and_other_sections_stay():
    chain = [ffma(100 + i, 20 + i, 7, 100 + i) for i in range(6)]
    brx = (0x949 | 7 << 12, PTXAS_HI)  # an indirect branch: its targets are unknown
    image = elf({".text.a": chain + [brx], ".nv.info.a": chain, ".text.b": chain})
    out, _ = _C.rewrite_ffma_hints(image, 4)
    assert code_of(out, ".text.a") == chain + [brx]
    assert code_of(out, ".nv.info.a") == chain
    assert code_of(out, ".text.b") != chain
    assert len(out) == len(image)


def test_malformed_images_raise():
    image = elf({".text.k": [ffma(100, 20, 7, 100)] * 4})
    for bad in (b"", b"hello", image[:40], image[:100], b"\x7fELF" + bytes([1, 1]) + image[6:]):
        with pytest.raises(RuntimeError, match="cubin"):
            _C.rewrite_ffma_hints(bad, 4)
    shoff, = struct.unpack_from("<Q", image, 0x28)
    past_end = bytearray(image)
    struct.pack_into("<Q", past_end, shoff + 2 * 64 + 0x20, 1 << 40)  # .text.k's size
    with pytest.raises(RuntimeError, match="past the image's end"):
        _C.rewrite_ffma_hints(bytes(past_end), 4)
    with pytest.raises(ValueError, match="period"):
        _C.rewrite_ffma_hints(image, 0)


@needs_nvrtc
def test_period_setting_is_checked(stub_dir, monkeypatch):
    _C.configure(str(stub_dir), nvrtc_candidates())
    for bad in ("x", "-1", "100"):
        monkeypatch.setenv("DG_JIT_FFMA_YIELD_PERIOD", bad)
        with pytest.raises(ValueError, match="DG_JIT_FFMA_YIELD_PERIOD"):
            _C.compile_fp8_gemm(**PROBLEM)


@needs_nvrtc
@needs_real_kernel
def test_real_kernel_gets_the_pass(tmp_path, monkeypatch):
    """A 256 x 128 kernel compiled with the default period is the one compiled without the pass, rewritten; the period
    is in the cache key; and the rewrite kept most of the promotion's FFMAs' scales for reuse."""
    _C.configure(str(CUDA_DIR), nvrtc_candidates())
    problem = dict(arch="sm_90a", m=4096, n=6144, k=2048, num_sms=132)  # (no other test compiles it: memory cache)

    def compiled(period):
        if period is None:
            monkeypatch.delenv("DG_JIT_FFMA_YIELD_PERIOD", raising=False)
        else:
            monkeypatch.setenv("DG_JIT_FFMA_YIELD_PERIOD", period)
        r = _C.compile_fp8_gemm(**problem)
        path, = glob.glob(str(tmp_path / "jit_cache" / "cache" / f"{r['kernel']}.{r['digest']}" / "kernel.cubin"))
        return r, open(path, "rb").read()

    monkeypatch.setenv("DG_JIT_CACHE_DIR", str(tmp_path / "jit_cache"))
    raw_r, raw = compiled("0")
    default_r, default = compiled(None)
    assert default_r["digest"] != raw_r["digest"] and default_r["kernel"] == raw_r["kernel"]
    rewritten, changed = _C.rewrite_ffma_hints(raw, 8)
    assert rewritten == default and changed > 100
    assert compiled("8")[0]["digest"] == default_r["digest"]
