// A thin RAII layer over the SQLite C API for the cache: statements with typed binds and
// columns, and one exception type carrying SQLite's result code, so the store can tell a
// corrupt file (move it aside) from a busy or read-only one (skip the cache for this run).
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fusor::cache {

class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }
  // The file is not a database or is damaged: the store moves it aside.
  bool corrupt() const { return (code_ & 0xff) == SQLITE_CORRUPT || (code_ & 0xff) == SQLITE_NOTADB; }
  bool busy() const { return (code_ & 0xff) == SQLITE_BUSY || (code_ & 0xff) == SQLITE_LOCKED; }

 private:
  int code_;
};

// Throws SqliteError for any result other than the accepted ones.
void check(sqlite3* db, int rc, const char* what);
// Runs SQL without results (several statements allowed).
void exec(sqlite3* db, const char* sql);

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, std::string_view text);            // TEXT
  Stmt& bind_blob(int i, std::string_view bytes);      // BLOB, not copied: must outlive step()
  // true while there is a row; false when done.
  bool step();
  void run() { while (step()) {} }
  int64_t int_at(int col) const;
  std::string text_at(int col) const;
  std::string_view blob_at(int col) const;  // valid until the next step()
  bool null_at(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
  const char* sql_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed uncommitted (an exception).
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  void commit();

 private:
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace fusor::cache
