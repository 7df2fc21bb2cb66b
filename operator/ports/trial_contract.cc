#include "operator/ports/trial_contract.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "contract/trainer_contract.h"
#include "nlohmann/json.hpp"
#include "operator/core/parse.h"

namespace bsw {
namespace {

std::string FormatG(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string ParamsJson(const std::vector<std::pair<std::string, std::string>>& params) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : params) {
    std::int64_t integer = 0;
    double real = 0;
    if (ParsesFully(value, &integer)) {
      object[name] = integer;
    } else if (ParsesFully(value, &real) && std::isfinite(real)) {
      object[name] = real;
    } else {
      object[name] = value;
    }
  }
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> TrialContractEnv(
    const SegmentSpec& spec,
    const std::function<std::string(const std::string&)>& checkpoint_dir_of, int metrics_port) {
  std::string milestones;
  for (double milestone : spec.milestones) {
    milestones += (milestones.empty() ? "" : ",") + FormatG(milestone);
  }
  std::vector<std::pair<std::string, std::string>> env = {
      {kEnvSweep, spec.sweep},
      {kEnvTrial, spec.trial},
      {kEnvParams, ParamsJson(spec.params)},
      {kEnvMilestones, milestones},
      {kEnvUntil, FormatG(spec.until_resource)},
      {kEnvMaxResource, FormatG(spec.max_resource)},
      {kEnvCheckpointDir, checkpoint_dir_of(spec.trial)},
      {kEnvMetricsPort, std::to_string(metrics_port)}};
  if (spec.snapshots) {
    std::string flags;
    for (const std::string& flag : spec.mutable_flags) flags += (flags.empty() ? "" : ",") + flag;
    env.emplace_back(kEnvSnapshots, "1");
    env.emplace_back(kEnvMutable, flags);
  }
  if (!spec.exploit_trial.empty()) {
    env.emplace_back(kEnvExploitDir, checkpoint_dir_of(spec.exploit_trial));
    env.emplace_back(kEnvExploitAt, FormatG(spec.exploit_at));
  }
  return env;
}

}  // namespace bsw
