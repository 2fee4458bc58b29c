"""Rewrites the yield hints and operand reuse flags of a cubin's FFMAs (benchmarks/NOTES.md 118).

ptxas gives every other FFMA of a promotion a yield hint, and an FFMA before a yield cannot mark its operands for
reuse, so half of the promotion's FFMAs read three vector registers, two of them from the same bank. This rewrites a
cubin (or an executable that embeds it verbatim), one of two ways:
  reuse  every register-form FFMA whose successor is a register-form FFMA with the same B register (and that does not
         write that register itself) loses its yield hint and marks its B operand for reuse
  yield  every register-form FFMA gets a yield hint and marks nothing for reuse (a warp may switch after each)
  N      (a number) in each chain of consecutive register-form FFMAs sharing a B register, every N-th and the last
         yield and mark nothing; the others do not yield and mark B for reuse (2 is ptxas's own pattern). The JIT's
         pass (ffi/sass_hints.cc) does the same, and also ends a chain where a branch lands
Nothing else changes: hints and cache flags, no instruction moves.

Encoding facts used (sm_90 SASS, 128-bit instructions, read from cuobjdump's listings): low word bits 0-11 opcode
(0x223: FFMA R, R, R, R), 12-15 predicate (7: none), 16-23 destination, 24-31 A, 32-39 B; high word bits 41-63 the
control bits: bit 45 set = no yield, bits 58-61 the reuse flags of operands A, B, C.

  python benchmarks/experiments/ffma_reuse_patch.py CUBIN [IMAGE] -o OUT [--mode reuse|yield|N] [--functions REGEX]
  python benchmarks/experiments/ffma_reuse_patch.py --cache DIR [--mode ...]   every kernel of a JIT cache
    (DG_JIT_CACHE_DIR) in place, with each entry's kernel.meta checksum rewritten to match (ffi/hash.h's hash)
"""
import argparse
import glob
import os
import re
import struct

FFMA_RRR = 0x223
NO_YIELD = 1 << 45
REUSE_B = 1 << 59
REUSE_ALL = 0xF << 58


def cache_checksum(data):
    """ffi/hash.h's hash_hex: two 64-bit FNV-1a lanes (the second over shifted, rotated bytes), each mixed."""
    mask, prime = (1 << 64) - 1, 0x100000001B3
    lo, hi = 0xCBF29CE484222325, 0x84222325CBF29CE4
    for c in data:
        lo = ((lo ^ c) * prime) & mask
        hi = ((hi ^ ((c + 0x5B) & 0xFF)) * prime) & mask
        hi = ((hi << 7) | (hi >> 57)) & mask

    def mix(x):
        x ^= x >> 30
        x = (x * 0xBF58476D1CE4E5B9) & mask
        x ^= x >> 27
        x = (x * 0x94D049BB133111EB) & mask
        return x ^ (x >> 31)

    count = len(data)
    return f"{mix(lo ^ count):016x}{mix((hi + 0x9E3779B97F4A7C15 * (count + 1)) & mask):016x}"


def text_sections(cubin):
    """(name, offset, size) of every .text.<function> section of an ELF64 cubin."""
    assert cubin[:4] == b"\x7fELF" and cubin[4] == 2, "not an ELF64 image"
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    for name_index, _, _, _, offset, size, *_ in headers:
        end = cubin.index(b"\0", names_offset + name_index)
        name = cubin[names_offset + name_index:end].decode()
        if name.startswith(".text."):
            yield name[len(".text."):], offset, size


def is_plain_ffma(lo):
    return lo & 0xFFF == FFMA_RRR and (lo >> 12) & 0xF == 7


def patch_function(code, mode):
    """The function's code with its FFMAs' hints rewritten (see the module's docstring); and how many changed."""
    words = [list(struct.unpack_from("<QQ", code, i)) for i in range(0, len(code), 16)]
    changed = 0
    if mode == "yield":
        for word in words:
            if is_plain_ffma(word[0]) and word[1] & (NO_YIELD | REUSE_ALL):
                word[1] &= ~(NO_YIELD | REUSE_ALL)
                changed += 1
        return b"".join(struct.pack("<QQ", lo, hi) for lo, hi in words), changed
    if mode.isdigit():
        period, position = int(mode), 0
        for this, following in zip(words, words[1:] + [[0, 0]]):
            if not is_plain_ffma(this[0]):
                position = 0
                continue
            b, dest = (this[0] >> 32) & 0xFF, (this[0] >> 16) & 0xFF
            chained = is_plain_ffma(following[0]) and (following[0] >> 32) & 0xFF == b and b != dest and b != 255
            if not chained and position == 0:
                continue  # in no chain: as ptxas made it
            position += 1
            if chained and position % period:
                new = (this[1] & ~REUSE_ALL) | NO_YIELD | REUSE_B
            else:
                new = this[1] & ~(NO_YIELD | REUSE_ALL)
            if not chained:
                position = 0
            changed += new != this[1]
            this[1] = new
        return b"".join(struct.pack("<QQ", lo, hi) for lo, hi in words), changed
    for this, following in zip(words, words[1:]):
        lo, hi = this
        if not (is_plain_ffma(lo) and is_plain_ffma(following[0])):
            continue
        b, dest = (lo >> 32) & 0xFF, (lo >> 16) & 0xFF
        if b != (following[0] >> 32) & 0xFF or b == dest or b == 255:  # R255 is RZ
            continue
        if hi & (NO_YIELD | REUSE_B) != NO_YIELD | REUSE_B:
            this[1] = hi | NO_YIELD | REUSE_B
            changed += 1
    return b"".join(struct.pack("<QQ", lo, hi) for lo, hi in words), changed


def patch_cubin(cubin, mode, functions):
    """The cubin with the functions matching `functions` patched; and how many FFMAs changed."""
    image, total = bytearray(cubin), 0
    for name, offset, size in text_sections(cubin):
        if re.search(functions, name):
            image[offset:offset + size], changed = patch_function(cubin[offset:offset + size], mode)
            total += changed
    return bytes(image), total


def patch_cache(root, mode, functions):
    for entry in sorted(glob.glob(os.path.join(root, "cache", "*"))):
        cubin_path, meta_path = os.path.join(entry, "kernel.cubin"), os.path.join(entry, "kernel.meta")
        cubin = open(cubin_path, "rb").read()
        meta = open(meta_path).read()
        assert f"cubin_checksum {cache_checksum(cubin)}" in meta, f"{entry}: checksum differs before patching"
        patched, changed = patch_cubin(cubin, mode, functions)
        open(cubin_path, "wb").write(patched)
        open(meta_path, "w").write(meta.replace(cache_checksum(cubin), cache_checksum(patched)))
        print(f"{os.path.basename(entry)[:60]}: {changed} FFMAs changed")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cubin", nargs="?")
    parser.add_argument("image", nargs="?", help="a file that embeds the cubin verbatim (default: the cubin)")
    parser.add_argument("-o", "--output")
    parser.add_argument("--cache", help="patch every kernel of this JIT cache directory in place")
    parser.add_argument("--mode", default="reuse", help="reuse, yield or a period (see above)")
    parser.add_argument("--functions", default=".*", help="regex on the mangled names to patch")
    args = parser.parse_args()
    if args.cache:
        return patch_cache(args.cache, args.mode, args.functions)
    assert args.cubin and args.output, "CUBIN and -o, or --cache"
    cubin = open(args.cubin, "rb").read()
    image = bytearray(open(args.image or args.cubin, "rb").read())
    base = image.find(cubin)
    assert base >= 0, "the image does not embed the cubin verbatim"
    assert image.find(cubin, base + 1) < 0, "the image embeds the cubin twice"
    total = 0
    for name, offset, size in text_sections(cubin):
        if not re.search(args.functions, name):
            continue
        code, changed = patch_function(cubin[offset:offset + size], args.mode)
        image[base + offset:base + offset + size] = code
        if changed:
            print(f"{name}: {changed} FFMAs changed")
        total += changed
    open(args.output, "wb").write(image)
    print(f"{total} FFMAs changed; wrote {args.output}")


if __name__ == "__main__":
    main()
