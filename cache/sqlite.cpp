#include "cache/sqlite.h"

namespace fusor::cache {

void check(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  std::string msg = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  throw SqliteError(db ? sqlite3_extended_errcode(db) : rc, msg);
}

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqliteError(sqlite3_extended_errcode(db), msg);
  }
}

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db), sql_(sql) {
  check(db_, sqlite3_prepare_v2(db_, sql, -1, &st_, nullptr), sql);
}

Stmt::~Stmt() { sqlite3_finalize(st_); }

Stmt& Stmt::bind(int i, int64_t v) {
  check(db_, sqlite3_bind_int64(st_, i, v), sql_);
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view text) {
  check(db_, sqlite3_bind_text64(st_, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), sql_);
  return *this;
}

Stmt& Stmt::bind_blob(int i, std::string_view bytes) {
  check(db_, sqlite3_bind_blob64(st_, i, bytes.data(), bytes.size(), SQLITE_STATIC), sql_);
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  check(db_, rc, sql_);
  return false;
}

int64_t Stmt::int_at(int col) const { return sqlite3_column_int64(st_, col); }

std::string Stmt::text_at(int col) const {
  const unsigned char* p = sqlite3_column_text(st_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(st_, col)))
           : std::string();
}

std::string_view Stmt::blob_at(int col) const {
  const void* p = sqlite3_column_blob(st_, col);
  return p ? std::string_view(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(st_, col)))
           : std::string_view();
}

bool Stmt::null_at(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }

Transaction::Transaction(sqlite3* db) : db_(db) { exec(db_, "BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, "COMMIT");
  done_ = true;
}

}  // namespace fusor::cache
