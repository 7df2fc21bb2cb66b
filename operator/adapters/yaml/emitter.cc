#include "operator/adapters/yaml/emitter.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "operator/adapters/yaml/sweep_file.h"

namespace bsw {
namespace {

using nlohmann::json;

// A number in the shortest text that reads back as the same double.
std::string NumberYaml(const json& v) {
  if (!v.is_number_float()) return v.dump();
  const double d = v.get<double>();
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d < 0 ? "-.inf" : ".inf";
  // Plain decimals where they stay short (0.0005, not 5e-04), exponents beyond.
  const bool fixed = std::fabs(d) >= 1e-4 && std::fabs(d) < 1e15;
  char text[64];
  auto [end, ec] = fixed ? std::to_chars(text, text + sizeof text, d, std::chars_format::fixed)
                         : std::to_chars(text, text + sizeof text, d);
  std::string written(text, ec == std::errc() ? end : text);
  // "3" would read back as an integer; the reader keeps floats and integers apart.
  if (written.find_first_of(".eE") == std::string::npos) written += ".0";
  return written;
}

// Writes `s` plain where the sweep reader reads that back as the same string, else quoted.
void EmitString(YAML::Emitter& out, const std::string& s) {
  StatusOr<json> read = ParseSweepText(s, "(scalar)");
  if (read.ok() && read->is_string() && read->get<std::string>() == s) {
    out << s;
  } else {
    out << YAML::DoubleQuoted << s;
  }
}

std::vector<std::string> OrderedKeys(const json& object, const std::vector<std::string>& order) {
  std::vector<std::string> keys;
  for (const std::string& key : order) {
    if (object.contains(key)) keys.push_back(key);
  }
  for (const auto& [key, value] : object.items()) {
    if (std::find(order.begin(), order.end(), key) == order.end()) keys.push_back(key);
  }
  return keys;
}

void Emit(YAML::Emitter& out, const json& v, const std::vector<std::string>& order) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (const std::string& key : OrderedKeys(v, order)) {
      out << YAML::Key;
      EmitString(out, key);
      out << YAML::Value;
      Emit(out, v.at(key), order);
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const json& item : v) Emit(out, item, order);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    EmitString(out, v.get<std::string>());
  } else if (v.is_boolean()) {
    out << v.get<bool>();
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << NumberYaml(v);
  }
}

}  // namespace

std::string EmitYaml(const nlohmann::json& value, const std::vector<std::string>& key_order) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  Emit(out, value, key_order);
  return std::string(out.c_str()) + "\n";
}

}  // namespace bsw
