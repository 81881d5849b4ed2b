// dyncheck.theory.topic: the topic-structure theory (specs/topic.md) on the claims' own templates.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dyncheck/theory/topic/stage_one.hpp"
#include "dyncheck/theory/topic/stage_two.hpp"
#include "theory/common.hpp"

namespace py = pybind11;
using namespace dyncheck;
using namespace dyncheck::python;

namespace {

/// The second moments of theta: Dir(alpha 1_T) when alpha is given, a uniform tau-subset when tau is.
template <class S>
theory::topic::ThetaMoments<S> moments(int T, const std::optional<double>& alpha, const std::optional<int>& tau) {
  if (T < 1) throw std::invalid_argument("T must be >= 1; got " + std::to_string(T));
  if (alpha.has_value() == tau.has_value()) throw std::invalid_argument("give exactly one of alpha (Dirichlet) or tau (subset)");
  if (alpha) {
    if (!(*alpha > 0)) throw std::invalid_argument("alpha must be > 0");
    return theory::topic::dirichlet_moments<S>(T, S(*alpha));
  }
  if (*tau < 1 || *tau > T) throw std::invalid_argument("tau must be in [1, T]; got " + std::to_string(*tau));
  return theory::topic::subset_moments<S>(T, *tau);
}

template <class S>
py::dict blocks(const theory::topic::BlockValues<S>& b) {
  py::dict d;
  d["diag"] = out(b.diag);
  d["same"] = out(b.same);
  d["diff"] = out(b.diff);
  d["mask"] = out(b.mask);
  return d;
}

void check_mask(double p_m, double p_c, double p_r) {
  if (!(p_m > 0 && p_m <= 1) || !(p_c >= 0) || !(p_r > 0) || !(p_c + p_r <= 1)) {
    throw std::invalid_argument("needs 0 < p_m <= 1, p_c >= 0, p_r > 0, p_c + p_r <= 1");
  }
}

}  // namespace

void bind_theory_topic(py::module_& m) {
  auto topic = m.def_submodule("theory_topic", "Topic structure (specs/topic.md)");
  topic.def(
      "stage1_excluded_keys",
      [](int T, int v, double lambda_, std::optional<double> alpha, std::optional<int> tau,
         std::optional<std::pair<int, int>> N, double p_m, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          if (v < 1) throw std::invalid_argument("v must be >= 1; got " + std::to_string(v));
          if (!(lambda_ >= 0)) throw std::invalid_argument("lambda must be >= 0");
          const S rho_0 = theory::topic::rho_topic(moments<S>(T, alpha, tau), v);
          if (!N) return blocks(theory::topic::excluded_keys_closed_form<S>(T, v, rho_0, S(lambda_)));
          const auto length = theory::topic::length_statistics<S>(N->first, N->second, S(p_m));
          return blocks(theory::topic::excluded_keys_closed_form<S>(T, v, rho_0, S(lambda_), &length));
        });
      },
      "The stage-1 ridge optimum of W^V for the (C) key set (specs/topic.md §4) as block values\n"
      "{diag, same, diff, mask}: theta ~ Dir(alpha) or a uniform tau-subset; N = (N_min, N_max) for\n"
      "finite documents (with masking rate p_m), None for N -> infinity.",
      py::arg("T"), py::arg("v"), py::arg("lambda_"), py::arg("alpha") = py::none(), py::arg("tau") = py::none(),
      py::arg("N") = py::none(), py::arg("p_m") = 0.15, py::arg("digits") = py::none());
  topic.def(
      "stage1_all_keys_min_norm",
      [](int T, int v, double p_m, double p_c, double p_r, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          if (T < 1 || v < 1) throw std::invalid_argument("T and v must be >= 1");
          check_mask(p_m, p_c, p_r);
          return blocks(theory::topic::all_keys_min_norm_closed_form<S>(
              T, v, theory::topic::mask_fractions<S>(S(p_m), S(p_c), S(p_r))));
        });
      },
      "The (P) key set's lambda -> 0, N -> infinity minimum-norm optimum as block values.", py::arg("T"),
      py::arg("v"), py::arg("p_m"), py::arg("p_c"), py::arg("p_r"), py::arg("digits") = py::none());
  topic.def(
      "prior_free_law",
      [](int T, double p_c, double p_r, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          if (T < 1 || !(p_c >= 0) || !(p_r > 0)) throw std::invalid_argument("needs T >= 1, p_c >= 0, p_r > 0");
          return out(theory::topic::prior_free_law<S>(T, S(p_c), S(p_r)));
        });
      },
      "The stage-2 attention minimiser E* = 1 + T p_c / p_r of the prior-free law (specs/topic.md §5).",
      py::arg("T"), py::arg("p_c"), py::arg("p_r"), py::arg("digits") = py::none());
  topic.def(
      "subset_law",
      [](int T, int v, int tau, double p_c, double p_r, double c, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          if (T < 1 || v < 1 || tau < 1 || tau > T) throw std::invalid_argument("needs T, v >= 1 and 1 <= tau <= T");
          if (!(p_c >= 0) || !(p_r > 0) || !(c > 0)) throw std::invalid_argument("needs p_c >= 0, p_r > 0, c > 0");
          return out(theory::topic::subset_law<S>(T, v, tau, S(p_c), S(p_r), S(c)));
        });
      },
      "E* for tau-subset documents with W^V = c * blockones (inf where no finite minimiser exists).",
      py::arg("T"), py::arg("v"), py::arg("tau"), py::arg("p_c"), py::arg("p_r"), py::arg("c"),
      py::arg("digits") = py::none());
  topic.def(
      "stage2_landscape",
      [](int T, int v, int tau, double p_m, double p_c, double p_r, double c, const std::vector<double>& E,
         std::optional<std::pair<int, int>> N, const std::string& loss, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          if (T < 1 || v < 1) throw std::invalid_argument("T and v must be >= 1");
          check_mask(p_m, p_c, p_r);
          if (!(c > 0)) throw std::invalid_argument("c must be > 0");
          if (loss != "squared" && loss != "cross_entropy") {
            throw std::invalid_argument("loss must be 'squared' or 'cross_entropy'; got '" + loss + "'");
          }
          for (double e : E) {
            if (!(e > 0)) throw std::invalid_argument("every E must be > 0");
          }
          const auto kind =
              loss == "squared" ? theory::topic::StageTwoLoss::squared : theory::topic::StageTwoLoss::cross_entropy;
          std::vector<S> Es(E.begin(), E.end()), values;
          if (N) {
            values = theory::topic::finite_n_subset_losses<S>(T, v, tau, S(p_m), S(p_c), S(p_r), S(c), Es, N->first,
                                                              N->second, theory::topic::RandomToken::word, kind);
          } else {
            for (const S& e : Es) {
              values.push_back(theory::topic::infinite_n_subset_loss<S>(T, v, tau, S(p_c), S(p_r), S(c), e,
                                                                        theory::topic::RandomToken::word, kind));
            }
          }
          return out_series(values);
        });
      },
      "The stage-2 MLM loss L(E) against the same-topic attention ratio E (specs/topic.md §5-§6) for\n"
      "tau-subset documents (tau in {1, 2, 3}) with W^V = c * blockones: N = (N_min, N_max) gives the exact\n"
      "finite-N multinomial sum, None the N -> infinity value; loss 'squared' or 'cross_entropy'.",
      py::arg("T"), py::arg("v"), py::arg("tau"), py::arg("p_m"), py::arg("p_c"), py::arg("p_r"), py::arg("c"),
      py::arg("E"), py::arg("N") = py::none(), py::arg("loss") = "squared", py::arg("digits") = py::none());
}
