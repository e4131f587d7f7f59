// Where the shipped providers/ and rules/ are (shipped_rules_root, declared in optimize.h), in
// this order, the first that holds a providers/ folder:
//   1. $FUSOR_RULES_DIR (always, even when it holds nothing: the user said so);
//   2. the installed package's share/fusor, for a host app built with find_package(fusor): the
//      package compiles fusor_installed_rules_dir() into the app (cmake/fusorConfig.cmake.in);
//      the library declares it weak, so other programs link without it;
//   3. share/fusor beside the running executable's bin/ folder: an installed `fusor`
//      (PREFIX/bin/fusor finds PREFIX/share/fusor, wherever PREFIX was moved);
//   4. the source tree fusor was built from (compiled in), unless $FUSOR_TEST_NO_SOURCE_TREE is
//      set (tests of an install where the source tree cannot be hidden otherwise).
// None found: the compiled-in path, so the error that follows names a path.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "engine/session/optimize.h"

extern "C" const char* fusor_installed_rules_dir() __attribute__((weak));

namespace fusor {

namespace {

namespace fs = std::filesystem;

bool has_providers(const fs::path& root) {
  std::error_code ec;
  return !root.empty() && fs::is_directory(root / "providers", ec);
}

std::string exe_relative_root() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return "";
  fs::path root = exe.parent_path().parent_path() / "share" / "fusor";
  return has_providers(root) ? root.lexically_normal().string() : "";
}

std::string find_root() {
  if (fusor_installed_rules_dir) {
    const char* dir = fusor_installed_rules_dir();
    if (dir && has_providers(dir)) return dir;
  }
  if (std::string r = exe_relative_root(); !r.empty()) return r;
#ifdef FUSOR_DEFAULT_RULES_ROOT
  const char* hide = std::getenv("FUSOR_TEST_NO_SOURCE_TREE");
  if (!(hide && *hide)) return FUSOR_DEFAULT_RULES_ROOT;
  return "<no shipped rules found: set FUSOR_RULES_DIR>";
#else
  return ".";
#endif
}

}  // namespace

std::string shipped_rules_root() {
  if (const char* env = std::getenv("FUSOR_RULES_DIR"); env && *env) return env;
  static const std::string root = find_root();
  return root;
}

}  // namespace fusor
