#include "dyncheck/reports/plot.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <functional>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "dyncheck/reports/files.hpp"

namespace dyncheck::reports {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {  // a line break in a title: gnuplot's escape, not a raw newline
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// A heatmap: a `points` curve whose label starts with "heatmap: ", its cells on a regular grid at (x, y) with the
/// value in lower (= upper), drawn `with image` on the colour range [-1, 1] (blue, white, red): normalise the values
/// first. (A convention of the plot writer, so that no core type changes; the JSON keeps style "points".)
bool is_heatmap(const checks::Curve& curve) {
  return curve.style == checks::Curve::Style::points && curve.label.rfind("heatmap: ", 0) == 0 &&
         curve.lower.size() == curve.x.size();
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string plot_data(const checks::Plot& plot) {
  std::string out;
  for (std::size_t c = 0; c < plot.curves.size(); ++c) {
    const checks::Curve& curve = plot.curves[c];
    out += fmt::format("# curve {}: {}\n", c, curve.label);
    for (std::size_t i = 0; i < curve.x.size(); ++i) {
      const double y = curve.y[i];
      const double lower = i < curve.lower.size() ? curve.lower[i] : y;
      const double upper = i < curve.upper.size() ? curve.upper[i] : y;
      out += fmt::format("{:.17g} {:.17g} {:.17g} {:.17g}\n", curve.x[i], y, lower, upper);
    }
    out += "\n\n";
  }
  return out;
}

std::string gnuplot_script(const checks::Plot& plot, const std::string& data_path, const std::string& svg_path) {
  std::string script = "set terminal svg size 860,520 noenhanced font 'sans,12' background rgb 'white'\n";
  script += fmt::format("set output {}\n", quoted(svg_path));
  script += fmt::format("set title {}\nset xlabel {}\nset ylabel {}\n", quoted(plot.title), quoted(plot.x_label),
                        quoted(plot.y_label));
  // Offsets keep points at the ends of the range, and their error bars, inside the frame.
  script += "set grid\nset key outside right top vertical\nset offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n";
  if (plot.log_x) script += "set logscale x\n";
  if (plot.log_y) script += "set logscale y\n";
  for (const checks::Curve& curve : plot.curves) {
    if (is_heatmap(curve)) {  // heatmaps: square cells, rows downwards like a matrix
      script += "set size ratio -1\nset yrange [*:*] reverse\nset palette defined (-1 'blue', 0 'white', 1 'red')\nset cbrange [-1:1]\n";
      break;
    }
  }
  std::vector<std::string> parts;
  for (std::size_t c = 0; c < plot.curves.size(); ++c) {
    const checks::Curve& curve = plot.curves[c];
    const std::string source = fmt::format("{} index {}", quoted(data_path), c);
    const std::size_t color = c + 1;
    switch (curve.style) {
      case checks::Curve::Style::line:
        parts.push_back(fmt::format("{} using 1:2 with lines lw 2 lc {} title {}", source, color, quoted(curve.label)));
        break;
      case checks::Curve::Style::points:
        if (is_heatmap(curve)) {  // the cell value is column 3 (lower = upper)
          parts.push_back(fmt::format("{} using 1:2:3 with image title {}", source, quoted(curve.label.substr(9))));
        } else if (curve.lower.empty()) {
          parts.push_back(fmt::format("{} using 1:2 with points pt 7 lc {} title {}", source, color, quoted(curve.label)));
        } else {
          parts.push_back(
              fmt::format("{} using 1:2:3:4 with yerrorbars pt 7 lc {} title {}", source, color, quoted(curve.label)));
        }
        break;
      case checks::Curve::Style::band:
        parts.push_back(fmt::format("{} using 1:3:4 with filledcurves fs transparent solid 0.25 noborder lc {} notitle",
                                    source, color));
        parts.push_back(
            fmt::format("{} using 1:2 with linespoints pt 7 ps 0.4 lc {} title {}", source, color, quoted(curve.label)));
        break;
    }
  }
  script += "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) script += (i == 0 ? "" : ", \\\n     ") + parts[i];
  script += "\n";
  return script;
}

void draw_gnuplot(const std::filesystem::path& svg, const std::string& data_text,
                  const std::function<std::string(const std::string&, const std::string&)>& script_for) {
  std::error_code error;
  std::filesystem::create_directories(svg.parent_path(), error);
  if (error) {
    throw WriteError(fmt::format("cannot create the directory {}: {}", svg.parent_path().string(), error.message()));
  }
  std::filesystem::path data = svg, script = svg;
  data.replace_extension(".dat");
  script.replace_extension(".gp");
  write_file_atomically(data, data_text);
  // The script names its files relative to its own folder, so the folder can be moved.
  write_file_atomically(script, script_for(data.filename().string(), svg.filename().string()));
  // gnuplot draws into <name>.svg.partial, from a copy of the script that names that file;
  // the SVG is renamed into place only once gnuplot has succeeded and the file is complete.
  const std::filesystem::path partial_svg = partial_path(svg);
  const std::filesystem::path run_script = partial_path(script);
  std::filesystem::remove(partial_svg, error);  // gnuplot must create a fresh regular file
  write_file_atomically(run_script, script_for(data.filename().string(), partial_svg.filename().string()));
  const std::string command = fmt::format("cd {} && gnuplot {} 2>&1", shell_quoted(svg.parent_path().string()),
                                          shell_quoted(run_script.filename().string()));
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    std::filesystem::remove(run_script, error);
    throw std::runtime_error("cannot start gnuplot");
  }
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  std::filesystem::remove(run_script, error);
  if (status != 0) {
    std::filesystem::remove(partial_svg, error);
    throw std::runtime_error(fmt::format("gnuplot failed (status {}) on {}; is gnuplot installed? "
                                         "(scripts/install-deps.sh installs gnuplot-nox)\n{}",
                                         status, script.string(), output));
  }
  // gnuplot does not always report a failed write in its status: a complete SVG ends with </svg>.
  std::string content;
  if (std::filesystem::is_regular_file(std::filesystem::symlink_status(partial_svg, error))) {
    std::ifstream drawn(partial_svg, std::ios::binary);
    content.assign(std::istreambuf_iterator<char>(drawn), std::istreambuf_iterator<char>());
  }
  if (content.find("</svg>") == std::string::npos) {
    std::filesystem::remove(partial_svg, error);
    throw WriteError(fmt::format("cannot write {}: gnuplot left an incomplete SVG{}{}", svg.string(),
                                 output.empty() ? "" : "\n", output));
  }
  commit_file(partial_svg, svg);
}

void draw_plot(const checks::Plot& plot, const std::filesystem::path& directory, const std::string& relative_svg) {
  draw_gnuplot(directory / relative_svg, plot_data(plot), [&plot](const std::string& data, const std::string& svg) {
    return gnuplot_script(plot, data, svg);
  });
}

std::string gnuplot_quoted(const std::string& text) { return quoted(text); }

}  // namespace dyncheck::reports
