// Prints two checksums over 10^5 fixed arguments: of glibc's double exp/log/pow/sin/tanh and of
// dyncheck::portable's exp/log/pow/tanh. libm_variants.cmake runs it with and without
// GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA: the glibc checksum shows whether the tunable switched
// glibc's variant on this CPU (the control), the portable one must not move.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "dyncheck/portable/math.hpp"

namespace {
std::uint64_t mix(std::uint64_t h, double x) {
  h ^= std::bit_cast<std::uint64_t>(x);
  return h * 0x100000001b3ULL;
}
}  // namespace

int main() {
  std::uint64_t glibc = 0xcbf29ce484222325ULL, portable = glibc;
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 100000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(state >> 11) * 0x1p-53;  // [0, 1)
    const double x = 40 * u - 20, y = 0.1 + 10 * u;
    glibc = mix(mix(mix(mix(mix(glibc, std::exp(x)), std::log(y)), std::pow(y, x)), std::sin(x)), std::tanh(x));
    namespace pm = dyncheck::portable;
    portable = mix(mix(mix(mix(portable, pm::exp(x)), pm::log(y)), pm::pow(y, x)), pm::tanh(x));
  }
  std::printf("glibc %016llx\nportable %016llx\n", static_cast<unsigned long long>(glibc),
              static_cast<unsigned long long>(portable));
  return 0;
}
