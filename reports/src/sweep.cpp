#include "dyncheck/reports/sweep.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "dyncheck/checks/params.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/reports/files.hpp"
#include "dyncheck/reports/json.hpp"
#include "dyncheck/reports/plot.hpp"

namespace dyncheck::reports {
namespace {

constexpr std::size_t max_axis_values = 10000;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

const checks::ParamSpec& find_spec(const checks::Claim& claim, const std::string& name, const std::string& text) {
  for (const checks::ParamSpec& spec : claim.info().params) {
    if (spec.name == name) return spec;
  }
  std::string names;
  for (const checks::ParamSpec& spec : claim.info().params) names += (names.empty() ? "" : ", ") + spec.name;
  throw checks::ParamError(name, fmt::format("--grid {}: {} has no parameter '{}' (its parameters: {})", text,
                                             claim.info().id, name, names.empty() ? "none" : names));
}

/// The shortest decimal text that reads back as `value` (fmt's round-trip format), which
/// parse_param_value accepts; integers without a fractional part.
std::string value_text(const checks::ParamSpec& spec, double value) {
  if (spec.integer) return fmt::format("{}", static_cast<long long>(value));
  return fmt::format("{}", value);
}

std::string quote_csv(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_number(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();  // "NaN", "Infinity"
  return fmt::format("{}", value.get<double>());
}

double axis_number(const std::string& text) { return std::stod(text); }

// discrepancy / (numerical + statistical) of one comparison: its margin if the theory were given no
// bias allowance, i.e. if the theorem's leading-order statement were taken as exact. Above 1 the
// gap between theory and training is larger than the noise and the arithmetic can explain.
double margin_without_bias(const checks::Comparison& c) {
  const double noise = c.tolerance.numerical.value + c.tolerance.statistical.value;
  const double gap = c.discrepancy();
  if (noise > 0) return gap / noise;
  return gap > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

nlohmann::json margin_without_bias(const checks::Verdict& verdict) {
  double largest = 0;
  for (const checks::Comparison& c : verdict.comparisons) largest = std::max(largest, margin_without_bias(c));
  if (verdict.comparisons.empty()) return nullptr;
  if (std::isnan(largest)) return "NaN";
  if (std::isinf(largest)) return "Infinity";
  return largest;
}

std::string outcome_letter(const std::string& outcome) {
  if (outcome == "REFUSED") return "R";
  return outcome.substr(0, 1);
}

}  // namespace

SweepAxis parse_sweep_axis(const checks::Claim& claim, const std::string& text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw checks::ParamError("grid", fmt::format("--grid '{}': expected name=v1,v2,... or name=lo:hi:n[:log]", text));
  }
  SweepAxis axis;
  axis.name = text.substr(0, equals);
  axis.text = text;
  const checks::ParamSpec& spec = find_spec(claim, axis.name, text);
  axis.log_scale = spec.log_scale;
  const std::string rest = text.substr(equals + 1);
  if (rest.find(':') != std::string::npos) {
    const std::vector<std::string> parts = split(rest, ':');
    if (parts.size() < 3 || parts.size() > 4 || (parts.size() == 4 && parts[3] != "log")) {
      throw checks::ParamError(axis.name, fmt::format("--grid '{}': a range is lo:hi:n or lo:hi:n:log", text));
    }
    const double lo = checks::parse_param_value(spec, parts[0]);
    const double hi = checks::parse_param_value(spec, parts[1]);
    const std::size_t n = checks::parse_unsigned_decimal(
        axis.name, fmt::format("--grid {} (number of values)", text), parts[2], 1, max_axis_values,
        fmt::format("[1, {}]", max_axis_values));
    const bool log = parts.size() == 4;
    if (log && !(lo > 0 && hi > 0)) {
      throw checks::ParamError(axis.name, fmt::format("--grid '{}': a log range needs lo > 0 and hi > 0", text));
    }
    if (n > 1 && !(lo < hi)) {
      throw checks::ParamError(axis.name, fmt::format("--grid '{}': a range needs lo < hi", text));
    }
    axis.log_scale = log;
    std::vector<double> values;
    for (std::size_t k = 0; k < n; ++k) {
      double value = lo;
      if (k + 1 == n && n > 1) {
        value = hi;  // both ends exactly as given
      } else if (k > 0) {
        const double f = static_cast<double>(k) / static_cast<double>(n - 1);
        // dyncheck::portable, not glibc: the grid must be the same on every CPU.
        value = log ? portable::exp(portable::log(lo) + f * (portable::log(hi) - portable::log(lo))) : lo + f * (hi - lo);
      }
      if (spec.integer) value = std::nearbyint(value);
      if (values.empty() || values.back() != value) values.push_back(value);  // integer rounding may repeat
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
      // Interior values to 15 significant digits, so that a log grid through 2 gives "2", not
      // "1.9999999999999998"; the ends stay exactly as given. What runs is the text.
      const bool interior = k > 0 && k + 1 < values.size() && !spec.integer;
      axis.values.push_back(interior ? fmt::format("{:.15g}", values[k]) : value_text(spec, values[k]));
      (void)checks::parse_param_value(spec, axis.values.back());
    }
  } else {
    std::set<double> seen;
    for (const std::string& part : split(rest, ',')) {
      const double value = checks::parse_param_value(spec, part);
      if (!seen.insert(value).second) {
        throw checks::ParamError(axis.name, fmt::format("--grid '{}': the value {} appears twice", text, part));
      }
      axis.values.push_back(part);
    }
  }
  return axis;
}

std::size_t Sweep::size() const {
  std::size_t n = 1;
  for (const SweepAxis& axis : axes) n *= axis.values.size();
  return n;
}

std::vector<std::string> Sweep::point(std::size_t index) const {
  std::vector<std::string> values(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    values[a] = axes[a].values[index % axes[a].values.size()];
    index /= axes[a].values.size();
  }
  return values;
}

nlohmann::json Sweep::header() const {
  nlohmann::json axes_json = nlohmann::json::array();
  for (const SweepAxis& axis : axes) {
    axes_json.push_back({{"name", axis.name}, {"grid", axis.text}, {"values", axis.values}, {"log", axis.log_scale}});
  }
  nlohmann::json params = nlohmann::json::array();
  for (const auto& [name, value] : options.overrides) params.push_back({name, value});
  nlohmann::json header = {{"dyncheck_sweep", 1},
                           {"version", version},
                           {"claim", claim->info().id},
                           {"budget", std::string(checks::to_string(options.budget.level))},
                           {"seed", options.seed},
                           {"axes", axes_json},
                           {"params", params},
                           {"points", size()}};
  // Only a mutant sweep names one, so that the claim's own sweep files keep their bytes.
  if (!options.mutant.empty()) header["mutant"] = options.mutant;
  return header;
}

void check_sweep(const Sweep& sweep, std::size_t max_points) {
  if (!sweep.options.mutant.empty()) checks::check_mutant_known(sweep.claim->info(), sweep.options.mutant);
  if (sweep.axes.empty()) throw checks::ParamError("grid", "a sweep needs at least one --grid axis");
  std::set<std::string> names;
  for (const SweepAxis& axis : sweep.axes) {
    if (!names.insert(axis.name).second) {
      throw checks::ParamError(axis.name, fmt::format("--grid: parameter '{}' has two axes", axis.name));
    }
    for (const auto& override_ : sweep.options.overrides) {
      if (override_.first == axis.name) {
        throw checks::ParamError(axis.name,
                                 fmt::format("'{}' is both a --grid axis and a --param; give it once", axis.name));
      }
    }
  }
  std::size_t n = 1;
  for (const SweepAxis& axis : sweep.axes) {
    if (n > max_points / axis.values.size()) n = max_points + 1;
    else n *= axis.values.size();
  }
  if (n > max_points) {
    throw checks::ParamError("grid", fmt::format("the grid has more than {} points; use fewer values", max_points));
  }
}

nlohmann::json evaluate_sweep_point(const Sweep& sweep, std::size_t index) {
  const std::vector<std::string> values = sweep.point(index);
  checks::RunOptions options = sweep.options;
  nlohmann::json point = nlohmann::json::object();
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    options.overrides.emplace_back(sweep.axes[a].name, values[a]);
    point[sweep.axes[a].name] = values[a];
  }
  nlohmann::json record = {{"index", index}, {"point", point}};
  try {
    checks::check_parameters({sweep.claim}, options);
    const checks::Verdict verdict = checks::run_claim(*sweep.claim, options);
    nlohmann::json json = to_json(verdict);
    for (const char* key : {"claim", "seed", "budget", "plots", "wall_seconds"}) json.erase(key);
    record.update(json);
    record["margin_without_bias"] = margin_without_bias(verdict);
  } catch (const checks::ParamError& error) {
    record["outcome"] = "REFUSED";
    record["refused"] = error.what();
  }
  return record;
}

SweepJournal::SweepJournal(const Sweep& sweep, const std::filesystem::path& directory, bool resume)
    : path_(directory / "points.jsonl"), records_(sweep.size()) {
  const nlohmann::json header = sweep.header();
  std::error_code error;
  const bool exists = std::filesystem::exists(path_, error);
  if (exists && !resume) {
    throw checks::ParamError("out", fmt::format("{} already holds a sweep; add --resume to continue it, or choose "
                                                "another --out",
                                                path_.string()));
  }
  if (exists) {
    std::ifstream in(path_, std::ios::binary);
    const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw checks::ParamError("resume", fmt::format("cannot read {}", path_.string()));
    if (content.empty() || content.back() != '\n') {
      throw checks::ParamError("resume", fmt::format("{}: the last line is incomplete (not a journal this program "
                                                     "finished writing); nothing was changed",
                                                     path_.string()));
    }
    std::istringstream lines(content);
    std::string line;
    std::size_t number = 0;
    while (std::getline(lines, line)) {
      ++number;
      nlohmann::json json;
      try {
        json = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        throw checks::ParamError("resume", fmt::format("{} line {} is not JSON; nothing was changed", path_.string(),
                                                       number));
      }
      if (number == 1) {
        if (json == header) continue;
        std::string differences;
        for (const auto& [key, value] : header.items()) {
          if (!json.contains(key) || json[key] != value) {
            differences += fmt::format("\n  {}: the journal has {}, this command has {}", key,
                                       json.contains(key) ? json[key].dump() : "nothing", value.dump());
          }
        }
        throw checks::ParamError("resume", fmt::format("{} is a different sweep; nothing was changed:{}",
                                                       path_.string(), differences.empty() ? " (extra keys)" : differences));
      }
      const bool valid_index = json.contains("index") && json["index"].is_number_unsigned() &&
                               json["index"].get<std::size_t>() < records_.size();
      if (!valid_index || !json.contains("outcome")) {
        throw checks::ParamError("resume", fmt::format("{} line {} is not a point of this sweep; nothing was changed",
                                                       path_.string(), number));
      }
      const std::size_t index = json["index"].get<std::size_t>();
      const std::vector<std::string> values = sweep.point(index);
      for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
        if (!json.contains("point") || json["point"].value(sweep.axes[a].name, std::string()) != values[a]) {
          throw checks::ParamError("resume", fmt::format("{} line {}: point {} has other values than this grid's; "
                                                         "nothing was changed",
                                                         path_.string(), number, index));
        }
      }
      if (records_[index]) {
        throw checks::ParamError("resume", fmt::format("{} line {}: point {} appears twice; nothing was changed",
                                                       path_.string(), number, index));
      }
      records_[index] = std::make_unique<nlohmann::json>(std::move(json));
      ++done_count_;
    }
    if (number == 0) throw checks::ParamError("resume", fmt::format("{} is empty", path_.string()));
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  } else {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  }
  if (fd_ < 0) throw WriteError(fmt::format("cannot open {}: {}", path_.string(), std::strerror(errno)));
  if (!exists) {
    append(header);
    // The journal's directory entry must survive a crash too.
    const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      (void)::fsync(dir);
      ::close(dir);
    }
  }
}

SweepJournal::~SweepJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void SweepJournal::append(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw WriteError(fmt::format("cannot write {}: {}", path_.string(), std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) throw WriteError(fmt::format("cannot sync {}: {}", path_.string(), std::strerror(errno)));
  if (record.contains("index")) {
    const std::size_t index = record["index"].get<std::size_t>();
    if (!records_.at(index)) ++done_count_;
    records_[index] = std::make_unique<nlohmann::json>(record);
  }
}

std::vector<nlohmann::json> SweepJournal::records() const {
  std::vector<nlohmann::json> out;
  out.reserve(records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) {
    if (!records_[i]) throw std::logic_error(fmt::format("sweep point {} has not run", i));
    out.push_back(*records_[i]);
  }
  return out;
}

void write_sweep_outputs(const Sweep& sweep, const std::vector<nlohmann::json>& records,
                         const std::filesystem::path& directory) {
  write_file_atomically(directory / "sweep.json",
                        nlohmann::json{{"header", sweep.header()}, {"points", records}}.dump(2) + "\n");

  // CSV: one row per point and comparison (a point without comparisons, refused or failed before
  // comparing, has one row with the comparison columns empty).
  std::string csv = "index";
  for (const SweepAxis& axis : sweep.axes) csv += "," + quote_csv(axis.name);
  csv += ",outcome,margin,margin_without_bias,quantity,relation,theory,theory_error,measured,half_width,discrepancy,tolerance,"
         "numerical,bias,statistical,comparison_margin,comparison_outcome\n";
  for (const nlohmann::json& record : records) {
    std::string prefix = fmt::format("{}", record["index"].get<std::size_t>());
    for (const SweepAxis& axis : sweep.axes) prefix += "," + record["point"][axis.name].get<std::string>();
    prefix += "," + record["outcome"].get<std::string>() + "," +
              csv_number(record.contains("margin") ? record["margin"] : nlohmann::json()) + "," +
              csv_number(record.contains("margin_without_bias") ? record["margin_without_bias"] : nlohmann::json());
    const nlohmann::json comparisons = record.value("comparisons", nlohmann::json::array());
    if (comparisons.empty()) csv += prefix + ",,,,,,,,,,,,,\n";  // the 13 comparison columns
    for (const nlohmann::json& c : comparisons) {
      const nlohmann::json& t = c["tolerance"];
      csv += prefix + "," + quote_csv(c["quantity"].get<std::string>()) + "," + c["relation"].get<std::string>() + "," +
             csv_number(c["theory"]) + "," + csv_number(c["theory_error"]) + "," + csv_number(c["measured"]) + "," +
             csv_number(c["half_width"]) + "," + csv_number(c["discrepancy"]) + "," + csv_number(t["total"]) + "," +
             csv_number(t["numerical"]["value"]) + "," + csv_number(t["bias"]["value"]) + "," +
             csv_number(t["statistical"]["value"]) + "," + csv_number(c["margin"]) + "," +
             c["outcome"].get<std::string>() + "\n";
    }
  }
  write_file_atomically(directory / "sweep.csv", csv);

  const std::string id =
      sweep.claim->info().id + (sweep.options.mutant.empty() ? "" : " [mutant " + sweep.options.mutant + "]");
  if (sweep.axes.size() == 1) {
    const SweepAxis& axis = sweep.axes[0];
    checks::Plot plot;
    plot.name = "sweep";
    plot.title = fmt::format("{}: margin against {} (budget {}, seed {})", id, axis.name,
                             checks::to_string(sweep.options.budget.level), sweep.options.seed);
    plot.x_label = axis.name;
    plot.y_label = "margin = discrepancy / tolerance (> 1 fails)";
    plot.log_x = axis.log_scale;
    std::map<std::string, checks::Curve> by_outcome;
    checks::Curve line = checks::Curve::line("margin");
    checks::Curve without_bias = checks::Curve::line("margin without the bias allowance (gap / noise)");
    double lo = 0, hi = 0, smallest = 0, largest = 0;
    bool any = false;
    for (const nlohmann::json& record : records) {
      if (!record.contains("margin") || !record["margin"].is_number()) continue;
      const double x = axis_number(record["point"][axis.name].get<std::string>());
      const double y = record["margin"].get<double>();
      line.add(x, y);
      const std::string outcome = record["outcome"].get<std::string>();
      by_outcome.try_emplace(outcome, checks::Curve::points(outcome)).first->second.add(x, y);
      lo = any ? std::min(lo, x) : x;
      hi = any ? std::max(hi, x) : x;
      smallest = any ? std::min(smallest, y) : y;
      largest = any ? std::max(largest, y) : y;
      any = true;
      if (record.contains("margin_without_bias") && record["margin_without_bias"].is_number()) {
        const double w = record["margin_without_bias"].get<double>();
        without_bias.add(x, w);
        smallest = std::min(smallest, w);
        largest = std::max(largest, w);
      }
    }
    if (!any) return;
    plot.log_y = smallest > 0 && largest / smallest > 100;
    plot.add(line);
    if (!without_bias.x.empty()) plot.add(without_bias);
    for (auto& [outcome, curve] : by_outcome) plot.add(curve);
    plot.add(checks::Curve::line("margin 1: the tolerance").add(lo, 1).add(hi, 1));
    draw_plot(plot, directory, "sweep.svg");
  } else if (sweep.axes.size() == 2) {
    const SweepAxis& x_axis = sweep.axes[0];
    const SweepAxis& y_axis = sweep.axes[1];
    std::string data = "# x y margin(capped at 2 for colour; -1: none) verdict\n";
    bool any_margin = false, any_without = false;
    for (const nlohmann::json& record : records) {
      const bool has_margin = record.contains("margin") && record["margin"].is_number();
      (has_margin ? any_margin : any_without) = true;
      data += fmt::format("{} {} {} {}\n", record["point"][x_axis.name].get<std::string>(),
                          record["point"][y_axis.name].get<std::string>(),
                          has_margin ? std::min(2.0, record["margin"].get<double>()) : -1.0,
                          outcome_letter(record["outcome"].get<std::string>()));
    }
    const std::string title = fmt::format(
        "{}: margin = discrepancy / tolerance (colour capped at 2)\nP PASS, F FAIL, I INCONCLUSIVE, E ERROR, "
        "R refused (grey: no margin)",
        id);
    draw_gnuplot(directory / "sweep.svg", data, [&](const std::string& data_name, const std::string& svg_name) {
      std::string script = "set terminal svg size 860,640 noenhanced font 'sans,12' background rgb 'white'\n";
      script += fmt::format("set output {}\nset title {}\nset xlabel {}\nset ylabel {}\n", gnuplot_quoted(svg_name),
                            gnuplot_quoted(title), gnuplot_quoted(x_axis.name), gnuplot_quoted(y_axis.name));
      if (x_axis.log_scale) script += "set logscale x\n";
      if (y_axis.log_scale) script += "set logscale y\n";
      script += "set autoscale fix\nset offsets graph 0.08, graph 0.08, graph 0.08, graph 0.08\nset cbrange [0:2]\n"
                "set cblabel 'margin'\nset palette defined (0 '#1a9850', 1 '#fee08b', 2 '#d73027')\n";
      const std::string source = gnuplot_quoted(data_name);
      std::vector<std::string> parts;
      if (any_margin) {
        parts.push_back(fmt::format("{} using 1:2:($3 >= 0 ? $3 : NaN) with points pt 5 ps 4 palette notitle", source));
      }
      if (any_without) {
        parts.push_back(fmt::format("{} using 1:($3 < 0 ? $2 : NaN) with points pt 5 ps 4 lc rgb '#bbbbbb' notitle",
                                    source));
      }
      parts.push_back(fmt::format("{} using 1:2:4 with labels notitle", source));
      script += "plot ";
      for (std::size_t i = 0; i < parts.size(); ++i) script += (i == 0 ? "" : ", \\\n     ") + parts[i];
      return script + "\n";
    });
  }
}

std::vector<nlohmann::json> run_sweep(const Sweep& sweep, const std::filesystem::path& directory, bool resume,
                                      const std::function<void(std::size_t, std::size_t)>& progress) {
  prepare_output_directory(directory);
  SweepJournal journal(sweep, directory, resume);
  const std::size_t total = sweep.size();
  if (progress) progress(journal.done_count(), total);
  for (std::size_t i = 0; i < total; ++i) {
    if (journal.done(i)) continue;
    journal.append(evaluate_sweep_point(sweep, i));
    if (progress) progress(journal.done_count(), total);
  }
  std::vector<nlohmann::json> records = journal.records();
  write_sweep_outputs(sweep, records, directory);
  return records;
}

}  // namespace dyncheck::reports
