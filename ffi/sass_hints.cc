#include "sass_hints.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace jdg::jit {
namespace {

constexpr std::uint64_t kOpcodeMask = 0xfff, kFfmaRegisters = 0x223, kAlways = 7;
// Control flow (opcodes 0x940-0x95f). BRA and BSSY name a target (a branch's, a reconvergence point); the others
// listed jump nowhere by themselves. A section with any other one in that range (an indirect branch, a call, a
// return) is left as it is: its targets cannot be known here.
constexpr std::uint64_t kBsync = 0x941, kBreak = 0x942, kBssy = 0x945, kYield = 0x946, kBra = 0x947, kWarpsync = 0x948,
                        kExit = 0x94d;
constexpr std::uint64_t kNoYield = 1ull << 45, kReuseB = 1ull << 59, kReuseAll = 0xfull << 58;
constexpr unsigned kZeroRegister = 255;  // RZ

template <typename T>
T read(const std::string& image, std::uint64_t offset) {
  if (offset > image.size() || image.size() - offset < sizeof(T))
    throw std::runtime_error("cubin: truncated ELF image (a header field lies past its end)");
  T value;
  std::memcpy(&value, image.data() + offset, sizeof(T));
  return value;
}

struct Instruction {
  std::uint64_t lo, hi;
  bool plain_ffma() const { return (lo & kOpcodeMask) == kFfmaRegisters && ((lo >> 12) & 0xf) == kAlways; }
  unsigned b() const { return (lo >> 32) & 0xff; }
  unsigned dest() const { return (lo >> 16) & 0xff; }
};

// The signed value of `bits` bits.
std::int64_t sign_extend(std::uint64_t value, int bits) {
  const std::uint64_t sign = 1ull << (bits - 1);
  return static_cast<std::int64_t>((value ^ sign) - sign);
}

// The byte offset, from the next instruction, of a BRA's or BSSY's target (cuobjdump's listings: BRA in words, bits
// 16-23 and 34-63 of the low word and 0-17 of the high; BSSY in bytes, bits 32-63 and 0-17).
std::int64_t target_offset(const Instruction& in) {
  const std::uint64_t high = in.hi & 0x3ffff;
  if ((in.lo & kOpcodeMask) == kBra)
    return 4 * sign_extend(((in.lo >> 16) & 0xff) | ((in.lo >> 34) << 8) | (high << 38), 56);
  return sign_extend((in.lo >> 32) | (high << 32), 50);
}

// Which instructions of the section may be reached other than from the one before: every BRA and BSSY target.
// Empty when the section has a control-flow instruction whose targets are unknown, or a target outside it.
std::vector<bool> branch_targets(const std::vector<Instruction>& code) {
  std::vector<bool> target(code.size(), false);
  for (std::uint64_t i = 0; i < code.size(); ++i) {
    const std::uint64_t opcode = code[i].lo & kOpcodeMask;
    if (opcode < 0x940 || opcode > 0x95f) continue;
    if (opcode == kBsync || opcode == kBreak || opcode == kYield || opcode == kWarpsync || opcode == kExit) continue;
    if (opcode != kBra && opcode != kBssy) return {};
    const std::int64_t offset = target_offset(code[i]);
    const std::int64_t index = static_cast<std::int64_t>(i) + 1 + offset / 16;
    if (offset % 16 != 0 || index < 0 || index >= static_cast<std::int64_t>(code.size())) return {};
    target[index] = true;
  }
  return target;
}

// Rewrites the hints of one section's code (`size` bytes, a whole number of instructions) in place.
int rewrite_section(char* bytes, std::uint64_t size, int period) {
  std::vector<Instruction> code(size / 16);
  for (std::uint64_t i = 0; i < code.size(); ++i) {
    std::memcpy(&code[i].lo, bytes + 16 * i, 8);
    std::memcpy(&code[i].hi, bytes + 16 * i + 8, 8);
  }
  const std::vector<bool> target = branch_targets(code);
  if (target.empty()) return 0;
  int changed = 0, position = 0;  // position: how many FFMAs of the current chain came before
  for (std::uint64_t i = 0; i < code.size(); ++i) {
    const Instruction& in = code[i];
    if (!in.plain_ffma()) {
      position = 0;
      continue;
    }
    // Chained: the next instruction is an FFMA reading the same B register, which this one does not overwrite, and
    // no branch lands between them (the reuse cache holds what the instruction before in time read).
    bool chained = false;
    if (i + 1 < code.size() && !target[i + 1]) {
      const Instruction& next = code[i + 1];
      chained = next.plain_ffma() && next.b() == in.b() && in.b() != in.dest() && in.b() != kZeroRegister;
    }
    if (!chained && position == 0) continue;  // in no chain: as ptxas made it
    ++position;
    // Inside a chain, every period-th FFMA yields; so does its last. The others keep B for the next.
    const bool keep = chained && position % period != 0;
    const std::uint64_t hi = keep ? (in.hi & ~kReuseAll) | kNoYield | kReuseB : in.hi & ~(kNoYield | kReuseAll);
    if (!chained) position = 0;
    if (hi != in.hi) {
      std::memcpy(bytes + 16 * i + 8, &hi, 8);
      ++changed;
    }
  }
  return changed;
}

}  // namespace

std::string rewrite_ffma_hints(const std::string& cubin, int period, int* changed) {
  if (period < 1) throw std::invalid_argument("rewrite_ffma_hints: period must be >= 1");
  if (cubin.size() < 64 || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0 || cubin[4] != 2 || cubin[5] != 1)
    throw std::runtime_error("cubin: not a little-endian ELF64 image");
  const auto shoff = read<std::uint64_t>(cubin, 0x28);
  const auto shentsize = read<std::uint16_t>(cubin, 0x3a);
  const auto shnum = read<std::uint16_t>(cubin, 0x3c);
  const auto shstrndx = read<std::uint16_t>(cubin, 0x3e);
  if (shentsize < 64 || shstrndx >= shnum) throw std::runtime_error("cubin: bad ELF section header table");
  auto header = [&](unsigned i) { return shoff + std::uint64_t(i) * shentsize; };
  const auto names_offset = read<std::uint64_t>(cubin, header(shstrndx) + 0x18);
  const auto names_size = read<std::uint64_t>(cubin, header(shstrndx) + 0x20);
  if (names_offset > cubin.size() || cubin.size() - names_offset < names_size)
    throw std::runtime_error("cubin: the section name table lies past the image's end");

  std::string out = cubin;
  int total = 0;
  for (unsigned i = 0; i < shnum; ++i) {
    const auto name_index = read<std::uint32_t>(cubin, header(i));
    const auto type = read<std::uint32_t>(cubin, header(i) + 4);
    const auto offset = read<std::uint64_t>(cubin, header(i) + 0x18);
    const auto size = read<std::uint64_t>(cubin, header(i) + 0x20);
    if (name_index >= names_size) throw std::runtime_error("cubin: a section name lies past the name table");
    const char* name = cubin.data() + names_offset + name_index;
    const std::uint64_t name_room = names_size - name_index;
    if (type != 1 /* SHT_PROGBITS */ || name_room < 7 || std::strncmp(name, ".text.", 6) != 0) continue;
    if (offset > cubin.size() || cubin.size() - offset < size || size % 16 != 0)
      throw std::runtime_error("cubin: a .text section lies past the image's end or is not whole instructions");
    total += rewrite_section(&out[offset], size, period);
  }
  if (changed) *changed = total;
  return out;
}

}  // namespace jdg::jit
