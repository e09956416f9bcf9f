//===- Npy.cpp - read and write NumPy .npy files --------------------------===//

#include "Npy.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

using namespace kiln;

namespace {
std::string field(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return {};
  at = header.find(':', at);
  if (at == std::string::npos)
    return {};
  size_t begin = header.find_first_not_of(' ', at + 1);
  if (header[begin] == '(') {
    size_t end = header.find(')', begin);
    return header.substr(begin + 1, end - begin - 1);
  }
  if (header[begin] == '\'') {
    size_t end = header.find('\'', begin + 1);
    return header.substr(begin + 1, end - begin - 1);
  }
  size_t end = header.find_first_of(",}", begin);
  return header.substr(begin, end - begin);
}

size_t itemSize(const std::string &descr) {
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
} // namespace

npy::Array npy::read(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw std::runtime_error("cannot open '" + path + "'");
  std::stringstream buffer;
  buffer << file.rdbuf();
  std::string bytes = buffer.str();
  auto fail = [&](const std::string &why) -> Array {
    throw std::runtime_error("'" + path + "' is not a usable .npy file: " + why);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return fail("bad magic");
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
  if (headerStart + headerLength > bytes.size())
    return fail("truncated header");
  std::string header = bytes.substr(headerStart, headerLength);
  Array array;
  array.descr = field(header, "descr");
  if (!itemSize(array.descr))
    return fail("dtype '" + array.descr + "' (use float32, float16, int64, int32 or bool)");
  if (field(header, "fortran_order") != "False")
    return fail("Fortran order");
  std::string shape = field(header, "shape");
  std::stringstream dims(shape);
  int64_t count = 1;
  for (std::string dim; std::getline(dims, dim, ',');) {
    if (dim.find_first_not_of(' ') == std::string::npos)
      continue;
    int64_t d = std::stoll(dim);
    if (d < 0)
      return fail("negative dimension");
    array.shape.push_back(d);
    count *= d;
  }
  size_t dataStart = headerStart + headerLength;
  size_t expected = count * itemSize(array.descr);
  if (bytes.size() - dataStart != expected)
    return fail("holds " + std::to_string(bytes.size() - dataStart) +
                " bytes of data, its header promises " + std::to_string(expected));
  array.data = bytes.substr(dataStart);
  return array;
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
  std::ofstream file(path, std::ios::binary);
  if (!file)
    throw std::runtime_error("cannot write '" + path + "'");
  uint16_t length = header.size();
  file.write("\x93NUMPY\x01\x00", 8);
  file.write(reinterpret_cast<const char *>(&length), 2);
  file << header << array.data;
}
