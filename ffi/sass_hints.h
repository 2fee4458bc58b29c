// A post-compile pass over sm_90 cubins: the yield hints and operand-reuse flags of the block-scale promotion's FFMAs.
//
// The promotion is a run of FFMAs `out = acc * scale + out` that share one scale register per row. ptxas gives every
// other one a yield hint, and an FFMA that may yield cannot keep an operand in the reuse cache for the next one, so
// half of them read all three sources from the register file while the tensor cores work from the same file. The
// pass gives, in each chain of consecutive FFMAs that share their B (scale) register, every `period`-th FFMA and the
// chain's last one the yield hint and no reuse, and the others no yield and B kept for reuse. With the default
// period, 8, the M = 4096 dense rows (256 x 128 and 128 x 192 tiles) ran 1.4-3.6% faster on an H200 than with
// ptxas's own hints (one yield in 2), masked rows 0.7-5.1%, contiguous and ragged ~2%, small M level. On a probe of
// the 256 x 128 loop (benchmarks/experiments/a_reuse_ring.cu), never yielding along a chain, or always yielding, ran
// slower than ptxas's hints (benchmarks/NOTES.md 118).
// The arithmetic is unchanged: hints and cache flags only, no instruction moves, and a reuse flag only where the next
// instruction reads that register in the same operand slot and no branch lands between them. Kernels without such
// chains (k-grouped's promotion, the quantization kernels) come out as ptxas made them.
//
// Encoding facts (sm_90 SASS, 128-bit instructions, as cuobjdump lists them): low word bits 0-11 the opcode (0x223:
// FFMA with register operands), 12-15 the predicate (7: always), 16-23 the destination, 24-31 A, 32-39 B; high word
// bit 45 set = no yield, bits 58-61 the reuse flags of operands A, B, C (and a fourth).
#pragma once

#include <string>

namespace jdg::jit {

// `cubin` (an ELF64 image) with the FFMA chains of every .text.* section rewritten for `period` >= 1; *changed
// (unless null) gets the number of instructions changed. Throws std::runtime_error when the image is not a
// well-formed ELF64 file (every offset is checked against its size); the JIT then keeps the compiler's image and warns.
std::string rewrite_ffma_hints(const std::string& cubin, int period, int* changed);

}  // namespace jdg::jit
