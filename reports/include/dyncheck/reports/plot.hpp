#pragma once
// SVG plots drawn by gnuplot: a data file and a script per plot, then `gnuplot script`.

#include <filesystem>
#include <functional>
#include <string>

#include "dyncheck/checks/verdict.hpp"

namespace dyncheck::reports {

/// The gnuplot script that draws `plot` into `svg_path` from the data file `data_path`
/// (one block per curve, as written by plot_data).
std::string gnuplot_script(const checks::Plot& plot, const std::string& data_path, const std::string& svg_path);
/// The data file: for each curve a block of "x y lower upper" rows, blocks separated by two blank lines.
std::string plot_data(const checks::Plot& plot);

/// Writes `<directory>/<relative_svg>` (and its .dat/.gp next to it) by running gnuplot; each file
/// is written whole or not at all (files.hpp). Throws WriteError when a file cannot be written and
/// std::runtime_error when gnuplot is missing or fails.
void draw_plot(const checks::Plot& plot, const std::filesystem::path& directory, const std::string& relative_svg);

/// Writes `svg` by running gnuplot on the script `script_for(data_name, svg_name)` (file names
/// relative to the svg's folder) with `data_text` written next to it as <stem>.dat, the script as
/// <stem>.gp; the same whole-or-nothing rules and errors as draw_plot.
void draw_gnuplot(const std::filesystem::path& svg, const std::string& data_text,
                  const std::function<std::string(const std::string& data_name, const std::string& svg_name)>& script_for);

/// `text` as a double-quoted gnuplot string.
std::string gnuplot_quoted(const std::string& text);

}  // namespace dyncheck::reports
