// dyncheck/checks/stats.hpp — honest statistics over independent replicates.
//
// DESIGN.md "Statistics" and specs/numerics.md §4: the independent unit is a replicate
// run with its own seed; the suite-wide false-failure rate is split across claims
// (Bonferroni or Holm), and each claim turns its share into a confidence half-width
// whose `reason` says which formula was used and which assumption it rests on.
//
// Every function validates its arguments and throws std::invalid_argument naming the
// argument and its valid range; non-finite data throw std::domain_error naming the index.
#pragma once

#include "dyncheck/checks/stats/binomial.hpp"      // clopper_pearson
#include "dyncheck/checks/stats/half_width.hpp"    // student_t, normal, hoeffding, empirical Bernstein
#include "dyncheck/checks/stats/multiplicity.hpp"  // bonferroni_share, holm_reject, p-values
#include "dyncheck/checks/stats/summary.hpp"       // Summary, summarize, RunningMoments
