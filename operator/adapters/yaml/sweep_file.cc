#include "operator/adapters/yaml/sweep_file.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <regex>
#include <sstream>

namespace bsw {
namespace {

using nlohmann::json;

// A plain (unquoted) scalar, typed per the YAML 1.2 core schema.
json PlainScalar(const std::string& s) {
  static const std::regex kNull("~|null|Null|NULL|");
  static const std::regex kTrue("true|True|TRUE");
  static const std::regex kFalse("false|False|FALSE");
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(s, kNull)) return nullptr;
  if (std::regex_match(s, kTrue)) return true;
  if (std::regex_match(s, kFalse)) return false;
  if (std::regex_match(s, kInt)) {
    int64_t v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size()) return v;
  }
  if (std::regex_match(s, kFloat)) {
    double v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size()) return v;
  }
  return s;
}

StatusOr<json> ToJson(const YAML::Node& node, const std::string& source) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      // yaml-cpp tags quoted scalars "!", plain ones "?".
      return node.Tag() == "!" ? json(node.Scalar()) : PlainScalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const YAML::Node& item : node) {
        StatusOr<json> v = ToJson(item, source);
        if (!v.ok()) return v;
        out.push_back(std::move(*v));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return InvalidArgumentError(source + ":" + std::to_string(kv.first.Mark().line + 1) +
                                      ": mapping keys must be plain strings");
        }
        const std::string key = kv.first.Scalar();
        if (out.contains(key)) {
          return InvalidArgumentError(source + ":" + std::to_string(kv.first.Mark().line + 1) +
                                      ": duplicate key \"" + key + "\"");
        }
        StatusOr<json> v = ToJson(kv.second, source);
        if (!v.ok()) return v;
        out[key] = std::move(*v);
      }
      return out;
    }
  }
  return json(nullptr);
}

}  // namespace

StatusOr<json> ParseSweepText(const std::string& text, const std::string& source) {
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.empty() || docs[0].IsNull()) return InvalidArgumentError(source + ": empty document");
    if (docs.size() > 1) {
      return InvalidArgumentError(source + ": holds " + std::to_string(docs.size()) +
                                  " documents; give one BudgetSweep per file");
    }
    return ToJson(docs[0], source);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                                std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

StatusOr<json> ReadSweepFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return InvalidArgumentError(path + ": read error");
  return ParseSweepText(text.str(), path);
}

}  // namespace bsw
