#pragma once
// The kernels family (Song et al., NeurIPS 2024: Gaussian vs softmax attention): one make_<claim>() each.

#include <memory>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/registry.hpp"

namespace dyncheck::checks::kernels {

std::unique_ptr<Claim> make_value_only_closed_form();
std::unique_ptr<Claim> make_value_only_floor_below_Nn();
std::unique_ptr<Claim> make_pl_certificate_every_step();
std::unique_ptr<Claim> make_q_only_separation();
std::unique_ptr<Claim> make_cross_kernel_softmax_floor();
std::unique_ptr<Claim> make_scale_sweep_softmax_floor();

inline void register_claims(Registry& registry) {
  registry.add(make_value_only_closed_form());
  registry.add(make_value_only_floor_below_Nn());
  registry.add(make_pl_certificate_every_step());
  registry.add(make_q_only_separation());
  registry.add(make_cross_kernel_softmax_floor());
  registry.add(make_scale_sweep_softmax_floor());
}

}  // namespace dyncheck::checks::kernels
