// fusor cache list|stats|verify|clear [--cache FILE] [--json]: housekeeping of the
// optimized-session cache (cache/store.h).
#include <ctime>
#include <iostream>

#include "cache/store.h"
#include "cli/command.h"
#include "cli/report.h"
#include "core/util/error.h"
#include "core/util/json.h"

namespace fusor::cli {

namespace {

// "2026-11-29 22:15:03" (UTC)
std::string time_text(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// A failure an operation fell back from (the store behaves as empty then) is an error here: a
// report must not pass an unreadable cache off as an empty one.
void check_store(const cache::Store& store) {
  if (!store.problem().empty()) throw_bad_input("cache " + store.path() + ": " + store.problem());
}

// `store` is null when there is no cache at `path` (nothing is created to report on).
int run_list(cache::Store* store, const std::string& path, bool as_json) {
  std::vector<cache::EntryRow> rows;
  if (store) {
    rows = store->list();
    check_store(*store);
  }
  if (as_json) {
    json::Value v = json::Value::object();
    v.set("path", path);
    v.set("exists", store != nullptr);
    json::Value entries = json::Value::array();
    for (const cache::EntryRow& r : rows) {
      json::Value e = json::Value::object();
      e.set("key", r.key);
      e.set("model", r.meta.model);
      e.set("providers", r.meta.providers);
      e.set("level", r.meta.level);
      e.set("size", r.size);
      e.set("hits", r.hits);
      e.set("created_ms", r.created_ms);
      e.set("last_used_ms", r.last_used_ms);
      entries.push_back(std::move(e));
    }
    v.set("entries", std::move(entries));
    std::cout << v.dump(2) << "\n";
    return kExitOk;
  }
  if (!store) {
    std::cout << path << ": no cache there yet (0 entries)\n";
    return kExitOk;
  }
  std::cout << path << ": " << rows.size() << " entr" << (rows.size() == 1 ? "y" : "ies")
            << " (most recently used first)\n";
  for (const cache::EntryRow& r : rows)
    std::cout << "  " << r.key.substr(0, 16) << "  " << bytes_text(r.size) << "  " << r.hits << " hit(s)  last used "
              << time_text(r.last_used_ms) << "  " << r.meta.level << "/" << r.meta.providers << "  " << r.meta.model
              << "\n";
  return kExitOk;
}

int run_stats(cache::Store* store, const std::string& path, int64_t max_bytes, bool as_json) {
  cache::StoreStats s;
  s.path = path;
  if (store) {
    s = store->stats();
    check_store(*store);
  }
  if (as_json) {
    json::Value v = json::Value::object();
    v.set("path", s.path);
    v.set("exists", store != nullptr);
    v.set("entries", s.entries);
    v.set("bytes", s.bytes);
    v.set("max_bytes", max_bytes);
    v.set("file_bytes", s.file_bytes);
    v.set("hits", s.hits);
    std::cout << v.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "cache      " << s.path << (store ? "" : " (no cache there yet)") << "\n"
            << "entries    " << s.entries << " (" << bytes_text(s.bytes) << " of " << bytes_text(max_bytes)
            << " allowed)\n"
            << "file       " << bytes_text(s.file_bytes) << " (database and WAL)\n"
            << "hits       " << s.hits << "\n";
  return kExitOk;
}

// `damaged`: why a read-only open refused the file (it is reported, not moved).
int run_verify(cache::Store* store, const std::string& path, bool repair, const std::string& damaged,
               bool as_json) {
  cache::VerifyReport r;
  if (!damaged.empty()) {
    r.integrity_ok = false;
    r.integrity = damaged;
  } else if (store && !store->recovered().empty()) {
    // verify --repair found the file damaged at open and moved it aside: report that.
    r.integrity_ok = false;
    r.integrity = store->recovered();
  } else if (store) {
    r = store->verify(repair);
    if (repair && !store->recovered().empty()) r.integrity += "; " + store->recovered();
  } else {
    r.integrity = "no cache there yet";
  }
  bool ok = r.integrity_ok && r.bad_keys.empty();
  if (as_json) {
    json::Value v = json::Value::object();
    v.set("path", path);
    v.set("exists", store != nullptr || !damaged.empty());
    v.set("ok", ok);
    v.set("integrity", r.integrity);
    v.set("entries", r.entries);
    v.set("images", r.images);
    json::Value bad = json::Value::array();
    for (const std::string& k : r.bad_keys) bad.push_back(k);
    v.set("bad", std::move(bad));
    json::Value why = json::Value::array();
    for (const std::string& p : r.problems) why.push_back(p);
    v.set("problems", std::move(why));
    v.set("repaired", repair && !ok);
    std::cout << v.dump(2) << "\n";
  } else {
    std::cout << "cache      " << path << "\n"
              << "integrity  " << r.integrity << (r.integrity_ok || repair ? "" : " (nothing was changed; --repair moves it aside)")
              << "\n"
              << "entries    " << r.entries << " checked (" << r.images << " session images, every section), "
              << r.bad_keys.size() << " bad" << (r.bad_keys.empty() ? "" : repair ? " (dropped)" : " (kept; --repair drops them)")
              << "\n";
    for (size_t i = 0; i < r.bad_keys.size() && i < r.problems.size(); ++i)
      std::cout << "  " << r.bad_keys[i].substr(0, 16) << ": " << r.problems[i] << "\n";
  }
  return ok ? kExitOk : kExitBadInput;
}

int run_clear(cache::Store* store, const std::string& path, bool as_json) {
  int64_t n = 0;
  if (store) {
    n = store->clear();
    if (n < 0) throw_bad_input("cache " + path + ": could not clear it: " + store->problem());
  }
  if (as_json) {
    json::Value v = json::Value::object();
    v.set("path", path);
    v.set("exists", store != nullptr);
    v.set("removed", n);
    std::cout << v.dump(2) << "\n";
  } else if (!store) {
    std::cout << "no cache at " << path << "; nothing removed\n";
  } else {
    std::cout << "removed " << n << " entr" << (n == 1 ? "y" : "ies") << " from " << path << "\n";
  }
  return kExitOk;
}

int run_cache(const Args& args) {
  const std::string& action = args.positional(0);
  if (action != "list" && action != "stats" && action != "verify" && action != "clear")
    throw_usage("unknown cache action '" + action + "' (known: list, stats, verify, clear)");
  std::string path = args.get_or("cache", cache::default_cache_path());
  if (path.empty()) throw_usage("no cache location: set XDG_CACHE_HOME or HOME, or pass --cache FILE");
  int64_t max_bytes = args.has("cache-max-mb") ? args.get_int("cache-max-mb", 0, 1, int64_t{1} << 30) << 20
                                               : cache::default_max_bytes();
  bool as_json = args.has("json");
  bool repair = args.has("repair");
  if (repair && action != "verify") throw_usage("--repair goes with `fusor cache verify` only");
  // list, stats and plain verify only read: they create, move and write nothing. clear and
  // verify --repair write, but never create a cache that is not there.
  bool writes = action == "clear" || repair;
  cache::OpenResult o = cache::Store::open(path, writes ? cache::Access::ReadWrite : cache::Access::ReadOnly,
                                           /*create=*/false);
  using S = cache::OpenResult::Status;
  std::string damaged;
  if (o.status == S::Damaged && action == "verify") damaged = o.message;
  else if (o.status != S::Opened && o.status != S::Missing) throw_bad_input(o.message);
  cache::Store* store = o.store.get();
  if (action == "list") return run_list(store, path, as_json);
  if (action == "stats") return run_stats(store, path, max_bytes, as_json);
  if (action == "verify") return run_verify(store, path, repair, damaged, as_json);
  return run_clear(store, path, as_json);
}

}  // namespace

Command cache_command() {
  Command c;
  c.name = "cache";
  c.summary = "list, measure, verify or clear the optimized-session cache";
  c.usage = "list|stats|verify|clear [--cache FILE] [--repair] [--json]";
  c.description =
      "The optimized-session cache holds optimized models keyed by everything that changes them\n"
      "(docs/cli.md, 'fusor cache'). list: entries, most recently used first. stats: entry count and\n"
      "bytes against the bound. verify: SQLite's integrity check, every entry's checksum and every\n"
      "session image's section checksums (exit 2 when anything is wrong); with --repair, bad entries\n"
      "are dropped with their images, orphaned images swept and a damaged cache is moved aside.\n"
      "clear: delete every entry and image. list, stats and verify change nothing; no action creates\n"
      "a cache, and a file that is not a fusor cache is refused untouched (exit 2).";
  c.declare = [](ArgParser& p) {
    p.positional("ACTION", "list, stats, verify or clear")
        .option("cache", "FILE", "the cache file (default $XDG_CACHE_HOME/fusor/cache.db)")
        .option("cache-max-mb", "N", "the bound stats reports against (default $FUSOR_CACHE_MAX_MB or 1024)")
        .flag("repair", "verify: drop entries failing their checksum, move a damaged cache aside")
        .flag("json", "print a JSON report (keys in docs/cli.md)");
  };
  c.run = run_cache;
  return c;
}

}  // namespace fusor::cli
