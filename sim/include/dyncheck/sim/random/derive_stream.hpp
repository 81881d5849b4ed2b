#pragma once
// Independent random streams for (master seed, experiment name, replicate index).

#include <cstdint>
#include <string_view>

#include "dyncheck/sim/random/hash_name.hpp"
#include "dyncheck/sim/random/splitmix64.hpp"
#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

/**
 * The 64-bit seed of stream (`master_seed`, `stream_name`, `replicate`):
 * \f[ h_1 = \mathrm{mix}(m + \gamma),\quad h_2 = \mathrm{mix}(h_1 \oplus \mathrm{fnv1a}(name) +
 * \gamma), \quad h_3 = \mathrm{mix}(h_2 \oplus r + \gamma), \f] with mix = splitmix64_mix,
 * \f$\gamma\f$ = splitmix64_gamma, arithmetic mod \f$2^{64}\f$.
 *
 * Each stage is a bijection of its new input for fixed earlier inputs, so for one master seed
 * and name, distinct replicates get distinct seeds (and hence distinct engine states, since
 * splitmix64 seeding is injective); the same holds for distinct master seeds at fixed name and
 * replicate. Distinct names collide only if their FNV-1a hashes do. Streams seeded this way are
 * not provably disjoint (jump() would give that), but two random starting points on a cycle of
 * length \f$2^{256}-1\f$ overlap within \f$L\f$ steps with probability about \f$2L/2^{256}\f$.
 */
constexpr std::uint64_t derive_seed(std::uint64_t master_seed, std::string_view stream_name,
                                    std::uint64_t replicate) noexcept {
  const std::uint64_t h1 = splitmix64_mix(master_seed + splitmix64_gamma);
  const std::uint64_t h2 = splitmix64_mix((h1 ^ hash_name(stream_name)) + splitmix64_gamma);
  return splitmix64_mix((h2 ^ replicate) + splitmix64_gamma);
}

/**
 * The engine for replicate `replicate` of experiment `stream_name` (a claim id, optionally
 * with a "/suffix" per experiment) under `master_seed`: Rng(derive_seed(...)). A pure function of
 * its three arguments, so results do not depend on thread count or evaluation order.
 */
inline Rng derive_stream(std::uint64_t master_seed, std::string_view stream_name,
                         std::uint64_t replicate) {
  return Rng(derive_seed(master_seed, stream_name, replicate));
}

}  // namespace dyncheck::sim
