// A small, dependency-free 128-bit content hash for cache keys and cubin checksums (not cryptographic: it guards
// against stale or damaged cache entries, not against an attacker who can write to the cache directory).
//
// Two independent 64-bit FNV-1a lanes (different offset bases, the second over a rotated byte stream) are each
// finished with a 64-bit avalanche mixer and printed as 32 hex digits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jdg {

class Hasher {
 public:
  Hasher& update(std::string_view bytes) {
    for (unsigned char c : bytes) {
      lo_ = (lo_ ^ c) * kPrime;
      hi_ = (hi_ ^ static_cast<unsigned char>(c + 0x5b)) * kPrime;
      hi_ = (hi_ << 7) | (hi_ >> 57);
    }
    count_ += bytes.size();
    return *this;
  }

  // Adds a field with its length, so that ("ab", "c") and ("a", "bc") hash differently.
  Hasher& field(std::string_view bytes) {
    std::uint64_t n = bytes.size();
    update(std::string_view(reinterpret_cast<const char*>(&n), sizeof(n)));
    return update(bytes);
  }

  std::string hex() const {
    static const char* digits = "0123456789abcdef";
    std::uint64_t parts[2] = {mix(lo_ ^ count_), mix(hi_ + 0x9e3779b97f4a7c15ull * (count_ + 1))};
    std::string out;
    for (std::uint64_t p : parts)
      for (int shift = 60; shift >= 0; shift -= 4) out.push_back(digits[(p >> shift) & 0xf]);
    return out;
  }

 private:
  static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
  }

  static constexpr std::uint64_t kPrime = 0x100000001b3ull;
  std::uint64_t lo_ = 0xcbf29ce484222325ull;
  std::uint64_t hi_ = 0x84222325cbf29ce4ull;
  std::uint64_t count_ = 0;
};

inline std::string hash_hex(std::string_view bytes) { return Hasher().update(bytes).hex(); }

}  // namespace jdg
