#include "dyncheck/checks/family.hpp"

#include <algorithm>

namespace dyncheck::checks {

const std::vector<FamilyInfo>& builtin_families() {
  static const std::vector<FamilyInfo> families = {
      {"calib",
       "calibration (known answer)",
       "issue #2",
       {"Known-answer claims that exercise every piece of the pipeline (50/100-digit theory, the ODE solver's "
        "error estimate, replicated SGD, half-widths and the false-failure split); they check dyncheck, not a "
        "paper."}},
      {"joma",
       "Tian, Wang, Zhang, Chen, Du, JoMA: demystifying multilayer transformers via joint dynamics of MLP and "
       "attention (ICLR 2024)",
       "specs/joma.md",
       {"Not checked: spec §7 claim 10, the WikiText-2 reproduction. The data set is not on this machine and "
        "cannot be fetched (only Debian packages and npm are reachable), and pretrained-model curves would not "
        "fit the full budget either.",
        "Not checked: the Table 1 combinatorial HBLT generator and learning on HBLT data; claim "
        "joma.hblt_cooccurrence checks the §5 co-occurrence formula on a channel-model tree generator.",
        "Theorem statements are partly [reconstructed] (specs/joma.md §0); each claim carries its tag."}},
      {"scb",
       "Ren, Wang, Lee, Learning and transferring sparse contextual bigrams with linear transformers (NeurIPS 2024)",
       "specs/scb.md",
       {"The paper's Theorems 3.1/G.1 and 4.1 and Lemmas C.5/C.6 are not available in full text: the claims "
        "check the [derived] analogues of specs/scb.md §4-§5 (exact reduced dynamics, escape time, phases, "
        "noise-corrected model) and the [reconstructed] algorithm of §3 (preconditioners, stage-2 proximal rule, "
        "final normalisation).",
        "The Gaussian-noise population simulation at N in {100, 500}, T = 1e5 (spec §5) runs only at the full "
        "budget, inside scb.sgd_tracks_noise_corrected_model.",
        "Spec §3.1 writes the concentrated softmax preconditioner as a_1(1 - a_1) e_1 e_1^T. That is the entry "
        "of J = diag(a) - aa^T; the preconditioner is J^2, whose entry is (a_1(1 - a_1))^2. "
        "scb.softmax_preconditioner_concentrates checks the squared coefficient, and the spec's literal one is "
        "its mutant.",
        "Spec §5's noise-corrected model injects the attention noise alpha^2 K_2 per position, the value for "
        "near-uniform attention (E[rr^T] ~ Sigma). Once the attention has concentrated (stage 2) it over-predicts "
        "the SGD noise floor 2-3x. scb.stage_two_l1_error_flat_in_T uses the residual covariance of the current "
        "state instead ([derived], theory::scb::attention_gradient_variance) and keeps the spec's value as its "
        "mutant; scb.sgd_tracks_noise_corrected_model (stage 1) checks the spec's model as written and, beside it, "
        "the model with the state's attention noise."}},
  };
  return families;
}

const FamilyInfo* find_family(std::string_view id) {
  const auto& families = builtin_families();
  const auto found = std::find_if(families.begin(), families.end(), [&](const FamilyInfo& f) { return f.id == id; });
  return found == families.end() ? nullptr : &*found;
}

}  // namespace dyncheck::checks
