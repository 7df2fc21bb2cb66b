// The supervisor program the LocalBackend tests spawn, as the CLI's hidden verb would run it.
#include "operator/adapters/local/supervisor.h"

int main(int argc, char** argv) { return bsw::local::RunSupervisor(argc, argv); }
