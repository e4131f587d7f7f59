// Shared by the tests/session gtests: paths, a rule file that fuses Conv+Relu, and small models.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fusor/fusor.h"

namespace fusor::sessiontest {

inline std::string squeezenet() { return std::string(FUSOR_SOURCE_DIR) + "/examples/models/squeezenet1_1.onnx"; }

// A rule file fusing Conv(+bias)+Relu into fusor.FusedConv at level extended (squeezenet has 26
// such pairs); the tests use it rather than the shipped rules/extended, which are written elsewhere.
inline std::string conv_relu_rules() { return std::string(FUSOR_SOURCE_DIR) + "/tests/session/data/conv_relu.rules"; }

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fusor-session-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    dir_ = mkdtemp(buf.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

inline void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
inline std::string read_file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// squeezenet's input in a buffer the test owns.
struct SqueezenetInput {
  std::vector<float> pixels = std::vector<float>(1 * 3 * 224 * 224);
  SqueezenetInput() {
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>((i * 7919) % 255) / 255.0f;
  }
  std::vector<NamedTensor> feed() {
    return {{"input", HostTensor::borrow(ElementType::Float, {1, 3, 224, 224}, pixels.data(), pixels.size() * 4)}};
  }
};

inline double max_abs_diff(const HostTensor& a, const HostTensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape()) return INFINITY;
  double d = 0;
  for (int64_t i = 0; i < a.element_count(); ++i)
    d = std::max(d, static_cast<double>(std::fabs(a.data<float>()[i] - b.data<float>()[i])));
  return d;
}

}  // namespace fusor::sessiontest
