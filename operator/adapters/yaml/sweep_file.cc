#include "operator/adapters/yaml/sweep_file.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bsw {
namespace {

using nlohmann::json;

// A plain scalar that reads as an integer (one that fits in 64 bits) or a float, typed per the
// YAML 1.2 core schema; nullopt for any other. A float beyond the range of a double becomes an
// infinity (or zero), as strtod rounds it.
std::optional<json> PlainNumber(const std::string& s) {
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
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
    // Out of range: strtod rounds to an infinity or to zero, as the number's size says.
    if (ec == std::errc::result_out_of_range) return std::strtod(begin, nullptr);
  }
  return std::nullopt;
}

// A plain (unquoted) scalar, typed per the YAML 1.2 core schema. A float beyond the range of a
// double becomes an infinity, as .inf does, for the validator to refuse by its field's name.
json PlainScalar(const std::string& s) {
  static const std::regex kNull("~|null|Null|NULL|");
  static const std::regex kTrue("true|True|TRUE");
  static const std::regex kFalse("false|False|FALSE");
  static const std::regex kInfinity("[-+]?(\\.inf|\\.Inf|\\.INF)");
  static const std::regex kNan("\\.nan|\\.NaN|\\.NAN");
  if (std::regex_match(s, kNull)) return nullptr;
  if (std::regex_match(s, kTrue)) return true;
  if (std::regex_match(s, kFalse)) return false;
  if (std::optional<json> number = PlainNumber(s)) return *number;
  if (std::regex_match(s, kInfinity)) {
    return s[0] == '-' ? -std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::infinity();
  }
  if (std::regex_match(s, kNan)) return std::numeric_limits<double>::quiet_NaN();
  return s;
}

std::string LineOf(const std::string& source, const YAML::Mark& mark) {
  return source + ":" + std::to_string(mark.line + 1);
}

// Whether `key` is the merge key `<<` (plain, not quoted), which kubectl resolves.
bool IsMergeKey(const YAML::Node& key) { return key.Tag() == "?" && key.Scalar() == "<<"; }

StatusOr<json> ToJson(const YAML::Node& node, const std::string& source);

// Adds to `out` the entries of a merge key's value (a mapping, or a list of mappings, earlier
// ones first) whose keys `out` does not have yet: keys the mapping sets itself win.
Status Merge(const YAML::Node& key, const YAML::Node& value, const std::string& source, json* out) {
  StatusOr<json> merged = ToJson(value, source);
  if (!merged.ok()) return merged.status();
  json sources = merged->is_array() ? *merged : json::array({*merged});
  for (const json& from : sources) {
    if (!from.is_object()) {
      return InvalidArgumentError(LineOf(source, key.Mark()) +
                                  ": a merge key (<<) takes a mapping or a list of mappings");
    }
    for (const auto& [name, v] : from.items()) {
      if (!out->contains(name)) (*out)[name] = v;
    }
  }
  return OkStatus();
}

// A sequence as a JSON array.
StatusOr<json> SequenceToJson(const YAML::Node& node, const std::string& source) {
  json out = json::array();
  for (const YAML::Node& item : node) {
    StatusOr<json> v = ToJson(item, source);
    if (!v.ok()) return v;
    out.push_back(std::move(*v));
  }
  return out;
}

// A mapping as a JSON object: its keys plain strings, each once; merge keys (<<) resolved after
// the keys the mapping sets itself.
StatusOr<json> MapToJson(const YAML::Node& node, const std::string& source) {
  json out = json::object();
  std::vector<std::pair<YAML::Node, YAML::Node>> merges;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      return InvalidArgumentError(LineOf(source, kv.first.Mark()) +
                                  ": mapping keys must be plain strings");
    }
    if (IsMergeKey(kv.first)) {
      merges.emplace_back(kv.first, kv.second);
      continue;
    }
    const std::string key = kv.first.Scalar();
    if (out.contains(key)) {
      return InvalidArgumentError(LineOf(source, kv.first.Mark()) + ": duplicate key \"" + key +
                                  "\"");
    }
    StatusOr<json> v = ToJson(kv.second, source);
    if (!v.ok()) return v;
    out[key] = std::move(*v);
  }
  for (const auto& [key, value] : merges) {
    if (Status s = Merge(key, value, source, &out); !s.ok()) return s;
  }
  return out;
}

StatusOr<json> ToJson(const YAML::Node& node, const std::string& source) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      // yaml-cpp tags quoted scalars "!", plain ones "?".
      return node.Tag() == "!" ? json(node.Scalar()) : PlainScalar(node.Scalar());
    case YAML::NodeType::Sequence:
      return SequenceToJson(node, source);
    case YAML::NodeType::Map:
      return MapToJson(node, source);
  }
  return json(nullptr);
}

// Thrown by InputBounds to stop the parser at the first exceeded limit or cyclic alias;
// ParseSweepText catches it.
struct InputRefused {
  YAML::Mark mark;
  std::string message;
};

// Walks the parser's event stream without building nodes, counting what loading the text would
// build: nodes and scalar bytes with every alias expanded, and the nesting depth it would reach.
class InputBounds : public YAML::EventHandler {
 public:
  // Documents with content. A document that is only a null (nothing after a `---`, or only
  // comments) is skipped, as kubectl skips it.
  int documents() const { return documents_; }

  void OnDocumentStart(const YAML::Mark&) override {
    anchors_.clear();  // anchor ids restart with each document
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (open_.empty()) return;  // an empty document
    Leaf(mark, anchor, {1, 0, 1});
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    Leaf(mark, anchor, {1, value.size(), 1});
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // The parser refuses unknown anchors, so one not recorded yet is still open: a node that
    // contains an alias to itself, which no expansion could finish.
    auto it = anchors_.find(anchor);
    if (it == anchors_.end())
      throw InputRefused{mark, "an alias refers to a node that contains it"};
    Leaf(mark, YAML::NullAnchor, it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  // What a node stands for once its aliases are expanded.
  struct Extent {
    size_t nodes = 0;
    size_t scalar_bytes = 0;
    int height = 0;  // levels, the node itself included
  };
  struct Collection {
    YAML::anchor_t anchor;
    size_t nodes_before;
    size_t scalar_bytes_before;
    int child_height;
  };

  // Counts a node that is complete when it is seen (a scalar, a null, an alias's expansion).
  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor, const Extent& extent) {
    if (open_.empty()) ++documents_;
    if (static_cast<int>(open_.size()) + extent.height > kMaxSweepNestingDepth) {
      throw InputRefused{mark, DepthMessage()};
    }
    Add(mark, extent.nodes, extent.scalar_bytes);
    Done(anchor, extent);
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (open_.empty()) ++documents_;
    if (static_cast<int>(open_.size()) + 1 > kMaxSweepNestingDepth) {
      throw InputRefused{mark, DepthMessage()};
    }
    open_.push_back({anchor, nodes_, scalar_bytes_, 0});
    Add(mark, 1, 0);
  }

  void Close() {
    Collection c = open_.back();
    open_.pop_back();
    Done(c.anchor,
         {nodes_ - c.nodes_before, scalar_bytes_ - c.scalar_bytes_before, c.child_height + 1});
  }

  // Records a finished node: its anchor's extent, and its height in its parent.
  void Done(YAML::anchor_t anchor, const Extent& extent) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = extent;
    if (!open_.empty()) {
      open_.back().child_height = std::max(open_.back().child_height, extent.height);
    }
  }

  // Adds to the totals; both stay within their limits, so neither can overflow.
  void Add(const YAML::Mark& mark, size_t nodes, size_t scalar_bytes) {
    if (nodes > kMaxSweepNodes - nodes_) {
      throw InputRefused{mark, "the document has more than " + std::to_string(kMaxSweepNodes) +
                                   " nodes with its aliases expanded (the limit for a sweep "
                                   "file)"};
    }
    if (scalar_bytes > kMaxSweepScalarBytes - scalar_bytes_) {
      throw InputRefused{mark, "the document's scalars exceed " +
                                   std::to_string(kMaxSweepScalarBytes) +
                                   " bytes with its aliases expanded (the limit for a sweep "
                                   "file)"};
    }
    nodes_ += nodes;
    scalar_bytes_ += scalar_bytes;
  }

  static std::string DepthMessage() {
    return "nesting deeper than " + std::to_string(kMaxSweepNestingDepth) +
           " levels (the limit for a sweep file)";
  }

  int documents_ = 0;
  size_t nodes_ = 0;
  size_t scalar_bytes_ = 0;
  std::vector<Collection> open_;
  std::unordered_map<YAML::anchor_t, Extent> anchors_;
};

std::string Where(const std::string& source, const YAML::Mark& mark) {
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// The encoding a byte-order mark at the start of `text` names, when it is not UTF-8's; UTF-32's
// marks are tested first, as UTF-16 LE's is a prefix of UTF-32 LE's.
const char* ForeignEncoding(std::string_view text) {
  static constexpr std::pair<std::string_view, const char*> kMarks[] = {
      {{"\x00\x00\xFE\xFF", 4}, "UTF-32"},
      {{"\xFF\xFE\x00\x00", 4}, "UTF-32"},
      {"\xFE\xFF", "UTF-16"},
      {"\xFF\xFE", "UTF-16"}};
  for (const auto& [mark, encoding] : kMarks) {
    if (text.starts_with(mark)) return encoding;
  }
  return nullptr;
}

}  // namespace

StatusOr<json> ParseSweepText(const std::string& text, const std::string& source) {
  if (text.size() > kMaxSweepFileBytes) {
    return InvalidArgumentError(source + ": " + std::to_string(text.size()) +
                                " bytes, over the limit of " + std::to_string(kMaxSweepFileBytes) +
                                " bytes for a sweep file");
  }
  if (const char* encoding = ForeignEncoding(text)) {
    return InvalidArgumentError(source + " is " + encoding + "; save it as UTF-8");
  }
  constexpr std::string_view kUtf8Mark = "\xEF\xBB\xBF";
  const std::string_view body =
      std::string_view(text).substr(text.starts_with(kUtf8Mark) ? kUtf8Mark.size() : 0);
  try {
    // The limits are checked on the event stream first: loading expands no alias, but
    // converting the nodes to JSON does.
    std::istringstream in{std::string(body)};
    YAML::Parser parser(in);
    InputBounds bounds;
    while (parser.HandleNextDocument(bounds)) {
    }
    if (bounds.documents() > 1) {
      return InvalidArgumentError(source + ": holds " + std::to_string(bounds.documents()) +
                                  " documents; give one BudgetSweep per file");
    }
    for (const YAML::Node& doc : YAML::LoadAll(std::string(body))) {
      if (!doc.IsNull()) return ToJson(doc, source);
    }
    return InvalidArgumentError(source + ": empty document");
  } catch (const InputRefused& e) {
    return InvalidArgumentError(Where(source, e.mark) + ": " + e.message);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(Where(source, e.mark) + ": " + e.msg);
  }
}

StatusOr<json> ReadSweepFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgumentError(path + ": is a directory; give a sweep file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open (" + std::strerror(errno) + ")");
  // Reads at most one byte over the limit, so that a huge file (or /dev/zero) costs nothing.
  std::string text(kMaxSweepFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return InvalidArgumentError(path + ": read error");
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxSweepFileBytes) {
    return InvalidArgumentError(path + ": larger than the limit of " +
                                std::to_string(kMaxSweepFileBytes) + " bytes for a sweep file");
  }
  return ParseSweepText(text, path);
}

}  // namespace bsw
