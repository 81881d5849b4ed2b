#pragma once
// A fixed hash of stream names: FNV-1a, 64 bit.

#include <cstdint>
#include <string_view>

namespace dyncheck::sim {

/**
 * FNV-1a, 64 bit (Fowler, Noll, Vo; draft-eastlake-fnv): start from the offset basis
 * \f$h = \mathtt{0xcbf29ce484222325}\f$, and for every byte \f$b\f$ of `name` in order set
 * \f$h \leftarrow (h \oplus b)\cdot \mathtt{0x100000001b3} \bmod 2^{64}\f$.
 *
 * Why not std::hash: its values are unspecified and differ between standard libraries and
 * versions, while a stream name must map to the same seed forever (a report's seed must
 * reproduce its numbers). Known values: "" -> 0xcbf29ce484222325, "a" -> 0xaf63dc4c8601ec8c.
 */
constexpr std::uint64_t hash_name(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace dyncheck::sim
