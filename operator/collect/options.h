#ifndef BSW_OPERATOR_COLLECT_OPTIONS_H_
#define BSW_OPERATOR_COLLECT_OPTIONS_H_

// budgetsweep-collect's command line and environment, read and checked before anything runs.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "operator/collect/line_parser.h"

namespace bsw::collect {

inline constexpr char kInstallOption[] = "--install=";

inline constexpr char kUsage[] =
    "usage: budgetsweep-collect [OPTIONS] -- COMMAND [ARGS...]\n"
    "   or: budgetsweep-collect --install=DIR    copy this program into DIR\n"
    "Runs COMMAND and serves the values it prints as the trainer contract's metrics.\n"
    "  --objective=NAME          the objective metric's name (required)\n"
    "  --source=stdout|file      parse the command's stdout and stderr, or tail --path "
    "(default stdout)\n"
    "  --path=P                  with --source=file: the file, relative to "
    "$BUDGETSWEEP_TRIAL_DIR\n"
    "  --format=text|json        with --source=file: name=value lines, or one JSON object a "
    "line (default text)\n"
    "  --filter=REGEX            text only: groups 1 and 2 are a name and a value "
    "(default Katib's)\n"
    "  --resource-key=KEY        the name on a line that gives its values' resource; lines "
    "without it are ignored\n"
    "                            (default: the count of lines with the objective so far)\n"
    "  --grace-seconds=N         after the command ends, serve until scraped, at most N s "
    "(default 30)\n"
    "  --stop-grace-seconds=N    SIGKILL this long after the SIGTERM at BUDGETSWEEP_UNTIL "
    "(default 30)\n";

enum class Source { kStdout, kFile };

struct CollectOptions {
  Source source = Source::kStdout;
  std::string path;
  ParserOptions parser;
  double grace_seconds = 30;
  double stop_grace_seconds = 30;
  std::vector<std::string> command;
};

struct CollectEnvironment {
  std::string sweep;
  std::string trial;
  std::string trial_dir;  // source file only
  std::string metrics_host = "127.0.0.1";
  std::optional<uint16_t> metrics_port;  // nothing: serve nothing
  std::optional<double> until;           // nothing: no limit
};

// A value, or an error that names the option or variable at fault.
template <typename T>
struct OrError {
  std::optional<T> value;
  std::string error;
};

// Reads argv[1..]: options of the form --name=value, then `--`, then the command. An empty result
// with an empty error means --help.
[[nodiscard]] OrError<CollectOptions> ParseCommandLine(const std::vector<std::string>& args);

// Reads the environment through `getenv` (which returns nullptr for an absent variable).
[[nodiscard]] OrError<CollectEnvironment> ReadEnvironment(
    const std::function<const char*(const char*)>& getenv, Source source);

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_OPTIONS_H_
