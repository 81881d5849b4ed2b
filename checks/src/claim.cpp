#include "dyncheck/checks/claim.hpp"

#include <stdexcept>
#include <string>

#include "dyncheck/checks/variant.hpp"

namespace dyncheck::checks {

std::string_view to_string(Provenance tag) {
  switch (tag) {
    case Provenance::paper: return "[paper]";
    case Provenance::code: return "[code]";
    case Provenance::derived: return "[derived]";
    case Provenance::reconstructed: return "[reconstructed]";
  }
  return "[derived]";
}

Params Claim::resolve(const std::vector<ParamOverride>& overrides, const Budget& /*budget*/) const {
  return Params::resolve(info().params, overrides);
}

std::vector<Verdict> Claim::evaluate(const RunContext& context, const std::vector<std::string>& variants) const {
  std::vector<Verdict> verdicts;
  for (const std::string& variant : variants) {
    RunContext variant_context = context;
    variant_context.mutant = variant;
    verdicts.push_back(timed_variant(variant, [&] { return run(variant_context); }));
  }
  return verdicts;
}

Verdict Claim::run(const RunContext& /*context*/) const {
  throw std::logic_error("claim " + info().id + " implements neither run() nor evaluate()");
}

}  // namespace dyncheck::checks
