#include "cache/image_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "cache/image_file.h"
#include "cache/payload.h"
#include "cache/sqlite.h"

namespace fusor::cache {

namespace fs = std::filesystem;

std::string images_dir_of(const std::string& db_path) { return db_path + ".images"; }

std::string images_dir_of(sqlite3* db) {
  const char* f = sqlite3_db_filename(db, "main");
  return images_dir_of(std::string(f ? f : ""));
}

std::vector<std::string> referenced_images(sqlite3* db) {
  std::vector<std::string> names;
  Stmt q(db, "SELECT payload FROM payloads WHERE length(payload) < 256");
  while (q.step())
    if (auto ref = decode_image_ref(q.blob_at(0))) names.push_back(ref->name);
  std::sort(names.begin(), names.end());
  return names;
}

void release_image(sqlite3* db, const std::string& name) {
  if (!is_image_name(name)) return;
  Stmt q(db, "SELECT COUNT(*) FROM payloads WHERE length(payload) < 256 AND instr(payload, ?) > 0");
  q.bind(1, std::string_view(name));
  q.step();
  if (q.int_at(0) > 0) return;
  ::unlink((images_dir_of(db) + "/" + name).c_str());
}

int64_t sweep_images(sqlite3* db) {
  const std::string dir = images_dir_of(db);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return 0;
  const std::vector<std::string> keep = referenced_images(db);
  const std::time_t now = std::time(nullptr);
  int64_t removed = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    bool drop = false;
    if (is_image_name(n)) {
      drop = !std::binary_search(keep.begin(), keep.end(), n);
    } else if (is_temp_image_name(n)) {
      struct stat st {};
      drop = ::stat(e.path().c_str(), &st) == 0 && now - st.st_mtime > 3600;
    }
    if (drop && ::unlink(e.path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace fusor::cache
