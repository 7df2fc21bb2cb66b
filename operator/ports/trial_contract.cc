#include "operator/ports/trial_contract.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

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
      {"BUDGETSWEEP_SWEEP", spec.sweep},
      {"BUDGETSWEEP_TRIAL", spec.trial},
      {"BUDGETSWEEP_PARAMS", ParamsJson(spec.params)},
      {"BUDGETSWEEP_MILESTONES", milestones},
      {"BUDGETSWEEP_UNTIL", FormatG(spec.until_resource)},
      {"BUDGETSWEEP_MAX_RESOURCE", FormatG(spec.max_resource)},
      {kEnvCheckpointDir, checkpoint_dir_of(spec.trial)},
      {"BUDGETSWEEP_METRICS_PORT", std::to_string(metrics_port)}};
  if (spec.snapshots) {
    std::string flags;
    for (const std::string& flag : spec.mutable_flags) flags += (flags.empty() ? "" : ",") + flag;
    env.emplace_back("BUDGETSWEEP_SNAPSHOTS", "1");
    env.emplace_back("BUDGETSWEEP_MUTABLE", flags);
  }
  if (!spec.exploit_trial.empty()) {
    env.emplace_back("BUDGETSWEEP_EXPLOIT_DIR", checkpoint_dir_of(spec.exploit_trial));
    env.emplace_back("BUDGETSWEEP_EXPLOIT_AT", FormatG(spec.exploit_at));
  }
  return env;
}

}  // namespace bsw
