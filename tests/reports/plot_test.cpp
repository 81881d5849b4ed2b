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

}  // namespace
}  // namespace dyncheck::reports
