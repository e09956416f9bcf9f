//===- JsonReport.h - kiln-run --json: the run as one JSON object ---------===//
//
// Fields in the order they were added; values are JSON text made with str(),
// num(), array() and object(). Names from the artifact are restricted to
// plain characters by its reader; paths are the user's, so every string is
// escaped.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_JSONREPORT_H
#define KILN_TOOLS_KILN_RUN_JSONREPORT_H

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

class JsonReport {
public:
  using Fields = std::vector<std::pair<std::string, std::string>>;

  void add(const std::string &key, std::string json) {
    fields_.emplace_back(key, std::move(json));
  }
  std::string text() const { return object(fields_) + "\n"; }

  static std::string str(const std::string &text) {
    std::string out = "\"";
    for (char c : text) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(c));
        out += escape;
      } else {
        out += c;
      }
    }
    return out + "\"";
  }
  /// A number; NaN and infinities (not JSON) are null.
  static std::string num(double value) {
    if (!std::isfinite(value))
      return "null";
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
  }
  static std::string boolean(bool value) { return value ? "true" : "false"; }
  static std::string array(const std::vector<std::string> &items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i)
      out += (i ? ", " : "") + items[i];
    return out + "]";
  }
  static std::string object(const Fields &fields) {
    std::string out = "{";
    for (size_t i = 0; i < fields.size(); ++i)
      out += (i ? ", " : "") + str(fields[i].first) + ": " + fields[i].second;
    return out + "}";
  }

private:
  Fields fields_;
};

} // namespace kiln

#endif // KILN_TOOLS_KILN_RUN_JSONREPORT_H
