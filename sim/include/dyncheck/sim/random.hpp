#pragma once
// Everything random in sim/: the engine, stream derivation and the samplers.
//
// Every sampler is our own code over a specified engine (numerics.md §4): a seed gives the same
// numbers on every platform and standard library, up to the libm functions each sampler names
// in its documentation (std::sqrt is correctly rounded; glibc's log/exp/log1p are not
// guaranteed to be, so the last bit may differ on another libm). The floating-point sampler code
// is compiled inside dyncheck_sim with -ffp-contract=off; headers hold only exact code.

#include "dyncheck/sim/random/bernoulli.hpp"
#include "dyncheck/sim/random/binomial.hpp"
#include "dyncheck/sim/random/categorical.hpp"
#include "dyncheck/sim/random/dirichlet.hpp"
#include "dyncheck/sim/random/fill_standard_normal.hpp"
#include "dyncheck/sim/random/gamma.hpp"
#include "dyncheck/sim/random/gamma_log.hpp"
#include "dyncheck/sim/random/multinomial.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/shuffle.hpp"
#include "dyncheck/sim/random/standard_normal.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/random/uniform_index.hpp"
#include "dyncheck/sim/random/uniform_open01.hpp"
