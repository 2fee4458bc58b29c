"""A model of one warp's register epilogue on a 128-wide tile: which (row, column) each lane's register holds after
the wgmma fragment, to_store_layout (fp8_gemm_epilogue.cuh) and the extra exchanges of store_wave_bf16x8 (lane ^ 2,
16-byte bf16 stores), the f32 line stores as first written (store_wave_f32_lines, exchanging inside the store loop:
partner lane ^ 4, or ^ 16 in kgrouped_f32_lines16.patch: 4 rows x 128 bytes) and to_line_layout, which replaced it
(c_lines.patch: the same cells, exchanged in place; its slots stored and C loaded there), and that their stores write every cell of the warp's 16 x 128 block exactly once with its own value.

    python3 benchmarks/experiments/store_layout_model.py
"""
NCH = 16  # 128-wide tile: 16 chunks of 8 columns
def fragment():
    # out[l][4c + k] = (row, col) held by lane l (rows relative to the warp's 16)
    regs = []
    for l in range(32):
        o = [None] * (4 * NCH)
        for c in range(NCH):
            col = 8 * c + 2 * (l % 4)
            o[4 * c + 0] = (l // 4, col); o[4 * c + 1] = (l // 4, col + 1)
            o[4 * c + 2] = (l // 4 + 8, col); o[4 * c + 3] = (l // 4 + 8, col + 1)
        regs.append(o)
    return regs
def swap(regs, new, ia, ib, mask):
    # one shfl.xor by `mask`: lanes with `mask` set keep register ib and take their partner's ia, the others the reverse
    send = [regs[l][ia] if (l & mask) else regs[l][ib] for l in range(32)]
    for l in range(32):
        if l & mask: new[l][ia] = send[l ^ mask]
        else: new[l][ib] = send[l ^ mask]
def to_store_layout(regs):
    new = [list(o) for o in regs]
    for p in range(NCH // 2):
        for h in range(2):
            for i in range(2):
                swap(regs, new, 8 * p + 2 * h + i, 8 * p + 4 + 2 * h + i, 1)
    return new
def store_col(n0, p, lane): return n0 + 16 * p + 8 * (lane & 1) + 2 * (lane & 2)
def check_store_layout(regs):
    # store_quad(row0 + 8h, store_col(p), out[8p+2h], out[8p+2h+1], out[8p+4+2h], out[8p+4+2h+1])
    for l in range(32):
        for p in range(NCH // 2):
            for h in range(2):
                vals = [regs[l][8*p+2*h], regs[l][8*p+2*h+1], regs[l][8*p+4+2*h], regs[l][8*p+4+2*h+1]]
                col = store_col(0, p, l)
                assert vals == [(l // 4 + 8 * h, col + e) for e in range(4)], (l, p, h, vals, col)
def bf16x8(regs):
    written = {}
    for q in range(NCH // 4):
        mine = {}
        for l in range(32):
            for j in range(2):
                for h in range(2):
                    i = 8 * (2 * q + j) + 2 * h
                    mine[l, j, h] = [regs[l][i], regs[l][i+1], regs[l][i+4], regs[l][i+5]]  # two packed words
        for h in range(2):
            send = {l: (mine[l, 0, h] if (l & 2) else mine[l, 1, h]) for l in range(32)}
            for l in range(32):
                upper = bool(l & 2)
                got = send[l ^ 2]
                kept = mine[l, 1, h] if upper else mine[l, 0, h]
                v = got + kept if upper else kept + got
                r = l // 4 + 8 * h
                c = 32 * q + 16 * (1 if upper else 0) + 8 * (l & 1)
                for e in range(8):
                    key = (r, c + e); assert key not in written; written[key] = v[e]
    return written
def f32_lines(regs, partner):
    written, step = {}, partner // 4
    for j in range(NCH // 4):
        for h in range(2):
            def pair(p):  # this lane's four values of chunk pair p, row half h
                return {l: [regs[l][8 * p + 2 * h + e] for e in (0, 1, 4, 5)] for l in range(32)}
            p0, p1 = pair(2 * j), pair(2 * j + 1)
            send = {l: (p0[l] if (l & partner) else p1[l]) for l in range(32)}
            for l in range(32):
                upper = bool(l & partner)
                got = send[l ^ partner]
                first = got if upper else p0[l]
                second = p1[l] if upper else got
                r = l // 4 + 8 * h
                lower_row = r - step if upper else r
                col = store_col(0, 2 * j + 1 if upper else 2 * j, l)
                for rr, vals in ((lower_row, first), (lower_row + step, second)):
                    for e in range(4):
                        key = (rr, col + e); assert key not in written, key; written[key] = vals[e]
    return written
def to_line_layout(regs):
    # c_lines.patch's in-place exchange (lane ^ 4), then its slot_row / slot_col: the same cells as f32_lines(regs, 4)
    new = [list(o) for o in regs]
    for j in range(NCH // 4):
        for h in range(2):
            for e in (0, 1, 4, 5):
                swap(regs, new, 8 * (2 * j) + 2 * h + e, 8 * (2 * j + 1) + 2 * h + e, 4)
    return new
def line_slots(regs):
    written = {}
    lines = to_line_layout(regs)
    for l in range(32):
        for p in range(NCH // 2):
            for h in range(2):
                odd = (l >> 2) & 1
                r = l // 4 + 8 * h - odd + (p & 1)
                col = store_col(0, (p & ~1) + odd, l)
                vals = [lines[l][8*p+2*h], lines[l][8*p+2*h+1], lines[l][8*p+4+2*h], lines[l][8*p+4+2*h+1]]
                for e in range(4):
                    key = (r, col + e); assert key not in written, key; written[key] = vals[e]
    return written
regs = to_store_layout(fragment())
check_store_layout(regs)
for name, fn in (("bf16x8", bf16x8), ("f32_lines ^4", lambda r: f32_lines(r, 4)),
                 ("f32_lines ^16", lambda r: f32_lines(r, 16)), ("line layout slots", line_slots)):
    w = fn(regs)
    assert len(w) == 16 * 8 * NCH, (name, len(w))
    bad = [(k, v) for k, v in w.items() if k != v]
    print(name, "cells", len(w), "wrong", len(bad), bad[:3])
