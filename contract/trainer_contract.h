#ifndef BSW_CONTRACT_TRAINER_CONTRACT_H_
#define BSW_CONTRACT_TRAINER_CONTRACT_H_

// The names of the trainer contract (docs/trainer-contract.md): the environment a trial is given,
// the series and labels a trainer serves, and (trainer_exit_codes.h) how it exits. Shared by the
// operator, the trainer and the curve-trainer fixture. Header-only and dependency-free, so that
// none of them depends on another.

#include "contract/trainer_exit_codes.h"

namespace bsw {

// The environment every backend gives a trial: the sweep's and the trial's names, the parameters
// as a JSON object, the rungs (comma-separated), the resource to train to before it checkpoints and
// exits 0, the length of the learning-rate schedule, the checkpoint directory (inherited by every
// process the trial starts), and where to serve the metrics.
inline constexpr char kEnvSweep[] = "BUDGETSWEEP_SWEEP";
inline constexpr char kEnvTrial[] = "BUDGETSWEEP_TRIAL";
inline constexpr char kEnvParams[] = "BUDGETSWEEP_PARAMS";
inline constexpr char kEnvMilestones[] = "BUDGETSWEEP_MILESTONES";
inline constexpr char kEnvUntil[] = "BUDGETSWEEP_UNTIL";
inline constexpr char kEnvMaxResource[] = "BUDGETSWEEP_MAX_RESOURCE";
inline constexpr char kEnvCheckpointDir[] = "BUDGETSWEEP_CHECKPOINT_DIR";
inline constexpr char kEnvMetricsHost[] = "BUDGETSWEEP_METRICS_HOST";
inline constexpr char kEnvMetricsPort[] = "BUDGETSWEEP_METRICS_PORT";
// The trial's own directory, which a File collector's path lies in (spec.metrics.collector).
inline constexpr char kEnvTrialDir[] = "BUDGETSWEEP_TRIAL_DIR";

// pbt and pb2 only: "1", keep a snapshot of the checkpoint at UNTIL; the flags that may differ
// from a snapshot's, comma-separated; after an exploit, the donor's checkpoint directory and the
// resource of its snapshot.
inline constexpr char kEnvSnapshots[] = "BUDGETSWEEP_SNAPSHOTS";
inline constexpr char kEnvMutable[] = "BUDGETSWEEP_MUTABLE";
inline constexpr char kEnvExploitDir[] = "BUDGETSWEEP_EXPLOIT_DIR";
inline constexpr char kEnvExploitAt[] = "BUDGETSWEEP_EXPLOIT_AT";

// The series a trainer serves, each with the labels kLabelSweep and kLabelTrial. A trainer may
// serve more under kMetricPrefix (the LibTorch trainer's are in trainer-image/README.md); the
// operator reads none of those.
inline constexpr char kMetricPrefix[] = "budgetsweep_trainer_";
// With kLabelMetric (the objective's name) and kLabelResource (where it was evaluated).
inline constexpr char kMetricObjective[] = "budgetsweep_trainer_objective";
inline constexpr char kMetricResourceCompleted[] = "budgetsweep_trainer_resource_completed";
inline constexpr char kMetricLoss[] = "budgetsweep_trainer_loss";
inline constexpr char kMetricSamplesPerSecond[] = "budgetsweep_trainer_samples_per_second";
inline constexpr char kMetricDataWaitRatio[] = "budgetsweep_trainer_data_wait_ratio";
inline constexpr char kMetricAcceleratorUtilizationRatio[] =
    "budgetsweep_trainer_accelerator_utilization_ratio";
inline constexpr char kMetricProbeMeasuredSteps[] = "budgetsweep_trainer_probe_measured_steps";
// For dashboards: the operator reads a divergence from the exit code (kExitDiverged).
inline constexpr char kMetricDiverged[] = "budgetsweep_trainer_diverged";
inline constexpr char kMetricLearningRate[] = "budgetsweep_trainer_learning_rate";

inline constexpr char kLabelSweep[] = "sweep";
inline constexpr char kLabelTrial[] = "trial";
inline constexpr char kLabelMetric[] = "metric";
inline constexpr char kLabelResource[] = "resource";

}  // namespace bsw

#endif  // BSW_CONTRACT_TRAINER_CONTRACT_H_
