#include "dyncheck/checks/params.hpp"

#include <gtest/gtest.h>

namespace dyncheck::checks {
namespace {

const std::vector<ParamSpec> specs = {
    {"d", 4, 1, 16, true, false, "dimension"},
    {"eta", 0.1, 0, 1, false, true, "step"},
};

std::string error_of(const std::vector<ParamOverride>& overrides) {
  try {
    (void)Params::resolve(specs, overrides);
  } catch (const ParamError& error) {
    return error.parameter() + ": " + error.what();
  }
  return "";
}

TEST(Params, DefaultsAndOverrides) {
  const Params params = Params::resolve(specs, {{"eta", "0.25"}});
  EXPECT_EQ(params.get_int("d"), 4);
  EXPECT_DOUBLE_EQ(params.get("eta"), 0.25);
}

TEST(Params, EveryParamErrorNamesItsParameter) {
  // A claim's own message that does not mention the parameter as a word gets the name in front.
  EXPECT_STREQ(ParamError("tau", "must be in [1, T] = [1, 23]").what(), "parameter 'tau': must be in [1, T] = [1, 23]");
  EXPECT_STREQ(ParamError("batch", "about 3e+07 operations, above the budget's 2e+07").what(),
               "parameter 'batch': about 3e+07 operations, above the budget's 2e+07");
  // Mentioned as a word (quoted, as an option, at the start): unchanged.
  EXPECT_STREQ(ParamError("Q", "parameter 'Q' must be in [1, T/4]").what(), "parameter 'Q' must be in [1, T/4]");
  EXPECT_STREQ(ParamError("threads", "--threads must be an integer").what(), "--threads must be an integer");
  EXPECT_STREQ(ParamError("T", "T v = 140 words: too many").what(), "T v = 140 words: too many");
  // Inside another word is not a mention.
  EXPECT_STREQ(ParamError("T", "Tv too large").what(), "parameter 'T': Tv too large");
  EXPECT_STREQ(ParamError("", "no parameter").what(), "no parameter");
}

TEST(Params, ErrorsNameTheParameterAndItsRange) {
  EXPECT_EQ(error_of({{"d", "0"}}), "d: parameter 'd' must be an integer in [1, 16] (dimension); got 0");
  EXPECT_EQ(error_of({{"d", "2.5"}}),
            "d: parameter 'd' must be an integer in [1, 16] (dimension); got 2.5, which is not an integer (an integer "
            "may also be written in decimal notation with a zero fraction or an exponent, e.g. 3.0, 3e0)");
  EXPECT_EQ(error_of({{"eta", "0"}}), "eta: parameter 'eta' must be a number in (0, 1] (step); got 0");
  EXPECT_EQ(error_of({{"eta", "1x"}}),
            "eta: parameter 'eta' must be a number in (0, 1] (step); got '1x', which is not a number in decimal "
            "notation ([+-]digits[.digits][e[+-]digits], e.g. 12, -0.5, 1.5e-3)");
  EXPECT_EQ(error_of({{"eta", "1"}}), "");
}

/// The message of parse_param_value's ParamError, or "" when `text` is accepted.
std::string value_error(const ParamSpec& spec, const std::string& text) {
  try {
    (void)parse_param_value(spec, text);
  } catch (const ParamError& error) {
    EXPECT_EQ(error.parameter(), spec.name);
    return error.what();
  }
  return "";
}

TEST(Params, AcceptsExactlyPlainDecimalForms) {
  const ParamSpec& eta = specs[1];
  for (const std::string text : {"1", "0.25", "+0.5", "1e-3", "2.5E-1", "25E-2", "1e+0", "0.000001", "1.0e0", "000.5"}) {
    EXPECT_EQ(value_error(eta, text), "") << text;
  }
  EXPECT_EQ(parse_param_value(eta, "2.5E-1"), 0.25);
  EXPECT_EQ(parse_param_value(eta, "+0.5"), 0.5);
  for (const std::string text : {"0x1p-3", "0x0.8", " 0.5", "0.5 ", "\t0.5", "0.5\n", "inf", "-inf", "nan", "NAN",
                                 "", "+", "-", ".5", "5.", "1e", "1e+", "1.e3", "0.5f", "1,5", "1_0", "e3", "++1",
                                 "0.5e-1.0", "١"}) {
    const std::string message = value_error(eta, text);
    EXPECT_NE(message.find("parameter 'eta' must be a number in (0, 1] (step); got '" + text +
                           "', which is not a number in decimal notation"),
              std::string::npos)
        << "'" << text << "': " << message;
  }
}

TEST(Params, HexIsNotAnInteger) {
  EXPECT_NE(value_error(specs[0], "0x10").find("got '0x10', which is not a number in decimal notation"),
            std::string::npos);
  EXPECT_NE(value_error(specs[0], "-0x1").find("got '-0x1'"), std::string::npos);
}

TEST(Params, IntegersAcceptIntegralDecimalFormsOnly) {
  const ParamSpec& d = specs[0];
  EXPECT_EQ(parse_param_value(d, "3"), 3);
  EXPECT_EQ(parse_param_value(d, "3.0"), 3);
  EXPECT_EQ(parse_param_value(d, "1.6e1"), 16);
  EXPECT_EQ(parse_param_value(d, "+16"), 16);
  EXPECT_NE(value_error(d, "3.5").find("got 3.5, which is not an integer"), std::string::npos);
  EXPECT_NE(value_error(d, "3.0000000001").find("got 3.0000000001, which is not an integer"), std::string::npos);
  EXPECT_EQ(value_error(d, "17"), "parameter 'd' must be an integer in [1, 16] (dimension); got 17");
  EXPECT_EQ(value_error(d, "-0"), "parameter 'd' must be an integer in [1, 16] (dimension); got -0");
}

TEST(Params, RejectedValuesArePrintedAsWritten) {
  const ParamSpec spec{"N", 4, 1, 10, false, false, "size"};
  EXPECT_EQ(value_error(spec, "10.00000001"), "parameter 'N' must be a number in [1, 10] (size); got 10.00000001");
  EXPECT_EQ(value_error(spec, "1.00E+01"), "");
  // A value is the double nearest to the decimal written: 0.99999999999999999999 is 1.
  EXPECT_EQ(value_error(spec, "0.99999999999999999999"), "");
  EXPECT_EQ(value_error(spec, "0.9999999999999999"),
            "parameter 'N' must be a number in [1, 10] (size); got 0.9999999999999999");
}

TEST(Params, OverflowAndUnderflowAreOutOfRange) {
  const ParamSpec& eta = specs[1];
  EXPECT_EQ(value_error(eta, "1e400"),
            "parameter 'eta' must be a number in (0, 1] (step); got 1e400, which is out of range: its magnitude is "
            "above the largest double, 1.7976931348623157e+308");
  EXPECT_NE(value_error(eta, "-1e400").find("got -1e400, which is out of range: its magnitude is above"),
            std::string::npos);
  EXPECT_EQ(value_error(eta, "1e-400"),
            "parameter 'eta' must be a number in (0, 1] (step); got 1e-400, which is out of range: it is not zero, yet "
            "its magnitude is below the smallest positive double, 5e-324");
  EXPECT_NE(value_error(eta, "1e99999999999999999999").find("out of range"), std::string::npos);
  // Zero written with a huge exponent is zero, not an underflow.
  EXPECT_EQ(value_error(eta, "0e-99999"), "parameter 'eta' must be a number in (0, 1] (step); got 0e-99999");
}

TEST(Params, RangeTextPrintsBoundsThatReadBackExactly) {
  const ParamSpec spec{"x", 0.5, 1.0 / 3.0, 1e6, false, true, "x"};
  EXPECT_EQ(spec.range_text(), "a number in (0.3333333333333333, 1000000]");
  const ParamSpec tiny{"lambda", 1e-4, 1.52669e-05, 0.0006666891, false, false, "l"};
  EXPECT_EQ(tiny.range_text(), "a number in [1.52669e-05, 0.0006666891]");
  EXPECT_THROW(tiny.validate(0.00066668911), ParamError);
  try {
    spec.validate(1000000.5);
    ADD_FAILURE() << "1000000.5 accepted";
  } catch (const ParamError& error) {
    EXPECT_EQ(std::string(error.what()), "parameter 'x' must be a number in (0.3333333333333333, 1000000] (x); got 1000000.5");
  }
}

/// The message of parse(text), or "" when accepted.
template <typename Parse>
std::string message_of(Parse parse, const std::string& text) {
  try {
    (void)parse(text);
  } catch (const ParamError& error) {
    return error.parameter() + ": " + error.what();
  }
  return "";
}

TEST(Params, SeedIsADecimalIntegerInTheUint64Range) {
  EXPECT_EQ(parse_seed("--seed", "0"), 0U);
  EXPECT_EQ(parse_seed("--seed", "20261122"), 20261122U);
  EXPECT_EQ(parse_seed("--seed", "18446744073709551615"), 18446744073709551615U);
  EXPECT_EQ(parse_seed("DYNCHECK_SEED", "007"), 7U);
  const auto seed = [](const std::string& text) { return parse_seed("--seed", text); };
  for (const std::string text : {"-1", "", " 1", "1 ", "0x10", "+1", "1e3", "1.0", "abc", "-0"}) {
    EXPECT_EQ(message_of(seed, text),
              "seed: --seed must be an integer in [0, 2^64 - 1] = [0, 18446744073709551615]; got '" + text +
                  "', which is not an integer written in decimal digits (0-9 only: no sign, no spaces, no hex)")
        << text;
  }
  for (const std::string text : {"18446744073709551616", "99999999999999999999999999"}) {
    EXPECT_EQ(message_of(seed, text),
              "seed: --seed must be an integer in [0, 2^64 - 1] = [0, 18446744073709551615]; got " + text +
                  ", which is out of range")
        << text;
  }
}

TEST(Params, ThreadCountIsBounded) {
  EXPECT_EQ(parse_thread_count("--threads", "1"), 1U);
  EXPECT_EQ(parse_thread_count("--threads", "1024"), 1024U);
  const auto threads = [](const std::string& text) { return parse_thread_count("DYNCHECK_THREADS", text); };
  EXPECT_EQ(message_of(threads, "0"), "threads: DYNCHECK_THREADS must be an integer in [1, 1024]; got 0");
  EXPECT_EQ(message_of(threads, "1025"), "threads: DYNCHECK_THREADS must be an integer in [1, 1024]; got 1025");
  EXPECT_EQ(message_of(threads, "100000"), "threads: DYNCHECK_THREADS must be an integer in [1, 1024]; got 100000");
  EXPECT_NE(message_of(threads, "2 ").find("got '2 ', which is not an integer written in decimal digits"),
            std::string::npos);
  EXPECT_NE(message_of(threads, "").find("got ''"), std::string::npos);
}

TEST(Params, OverrideSyntax) {
  EXPECT_EQ(parse_param_override("a=1"), (ParamOverride{"a", "1"}));
  EXPECT_THROW(parse_param_override("a"), ParamError);
  EXPECT_THROW(parse_param_override("=1"), ParamError);
  EXPECT_EQ(parse_param_override("a="), (ParamOverride{"a", ""}));  // the empty value is rejected by its spec
  EXPECT_EQ(parse_param_override("a=b=c"), (ParamOverride{"a", "b=c"}));
}

}  // namespace
}  // namespace dyncheck::checks
