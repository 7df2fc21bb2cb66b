#ifndef BSW_CMD_OPERATOR_COMMAND_H_
#define BSW_CMD_OPERATOR_COMMAND_H_

#include <string>

namespace bsw {

// `budgetsweep operator`: the flags, with their defaults.
struct OperatorOptions {
  std::string kubeconfig;  // empty: $KUBECONFIG, then the in-cluster service account
  std::string ns;          // empty: every namespace
  std::string metrics_addr = ":8080";
  // HTTPS on metrics_addr, /metrics only for bearer tokens that pass a TokenReview and a
  // SubjectAccessReview for get on /metrics. The certificate of the two files (re-read when they
  // change), else a self-signed one made at start.
  bool metrics_secure = false;
  std::string metrics_cert_file;
  std::string metrics_key_file;
  std::string health_addr = ":8081";
  // Before a sweep's first pod, check with SubjectAccessReviews that its creator (recorded by the
  // chart's MutatingAdmissionPolicy) may create pods and use the template's service account.
  bool check_creator_rights = false;
  bool leader_elect = false;
  std::string leader_election_namespace;  // empty: --namespace, else the client's namespace
  std::string lease_name = "budgetsweep-operator";
  double resync_seconds = 0.5;
  int trial_metrics_port = 9400;
  std::string checkpoint_dir = "/checkpoints";
  std::string collect_image;  // PodBackendOptions::collect_image
};

// Runs the operator until SIGTERM or SIGINT. Logs are JSON, one object per line on stderr.
// Returns the process exit code: 0 after a signal, 1 when it could not start or lost its lease.
int RunOperator(const OperatorOptions& options);

}  // namespace bsw

#endif  // BSW_CMD_OPERATOR_COMMAND_H_
