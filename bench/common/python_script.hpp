#pragma once
// The PyTorch (or numpy) side of a benchmark: run a script with /usr/bin/python3, capture its stdout and parse
// its rows. Shared by the benches that print a C++ / PyTorch table (kernels, scb, topic, multihead, joma), so that
// each only says which script, which arguments and which fields it reads.
//
// A row is one line of the script's stdout: either a flat JSON object (json.dumps of a dict whose values are
// numbers, strings or lists of numbers) or whitespace-separated numbers; other lines are not rows. A missing
// python3, a missing script, a script that exits with an error (no torch: its ModuleNotFoundError goes to stderr)
// or one that prints no row is a ScriptError with the reason, never a silent empty table.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace dyncheck::bench {

inline constexpr const char* python = "/usr/bin/python3";

struct ScriptError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ScriptRow {
  std::map<std::string, double> numbers;
  std::map<std::string, std::string> strings;
  std::map<std::string, std::vector<double>> lists;
  std::vector<double> columns;  ///< a line of plain numbers

  bool has(const std::string& key) const { return numbers.count(key) > 0 || strings.count(key) > 0 || lists.count(key) > 0; }
  double number(const std::string& key) const {
    const auto n = numbers.find(key);
    if (n == numbers.end()) throw ScriptError("script row has no number \"" + key + "\"");
    return n->second;
  }
  int integer(const std::string& key) const { return static_cast<int>(number(key)); }
  const std::string& string(const std::string& key) const {
    const auto s = strings.find(key);
    if (s == strings.end()) throw ScriptError("script row has no string \"" + key + "\"");
    return s->second;
  }
  const std::vector<double>& list(const std::string& key) const {
    const auto l = lists.find(key);
    if (l == lists.end()) throw ScriptError("script row has no list \"" + key + "\"");
    return l->second;
  }
};

namespace detail {

inline void skip_space(const char*& p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
}

inline bool parse_string(const char*& p, std::string& out) {
  if (*p != '"') return false;
  ++p;
  out.clear();
  while (*p != '\0' && *p != '"') {
    if (*p == '\\' && p[1] != '\0') ++p;
    out += *p++;
  }
  if (*p != '"') return false;
  ++p;
  return true;
}

inline bool parse_number(const char*& p, double& out) {
  char* end = nullptr;
  out = std::strtod(p, &end);
  if (end == p) return false;
  p = end;
  return true;
}

/// A flat JSON object; false if the line is not one.
inline bool parse_object(const char* p, ScriptRow& row) {
  skip_space(p);
  if (*p++ != '{') return false;
  skip_space(p);
  if (*p == '}') return true;
  for (;;) {
    std::string key;
    skip_space(p);
    if (!parse_string(p, key)) return false;
    skip_space(p);
    if (*p++ != ':') return false;
    skip_space(p);
    if (*p == '"') {
      std::string value;
      if (!parse_string(p, value)) return false;
      row.strings[key] = value;
    } else if (*p == '[') {
      ++p;
      std::vector<double>& values = row.lists[key];
      skip_space(p);
      while (*p != ']') {
        double value = 0;
        if (!parse_number(p, value)) return false;
        values.push_back(value);
        skip_space(p);
        if (*p == ',') ++p;
        skip_space(p);
      }
      ++p;
    } else {
      double value = 0;
      if (!parse_number(p, value)) return false;
      row.numbers[key] = value;
    }
    skip_space(p);
    if (*p == '}') return true;
    if (*p++ != ',') return false;
  }
}

/// A line of whitespace-separated numbers; false if anything else is on it.
inline bool parse_columns(const char* p, ScriptRow& row) {
  skip_space(p);
  while (*p != '\0') {
    double value = 0;
    if (!parse_number(p, value)) return false;
    row.columns.push_back(value);
    skip_space(p);
  }
  return !row.columns.empty();
}

}  // namespace detail

/// Runs `/usr/bin/python3 <script> <arguments>` (arguments as the shell reads them), its stderr passed through, and
/// returns the rows of its stdout. Throws ScriptError (with the reason) if python3 or the script is missing, if the
/// script fails, or if it prints no row.
inline std::vector<ScriptRow> run_python_script(const std::string& script, const std::string& arguments) {
  if (::access(python, X_OK) != 0) {
    throw ScriptError(std::string(python) + " not found (the PyTorch side needs python3 with python3-torch)");
  }
  if (!std::ifstream(script)) {
    throw ScriptError("no script " + script + " (run the bench from the source directory, or give --torch-script=PATH)");
  }
  const std::string command = std::string(python) + " " + script + (arguments.empty() ? "" : " " + arguments);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw ScriptError("cannot start " + std::string(python));
  std::vector<ScriptRow> rows;
  std::string line;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), static_cast<int>(chunk.size()), pipe) != nullptr) {
    line += chunk.data();
    if (line.empty() || line.back() != '\n') continue;  // a long line comes in several chunks
    ScriptRow row;
    if (detail::parse_object(line.c_str(), row) || (row = ScriptRow{}, detail::parse_columns(line.c_str(), row))) {
      rows.push_back(std::move(row));
    }
    line.clear();
  }
  if (!line.empty()) {
    ScriptRow row;
    if (detail::parse_object(line.c_str(), row) || (row = ScriptRow{}, detail::parse_columns(line.c_str(), row))) {
      rows.push_back(std::move(row));
    }
  }
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw ScriptError(command.substr(0, 120) + (command.size() > 120 ? "..." : "") + " failed (exit status " +
                      std::to_string(code) + "; is python3-torch installed? its error is above; --no-torch skips it)");
  }
  if (rows.empty()) throw ScriptError(script + " printed no result row");
  return rows;
}

/// Prints why the script's side of a table is missing (stderr) and returns the exit status a bench then gives.
inline int report_script_error(const char* bench, const ScriptError& error) {
  std::fprintf(stderr, "%s: the PyTorch side is missing from the table: %s\n", bench, error.what());
  return 1;
}

/// run() (the bench's script side), or on a ScriptError its reason on stderr, status = 1 and an empty result: the
/// C++ side of the table is still printed, and the bench exits with status.
template <class Run>
auto script_side_or_report(const char* bench, int& status, Run run) -> decltype(run()) {
  try {
    return run();
  } catch (const ScriptError& error) {
    status = report_script_error(bench, error);
    return {};
  }
}

}  // namespace dyncheck::bench
