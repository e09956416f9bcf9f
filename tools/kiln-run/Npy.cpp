//===- Npy.cpp - read and write NumPy .npy files --------------------------===//
//
// The header is a Python dict literal, `{'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), }`, padded with spaces and a newline. It is parsed
// by a small recursive-descent reader that accepts exactly the three keys
// numpy writes, with a string, a boolean and a tuple of integers, so a
// malformed header is named precisely rather than half-read. The element
// count is a checked product, bounded before it is multiplied by the item
// size, and compared with the bytes actually present: a forged shape never
// makes the reader allocate or read past the file.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "kiln/runtime/Printable.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

using namespace kiln;

namespace {

using kiln::printable;

size_t itemSize(std::string_view descr) {
  if (descr == "<f4" || descr == "<i4")
    return 4;
  if (descr == "<f2")
    return 2;
  if (descr == "<i8" || descr == "<f8")
    return 8;
  if (descr == "|b1")
    return 1;
  return 0;
}

/// The largest element count accepted: times any item size (at most 8) it
/// stays far from overflow.
constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 16;

class HeaderParser {
public:
  HeaderParser(std::string_view text, std::string what)
      : text(text), what(std::move(what)) {}

  npy::Array parse() {
    npy::Array array;
    bool haveDescr = false, haveOrder = false, haveShape = false, fortran = false;
    expect('{');
    while (!consume('}')) {
      std::string key = quoted("a key");
      expect(':');
      auto once = [&](bool &seen) {
        if (seen)
          fail("the key '" + key + "' appears twice");
        seen = true;
      };
      if (key == "descr") {
        once(haveDescr);
        array.descr = quoted("the dtype");
      } else if (key == "fortran_order") {
        once(haveOrder);
        fortran = boolean();
      } else if (key == "shape") {
        once(haveShape);
        array.shape = tuple();
      } else {
        fail("an unknown key '" + printable(key) + "'");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skipSpace();
    if (pos != text.size())
      fail("text after the header's closing brace");
    if (!haveDescr || !haveOrder || !haveShape)
      fail(std::string("no '") + (!haveDescr ? "descr" : !haveOrder ? "fortran_order" : "shape") +
           "' in the header");
    if (fortran)
      fail("Fortran order (save a C-ordered array: numpy.ascontiguousarray)");
    return array;
  }

private:
  [[noreturn]] void fail(const std::string &why) const {
    throw std::runtime_error(what + " is not a usable .npy file: " + why);
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\t'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      fail(std::string("a malformed header (expected '") + c + "' at offset " +
           std::to_string(pos) + ")");
  }
  std::string quoted(const char *thing) {
    skipSpace();
    char quote = pos < text.size() ? text[pos] : '\0';
    if (quote != '\'' && quote != '"')
      fail(std::string("a malformed header (expected ") + thing + " in quotes at offset " +
           std::to_string(pos) + ")");
    size_t end = text.find(quote, pos + 1);
    if (end == std::string_view::npos)
      fail(std::string("a malformed header (an unterminated string at offset ") +
           std::to_string(pos) + ")");
    std::string value(text.substr(pos + 1, end - pos - 1));
    pos = end + 1;
    return value;
  }
  bool boolean() {
    skipSpace();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (text.substr(pos, std::strlen(word)) == word) {
        pos += std::strlen(word);
        return value;
      }
    fail("a malformed header (fortran_order is not True or False)");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (!consume(')')) {
      skipSpace();
      size_t start = pos;
      int64_t d = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        int digit = text[pos++] - '0';
        if (d > (kMaxElements - digit) / 10)
          fail("a dimension of more than " + std::to_string(kMaxElements) + " elements");
        d = d * 10 + digit;
      }
      if (pos == start)
        fail("a malformed shape (expected a non-negative integer at offset " +
             std::to_string(pos) + ")");
      if (dims.size() == npy::kMaxRank)
        fail("more than " + std::to_string(npy::kMaxRank) + " dimensions");
      dims.push_back(d);
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }

  std::string_view text;
  std::string what;
  size_t pos = 0;
};

} // namespace

npy::Array npy::parse(std::string_view bytes, const std::string &what) {
  auto fail = [&](const std::string &why) -> Array {
    throw std::runtime_error(what + " is not a usable .npy file: " + why);
  };
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6))
    return fail("bad magic (not a .npy file)");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) |
                   (static_cast<unsigned char>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated header");
    uint32_t length;
    std::memcpy(&length, bytes.data() + 8, 4);
    headerLength = length;
    headerStart = 12;
  } else {
    return fail("format version " + std::to_string(major));
  }
  if (headerLength > bytes.size() - headerStart)
    return fail("truncated header (it promises " + std::to_string(headerLength) +
                " bytes)");
  Array array = HeaderParser(bytes.substr(headerStart, headerLength), what).parse();
  size_t item = itemSize(array.descr);
  if (!item)
    return fail("dtype '" + printable(array.descr) +
                "' (kiln-run reads float64, float32, float16, int64, int32 and bool, "
                "little-endian)");
  int64_t count = 1;
  for (int64_t d : array.shape) {
    if (d != 0 && count > kMaxElements / d)
      return fail("its shape has more than " + std::to_string(kMaxElements) + " elements");
    count *= d;
  }
  size_t dataStart = headerStart + headerLength;
  uint64_t expected = static_cast<uint64_t>(count) * item;
  if (bytes.size() - dataStart != expected)
    return fail("holds " + std::to_string(bytes.size() - dataStart) +
                " bytes of data, its header promises " + std::to_string(expected));
  array.data = std::string(bytes.substr(dataStart));
  return array;
}

npy::Array npy::read(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw std::runtime_error("cannot open '" + path + "'");
  std::stringstream buffer;
  buffer << file.rdbuf();
  if (file.bad())
    throw std::runtime_error("cannot read '" + path + "'");
  return parse(buffer.str(), "'" + path + "'");
}

void npy::write(const std::string &path, const Array &array) {
  std::string shape;
  for (int64_t d : array.shape)
    shape += std::to_string(d) + ", ";
  if (array.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (array.shape.size() == 1)
    shape.resize(shape.size() - 1);
  std::string header = "{'descr': '" + array.descr +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  uint16_t length = header.size();
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes.append(reinterpret_cast<const char *>(&length), 2);
  writeFileAtomically(path, bytes + header + array.data);
}

void npy::writeFileAtomically(const std::string &path, const std::string &bytes) {
  std::string temporary = path + ".partial." + std::to_string(::getpid());
  bool ok;
  {
    std::ofstream file(temporary, std::ios::binary);
    file << bytes;
    file.close();
    ok = static_cast<bool>(file);
  }
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + std::strerror(error));
  }
}
