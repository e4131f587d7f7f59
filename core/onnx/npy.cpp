#include "core/onnx/npy.h"

#include <algorithm>
#include <cstring>

#include "core/util/error.h"

namespace fusor {

namespace {

struct NpyType {
  const char* code;  // without the byte-order character
  DataType dtype;
};

constexpr NpyType kTypes[] = {
    {"f4", DataType::Float},  {"f8", DataType::Double}, {"f2", DataType::Float16}, {"i8", DataType::Int64},
    {"i4", DataType::Int32},  {"i2", DataType::Int16},  {"i1", DataType::Int8},    {"u1", DataType::UInt8},
    {"u2", DataType::UInt16}, {"u4", DataType::UInt32}, {"u8", DataType::UInt64},  {"b1", DataType::Bool},
    {"c8", DataType::Complex64}, {"c16", DataType::Complex128},
};

// The text after `'key':` in the header dict, with leading blanks skipped.
size_t find_key(const std::string& header, const char* key) {
  std::string k = std::string("'") + key + "'";
  size_t p = header.find(k);
  if (p == std::string::npos) return p;
  p = header.find(':', p + k.size());
  if (p == std::string::npos) return p;
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  return p;
}

void byteswap(char* data, size_t count, size_t width) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

}  // namespace

bool has_npy_magic(const std::string& bytes) { return bytes.size() >= 6 && std::memcmp(bytes.data(), kNpyMagic, 6) == 0; }

Tensor parse_npy(std::string bytes, const std::string& path) {
  auto bad = [&](const std::string& m) { throw_bad_input(path + ": not a supported .npy file: " + m); };
  if (!has_npy_magic(bytes) || bytes.size() < 10) bad("missing header");
  int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    bad("format version " + std::to_string(major));
  }
  if (header_start + header_len > bytes.size()) bad("truncated header");
  std::string header = bytes.substr(header_start, header_len);
  size_t data_start = header_start + header_len;

  size_t p = find_key(header, "descr");
  if (p == std::string::npos || p >= header.size() || header[p] != '\'') bad("no 'descr'");
  size_t q = header.find('\'', p + 1);
  if (q == std::string::npos) bad("bad 'descr'");
  std::string descr = header.substr(p + 1, q - p - 1);
  if (descr.size() < 2) bad("dtype '" + descr + "'");
  char order = descr[0];
  std::string code = descr.substr(1);
  DataType dt = DataType::Undefined;
  for (const auto& t : kTypes)
    if (code == t.code) dt = t.dtype;
  if (dt == DataType::Undefined || (order != '<' && order != '>' && order != '|' && order != '='))
    bad("dtype '" + descr + "' (only numeric arrays are supported)");

  p = find_key(header, "fortran_order");
  if (p == std::string::npos) bad("no 'fortran_order'");
  bool fortran = header.compare(p, 4, "True") == 0;
  if (!fortran && header.compare(p, 5, "False") != 0) bad("bad 'fortran_order'");

  p = find_key(header, "shape");
  if (p == std::string::npos || p >= header.size() || header[p] != '(') bad("no 'shape'");
  q = header.find(')', p);
  if (q == std::string::npos) bad("bad 'shape'");
  Shape shape;
  std::string dims = header.substr(p + 1, q - p - 1);
  size_t i = 0;
  while (i < dims.size()) {
    while (i < dims.size() && (dims[i] == ' ' || dims[i] == ',')) ++i;
    if (i >= dims.size()) break;
    size_t j = i;
    while (j < dims.size() && dims[j] >= '0' && dims[j] <= '9') ++j;
    if (j == i || j - i > 15) bad("bad 'shape' (" + dims + ")");
    shape.push_back(std::stoll(dims.substr(i, j - i)));
    i = j;
    while (i < dims.size() && dims[i] == 'L') ++i;  // Python 2 longs
  }

  size_t width = dtype_size(dt);
  std::optional<size_t> checked = checked_nbytes(shape, width);
  if (!checked) bad("shape " + shape_str(shape) + " has more bytes than a 64-bit count can hold");
  size_t need = *checked;
  if (bytes.size() - data_start != need)
    bad("data has " + std::to_string(bytes.size() - data_start) + " bytes, shape " + shape_str(shape) + " of " +
        dtype_name(dt) + " needs " + std::to_string(need));
  if (order == '>' && width > 1) {
    size_t elem = (dt == DataType::Complex64 || dt == DataType::Complex128) ? width / 2 : width;
    byteswap(bytes.data() + data_start, need / elem, elem);
  }
  if (fortran && shape.size() > 1) {
    // Fortran order: the first index varies fastest. Reorder into C order.
    Tensor out(dt, shape);
    const char* src = bytes.data() + data_start;
    char* dst = static_cast<char*>(out.raw());
    size_t rank = shape.size();
    std::vector<int64_t> idx(rank, 0), fstride(rank, 1);
    for (size_t d = 1; d < rank; ++d) fstride[d] = fstride[d - 1] * shape[d - 1];
    int64_t n = shape_numel(shape);
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) off += idx[d] * fstride[d];
      std::memcpy(dst + static_cast<size_t>(k) * width, src + static_cast<size_t>(off) * width, width);
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    return out;
  }
  return Tensor(dt, std::move(shape), make_string_buffer(std::move(bytes)), data_start);
}

std::string serialize_npy(const Tensor& t) {
  const char* code = nullptr;
  for (const auto& k : kTypes)
    if (k.dtype == t.dtype()) code = k.code;
  if (!code) throw_bad_input(std::string("cannot write a ") + dtype_name(t.dtype()) + " tensor as .npy");
  std::string order = (t.dtype() == DataType::Bool || dtype_size(t.dtype()) == 1) ? "|" : "<";
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : (i + 1 < t.shape().size() ? ", " : ""));
  shape += ")";
  std::string header = "{'descr': '" + order + code + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kNpyMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char*>(t.raw()), t.nbytes());
  return out;
}

}  // namespace fusor
