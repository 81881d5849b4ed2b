#include "dyncheck/reports/plot.hpp"

#include <gtest/gtest.h>

namespace dyncheck::reports {
namespace {

checks::Plot example_plot() {
  checks::Plot plot{"p", "a \"quoted\" title", "t", "y", false, true, {}};
  plot.curves.push_back({"theory", checks::Curve::Style::line, {0, 1}, {1, 2}, {}, {}});
  plot.curves.push_back({"simulation", checks::Curve::Style::band, {0, 1}, {1.1, 2.1}, {1.0, 2.0}, {1.2, 2.2}});
  return plot;
}

TEST(Plot, DataHasOneBlockPerCurveWithBandColumns) {
  const std::string data = plot_data(example_plot());
  EXPECT_NE(data.find("0 1 1 1\n1 2 2 2\n\n\n"), std::string::npos) << data;
  EXPECT_NE(data.find("1 2.1000000000000001 2 2.2000000000000002\n"), std::string::npos) << data;
}

TEST(Plot, ScriptEscapesQuotesAndDrawsBandsAsFilledCurves) {
  const std::string script = gnuplot_script(example_plot(), "d.dat", "p.svg");
  EXPECT_NE(script.find("set title \"a \\\"quoted\\\" title\""), std::string::npos) << script;
  EXPECT_NE(script.find("set logscale y"), std::string::npos);
  EXPECT_NE(script.find("\"d.dat\" index 1 using 1:3:4 with filledcurves"), std::string::npos) << script;
}

TEST(Plot, ImageCurvesAreHeatmapsWithTheirOwnLabel) {
  checks::Plot plot{"h", "heat", "column", "row", false, false, {}};
  checks::Curve cells = checks::Curve::image("learned");
  cells.add_cell(0, 0, 1).add_cell(1, 0, -0.5);
  plot.add(std::move(cells));
  const std::string data = plot_data(plot);
  EXPECT_NE(data.find("1 0 -0.5 -0.5\n"), std::string::npos) << data;  // the value in lower = upper
  const std::string script = gnuplot_script(plot, "d.dat", "h.svg");
  EXPECT_NE(script.find("set yrange [*:*] reverse"), std::string::npos) << script;
  EXPECT_NE(script.find("set cbrange [-1:1]"), std::string::npos) << script;
  EXPECT_NE(script.find("\"d.dat\" index 0 using 1:2:3 with image title \"learned\""), std::string::npos) << script;
}

TEST(Plot, PointsCurvesAreNeverHeatmapsWhateverTheirLabel) {
  checks::Plot plot{"p", "points", "x", "y", false, false, {}};
  plot.add(checks::Curve::points("heatmap: not one").add(0, 1, 0.5, 1.5));
  const std::string script = gnuplot_script(plot, "d.dat", "p.svg");
  EXPECT_EQ(script.find("with image"), std::string::npos) << script;
  EXPECT_EQ(script.find("cbrange"), std::string::npos) << script;
  EXPECT_NE(script.find("with yerrorbars"), std::string::npos) << script;
}

}  // namespace
}  // namespace dyncheck::reports
