// The out-of-line parts of Xoshiro256PlusPlus: the validating constructor and the jumps.

#include "dyncheck/sim/random/rng.hpp"

#include <stdexcept>

namespace dyncheck::sim {

Xoshiro256PlusPlus::Xoshiro256PlusPlus(const state_type& state) : s_(state) {
  if (s_[0] == 0 && s_[1] == 0 && s_[2] == 0 && s_[3] == 0) {
    throw std::invalid_argument(
        "Xoshiro256PlusPlus: state must not be all zero (the zero state is a fixed point)");
  }
}

// The jump is the linear map A^(2^k) (A: one step over GF(2)^256), written as a polynomial in A
// whose coefficients are the bits of `polynomial`: the sum (xor) of the states reached after
// the steps whose bit is set. Constants from the reference xoshiro256plusplus.c; the tests
// check them against A^(2^128) and A^(2^192) computed independently by repeated squaring.
void Xoshiro256PlusPlus::apply_jump(const state_type& polynomial) noexcept {
  state_type acc{};
  for (const std::uint64_t word : polynomial) {
    for (unsigned b = 0; b < 64; ++b) {
      if ((word >> b) & 1U) {
        for (std::size_t i = 0; i < 4; ++i) acc[i] ^= s_[i];
      }
      (*this)();
    }
  }
  s_ = acc;
}

void Xoshiro256PlusPlus::jump() noexcept {
  apply_jump(
      {0x180ec6d33cfd0abaULL, 0xd5a61266f0c9392cULL, 0xa9582618e03fc9aaULL, 0x39abdc4529b1661cULL});
}

void Xoshiro256PlusPlus::long_jump() noexcept {
  apply_jump(
      {0x76e15d3efefdcbbfULL, 0xc5004e441c522fb3ULL, 0x77710069854ee241ULL, 0x39109bb02acbe635ULL});
}

}  // namespace dyncheck::sim
