#pragma once
// The random engine and its stream derivation: Rng, hash_name, derive_stream.
//
// One concept per header: the engine is in xoshiro256plusplus.hpp, the name hash in
// hash_name.hpp and the stream derivation in derive_stream.hpp; this header gathers them,
// since almost every user of Rng also derives streams.

#include "dyncheck/sim/random/derive_stream.hpp"
#include "dyncheck/sim/random/hash_name.hpp"
#include "dyncheck/sim/random/splitmix64.hpp"
#include "dyncheck/sim/random/xoshiro256plusplus.hpp"
