#ifndef BSW_ADAPTERS_LOCAL_SUPERVISOR_H_
#define BSW_ADAPTERS_LOCAL_SUPERVISOR_H_

namespace bsw::local {

// The main function of a segment's supervisor process, which LocalBackend::Start spawns as
// `<supervisor command...> <segment dir>`: the whole of budgetsweep-supervise's main, called
// before the program starts any thread or changes any signal handling.
//
// REQUIRES: argv[argc - 1] is a segment directory written by LocalBackend::Start; the arguments
// before it (the program) are ignored.
//
// The supervisor claims the segment by creating status.json (a second supervisor of the same
// segment finds it claimed and exits 0), runs the trainer in its own process group with
// PR_SET_PDEATHSIG(SIGKILL) so that it never outlives the supervisor, refreshes the heartbeat,
// enforces the deadline file (SIGTERM at deadline - grace, SIGKILL at deadline), and on SIGTERM,
// SIGINT or a stop file forwards SIGTERM and sends SIGKILL after the grace period. At the
// trainer's exit it writes the final status:
//   Succeeded                  exit 0, neither stopped nor past its deadline
//   Failed, Stopped            it was asked to stop (even if the trainer then exited 0)
//   Failed, DeadlineExceeded   the deadline's SIGTERM or SIGKILL was sent (even if exit 0)
//   Failed, Error              any other non-zero exit or signal
// Returns 0 once the final status is written, 1 when it could not supervise, 2 on bad usage.
int RunSupervisor(int argc, char** argv);

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_SUPERVISOR_H_
