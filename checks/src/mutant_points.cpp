#include "dyncheck/checks/mutant_points.hpp"

#include <map>
#include <mutex>

namespace dyncheck::checks {
namespace {

struct Table {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, ParamPoint, std::less<>> points;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

void declare_hypothesis_mutant(const std::string& claim_id, const std::string& mutant, ParamPoint point) {
  Table& t = table();
  const std::lock_guard<std::mutex> lock(t.mutex);
  t.points[{claim_id, mutant}] = std::move(point);
}

ParamPoint hypothesis_mutant_point(std::string_view claim_id, std::string_view mutant) {
  Table& t = table();
  const std::lock_guard<std::mutex> lock(t.mutex);
  const auto found = t.points.find(std::pair<std::string, std::string>{claim_id, mutant});
  return found == t.points.end() ? ParamPoint{} : found->second;
}

bool at_failing_point(std::string_view claim_id, std::string_view mutant, const ParamPoint& params) {
  for (const auto& [name, value] : hypothesis_mutant_point(claim_id, mutant)) {
    bool found = false;
    for (const auto& [given, given_value] : params) found = found || (given == name && given_value == value);
    if (!found) return false;
  }
  return true;
}

}  // namespace dyncheck::checks
