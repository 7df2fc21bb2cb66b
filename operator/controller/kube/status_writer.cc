#include "operator/controller/kube/status_writer.h"

#include <utility>

#include "operator/adapters/kube/resources.h"

namespace bsw {

Status PatchSweepStatus(kube::Client& client, const std::string& ns, const std::string& name,
                        nlohmann::json fields) {
  return client.PatchStatus(kube::kBudgetSweeps, ns, name, {{"status", std::move(fields)}})
      .status();
}

StatusWriter::StatusWriter(kube::Client& client, std::string ns, std::string name,
                           nlohmann::json read)
    : client_(client), ns_(std::move(ns)), name_(std::move(name)), written_(std::move(read)) {}

Status StatusWriter::Write(nlohmann::json status) {
  if (status == written_) return OkStatus();
  nlohmann::json patch = status;
  for (const auto& [field, value] : written_.items()) {
    if (!status.contains(field)) patch[field] = nullptr;
  }
  if (Status s = PatchSweepStatus(client_, ns_, name_, std::move(patch)); !s.ok()) return s;
  written_ = std::move(status);
  return OkStatus();
}

}  // namespace bsw
