// The session images of a store: files in "<database>.images/" beside the SQLite file, named by
// content (cache/image_file.h), referred to by entries' payloads (cache/payload.h).
//
// Safety rules (with cache/store.h's):
// - An image is renamed into the folder inside the write transaction that inserts its entry, and
//   files are unlinked inside the write transaction that deletes their last entry; SQLite's write
//   lock serializes both, so no process unlinks an image that an entry committed by another
//   process refers to. An image that was renamed by a process killed before its commit is an
//   orphan: the next sweep (in a write transaction) removes it.
// - Temporary files (tmp-PID-N.part: an image being written) are never read; the sweep removes
//   those older than an hour (a killed writer's).
// - A reader that finds its image gone (evicted after it read the entry) treats it as a miss.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fusor::cache {

// "<db_path>.images"
std::string images_dir_of(const std::string& db_path);
// The images folder of an open database connection.
std::string images_dir_of(sqlite3* db);

// The image names the payloads refer to, sorted.
std::vector<std::string> referenced_images(sqlite3* db);
// Unlinks image `name` unless a payload still refers to it. Call inside a write transaction,
// after deleting the entry that referred to it.
void release_image(sqlite3* db, const std::string& name);
// Removes images no payload refers to and temporaries older than an hour; returns how many
// files were removed. Call inside a write transaction.
int64_t sweep_images(sqlite3* db);

}  // namespace fusor::cache
