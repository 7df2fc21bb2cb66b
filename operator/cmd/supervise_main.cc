// budgetsweep-supervise: the supervisor of one local trial segment (operator/adapters/local/
// supervisor.h). `budgetsweep run` spawns it from its own directory for every segment; a program
// of its own, so that a launch execs this small binary rather than the whole command line.
#include "operator/adapters/local/supervisor.h"

int main(int argc, char** argv) { return bsw::local::RunSupervisor(argc, argv); }
