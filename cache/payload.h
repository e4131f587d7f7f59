// What a cache entry holds, and its encoding.
//
// info: JSON facts about the miss that produced it, which a hit reports as its own:
//   {"rules_fired": {...}, "nodes_before": N, "ops_before": {...}, "deps": [[path, hash], ...]}.
// payload: a reference to the entry's session image (cache/image_file.h), a file in the store's
//   image folder named by its content: "fusor-image-ref 1\n<name>\n<bytes>\n". The image holds the
//   optimized model (no parsing, weights mapped in place) and, once a session was planned from
//   it, the plan: kernel implementation per node, prepacked weights and memory plans.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fusor::cache {

struct SessionFacts {
  std::map<std::string, int64_t> rules_fired;
  int64_t nodes_before = 0;  // top-level nodes of the original model
  std::map<std::string, int64_t> ops_before;  // op histogram of the original model, all depths
  // Files the entry depends on beyond its key (rule files reached through imports): path and
  // hash when stored; a hit whose files hash differently now is rebuilt.
  std::vector<std::pair<std::string, std::string>> deps;
};

std::string encode_facts(const SessionFacts& facts);
// Throws fusor::Error when the JSON is not the facts of an entry (the caller drops it).
SessionFacts decode_facts(const std::string& info);

struct ImageRef {
  std::string name;  // the file name in the image folder
  uint64_t bytes = 0;
};

std::string encode_image_ref(const ImageRef& ref);
// nullopt when the payload is not an image reference (e.g. an entry of an older format).
std::optional<ImageRef> decode_image_ref(std::string_view payload);

}  // namespace fusor::cache
