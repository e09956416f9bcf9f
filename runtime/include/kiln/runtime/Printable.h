//===- Printable.h - untrusted text as it may be echoed ---------*- C++ -*-===//
//
// Names and header text from a forged file can hold terminal escape
// sequences: every byte outside printable ASCII is shown as \xNN, and long
// text is cut. Header-only, so the file readers' fuzz targets build from
// their one source file.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PRINTABLE_H
#define KILN_RUNTIME_PRINTABLE_H

#include <string>
#include <string_view>

namespace kiln {

inline std::string printable(std::string_view text) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return text.size() > 64 ? out + "..." : out;
}

} // namespace kiln

#endif // KILN_RUNTIME_PRINTABLE_H
