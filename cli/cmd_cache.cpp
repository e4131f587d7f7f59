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

int run_list(cache::Store& store, bool as_json) {
  std::vector<cache::EntryRow> rows = store.list();
  if (as_json) {
    json::Value v = json::Value::object();
    v.set("path", store.path());
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
  std::cout << store.path() << ": " << rows.size() << " entr" << (rows.size() == 1 ? "y" : "ies")
            << " (most recently used first)\n";
  for (const cache::EntryRow& r : rows)
    std::cout << "  " << r.key.substr(0, 16) << "  " << bytes_text(r.size) << "  " << r.hits << " hit(s)  last used "
              << time_text(r.last_used_ms) << "  " << r.meta.level << "/" << r.meta.providers << "  " << r.meta.model
              << "\n";
  return kExitOk;
}

int run_stats(cache::Store& store, int64_t max_bytes, bool as_json) {
  cache::StoreStats s = store.stats();
  if (as_json) {
    json::Value v = json::Value::object();
    v.set("path", s.path);
    v.set("entries", s.entries);
    v.set("bytes", s.bytes);
    v.set("max_bytes", max_bytes);
    v.set("file_bytes", s.file_bytes);
    v.set("hits", s.hits);
    std::cout << v.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "cache      " << s.path << "\n"
            << "entries    " << s.entries << " (" << bytes_text(s.bytes) << " of " << bytes_text(max_bytes)
            << " allowed)\n"
            << "file       " << bytes_text(s.file_bytes) << " (database and WAL)\n"
            << "hits       " << s.hits << "\n";
  return kExitOk;
}

int run_verify(cache::Store& store, bool as_json) {
  cache::VerifyReport r = store.verify(/*drop=*/true);
  bool ok = r.integrity_ok && r.bad_keys.empty();
  if (as_json) {
    json::Value v = json::Value::object();
    v.set("path", store.path());
    v.set("ok", ok);
    v.set("integrity", r.integrity);
    v.set("entries", r.entries);
    json::Value bad = json::Value::array();
    for (const std::string& k : r.bad_keys) bad.push_back(k);
    v.set("dropped", std::move(bad));
    std::cout << v.dump(2) << "\n";
  } else {
    std::cout << "cache      " << store.path() << "\n"
              << "integrity  " << r.integrity << (r.integrity_ok ? "" : " (the file was moved aside; a new cache was started)")
              << "\n"
              << "entries    " << r.entries << " checked, " << r.bad_keys.size() << " failed the checksum"
              << (r.bad_keys.empty() ? "" : " (dropped)") << "\n";
  }
  return ok ? kExitOk : kExitBadInput;
}

int run_clear(cache::Store& store, bool as_json) {
  int64_t n = store.clear();
  if (n < 0) throw_bad_input("cache " + store.path() + ": could not clear it (see the warning above)");
  if (as_json) {
    json::Value v = json::Value::object();
    v.set("path", store.path());
    v.set("removed", n);
    std::cout << v.dump(2) << "\n";
  } else {
    std::cout << "removed " << n << " entr" << (n == 1 ? "y" : "ies") << " from " << store.path() << "\n";
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
  std::unique_ptr<cache::Store> store = cache::Store::open(path);
  if (!store) throw_bad_input("cache " + path + ": cannot be opened (see the warning above)");
  bool as_json = args.has("json");
  if (action == "list") return run_list(*store, as_json);
  if (action == "stats") return run_stats(*store, max_bytes, as_json);
  if (action == "verify") return run_verify(*store, as_json);
  return run_clear(*store, as_json);
}

}  // namespace

Command cache_command() {
  Command c;
  c.name = "cache";
  c.summary = "list, measure, verify or clear the optimized-session cache";
  c.usage = "list|stats|verify|clear [--cache FILE] [--json]";
  c.description =
      "The optimized-session cache holds optimized models keyed by everything that changes them\n"
      "(docs/cli.md, 'fusor cache'). list: entries, most recently used first. stats: entry count and\n"
      "bytes against the bound. verify: SQLite's integrity check and every entry's checksum; bad\n"
      "entries are dropped, a damaged file is moved aside (exit 2 when anything was wrong). clear:\n"
      "delete every entry.";
  c.declare = [](ArgParser& p) {
    p.positional("ACTION", "list, stats, verify or clear")
        .option("cache", "FILE", "the cache file (default $XDG_CACHE_HOME/fusor/cache.db)")
        .option("cache-max-mb", "N", "the bound stats reports against (default $FUSOR_CACHE_MAX_MB or 1024)")
        .flag("json", "print a JSON report (keys in docs/cli.md)");
  };
  c.run = run_cache;
  return c;
}

}  // namespace fusor::cli
