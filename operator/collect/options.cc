#include "operator/collect/options.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>
#include <system_error>

#include "contract/trainer_contract.h"
#include "operator/collect/pair_scanner.h"

namespace bsw::collect {
namespace {

// Sets one option from its value; returns an error naming it, or "".
using Setter = std::string (*)(const std::string& value, CollectOptions* options);

// Longer waits than this are surely a mistake (and would overflow a clock's duration).
constexpr double kMaxSeconds = 1e7;

std::string SetSeconds(const char* option, const std::string& value, double* seconds) {
  std::optional<double> parsed = FiniteValue(value);
  if (!parsed || *parsed < 0 || *parsed > kMaxSeconds) {
    return std::string(option) + "=" + value + " is not a number of seconds from 0 to 1e7";
  }
  *seconds = *parsed;
  return "";
}

std::string SetMetricName(const char* option, const std::string& value, std::string* name) {
  if (!IsMetricName(value)) {
    return std::string(option) + "=" + value +
           " is not a metric name (at most 128 of [A-Za-z0-9_:.-], not starting with a digit, "
           "'.' or '-')";
  }
  *name = value;
  return "";
}

const std::map<std::string_view, Setter>& Setters() {
  static const std::map<std::string_view, Setter> setters = {
      {"--source",
       [](const std::string& value, CollectOptions* options) -> std::string {
         if (value != "stdout" && value != "file") return "--source must be stdout or file";
         options->source = value == "file" ? Source::kFile : Source::kStdout;
         return "";
       }},
      {"--path",
       [](const std::string& value, CollectOptions* options) -> std::string {
         options->path = value;
         return "";
       }},
      {"--format",
       [](const std::string& value, CollectOptions* options) -> std::string {
         if (value != "text" && value != "json") return "--format must be text or json";
         options->parser.format = value == "json" ? LineFormat::kJson : LineFormat::kText;
         return "";
       }},
      {"--filter",
       [](const std::string& value, CollectOptions* options) -> std::string {
         if (value.empty()) return "--filter needs a regular expression";
         options->parser.filter = value;
         return "";
       }},
      {"--objective",
       [](const std::string& value, CollectOptions* options) {
         return SetMetricName("--objective", value, &options->parser.objective);
       }},
      {"--resource-key",
       [](const std::string& value, CollectOptions* options) {
         return SetMetricName("--resource-key", value, &options->parser.resource_key);
       }},
      {"--grace-seconds",
       [](const std::string& value, CollectOptions* options) {
         return SetSeconds("--grace-seconds", value, &options->grace_seconds);
       }},
      {"--stop-grace-seconds",
       [](const std::string& value, CollectOptions* options) {
         return SetSeconds("--stop-grace-seconds", value, &options->stop_grace_seconds);
       }},
  };
  return setters;
}

// An error when --path is not relative or climbs out with "..".
std::string CheckPath(const std::string& path) {
  if (path.empty()) return "--source=file needs --path=P";
  if (path.front() == '/') return "--path=" + path + " must be relative to " + kEnvTrialDir;
  for (size_t begin = 0; begin <= path.size();) {
    size_t end = std::min(path.find('/', begin), path.size());
    if (path.compare(begin, end - begin, "..") == 0) {
      return "--path=" + path + " must not contain '..'";
    }
    begin = end + 1;
  }
  return "";
}

// An error for options that do not go together, or "".
std::string CheckCombination(const CollectOptions& options) {
  if (options.parser.objective.empty()) return "--objective=NAME is required";
  if (options.parser.resource_key == options.parser.objective) {
    return "--resource-key must differ from --objective";
  }
  if (options.source == Source::kFile) {
    if (options.parser.format == LineFormat::kJson && !options.parser.filter.empty()) {
      return "--filter applies to text lines, not --format=json";
    }
    return CheckPath(options.path);
  }
  if (!options.path.empty()) return "--path needs --source=file";
  if (options.parser.format == LineFormat::kJson) return "--format needs --source=file";
  return "";
}

// Sets the option `arg` (--name=value); returns an error naming it, or "".
std::string SetOption(const std::string& arg, CollectOptions* options) {
  if (!arg.starts_with("--")) return "missing `--` before the command " + arg;
  size_t equals = arg.find('=');
  std::string name = arg.substr(0, equals);
  auto setter = Setters().find(name);
  if (setter == Setters().end()) return "unknown option " + name;
  if (equals == std::string::npos) return name + " needs a value: " + name + "=VALUE";
  return setter->second(arg.substr(equals + 1), options);
}

}  // namespace

OrError<CollectOptions> ParseCommandLine(const std::vector<std::string>& args) {
  CollectOptions options;
  size_t at = 0;
  for (; at < args.size() && args[at] != "--"; ++at) {
    if (args[at] == "--help" || args[at] == "-h") return {};
    if (std::string error = SetOption(args[at], &options); !error.empty()) return {{}, error};
  }
  if (at == args.size()) return {{}, "missing `--` before the command"};
  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(at) + 1, args.end());
  if (options.command.empty()) return {{}, "missing the command after `--`"};
  if (std::string error = CheckCombination(options); !error.empty()) return {{}, error};
  return {std::move(options), ""};
}

OrError<CollectEnvironment> ReadEnvironment(const std::function<const char*(const char*)>& getenv,
                                            Source source) {
  auto read = [&getenv](const char* name) {
    const char* value = getenv(name);
    return std::string(value ? value : "");
  };
  CollectEnvironment env;
  env.sweep = read(kEnvSweep);
  env.trial = read(kEnvTrial);
  env.trial_dir = read(kEnvTrialDir);
  if (source == Source::kFile && env.trial_dir.empty()) {
    return {{}, std::string("--source=file needs ") + kEnvTrialDir + " (the trial's directory)"};
  }
  if (std::string host = read(kEnvMetricsHost); !host.empty()) env.metrics_host = host;
  if (in_addr address{}; inet_pton(AF_INET, env.metrics_host.c_str(), &address) != 1) {
    return {{},
            std::string(kEnvMetricsHost) + "=" + env.metrics_host +
                " is not an IPv4 address (such as 127.0.0.1 or 0.0.0.0)"};
  }
  if (std::string port = read(kEnvMetricsPort); !port.empty()) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value > 65535) {
      return {{}, std::string(kEnvMetricsPort) + "=" + port + " is not a port (0 to 65535)"};
    }
    env.metrics_port = static_cast<uint16_t>(value);
  }
  if (std::string until = read(kEnvUntil); !until.empty()) {
    env.until = FiniteValue(until);
    if (!env.until) return {{}, std::string(kEnvUntil) + "=" + until + " is not a number"};
  }
  return {std::move(env), ""};
}

}  // namespace bsw::collect
