// A session image's META section (cache/image.fbs): the optimized model and optionally what
// planning produced (kernel implementation per node, prepacked
// buffers, memory plans), to and from a FlatBuffer.
//
// Encoding lays every tensor's bytes and every prepacked buffer into an ImageDataBuilder (the
// DATA section; the same memory once) and records offsets. Decoding builds a fusor::Model whose
// values are numbered densely in the encoded order (0..n-1 per graph, so a plan's per-slot
// arrays stay valid) and whose tensors alias the DATA section (a mapped image: no copy, the
// mapping kept alive by the tensors). The round trip keeps everything save_model writes: names,
// types and shapes of every value, attributes (subgraphs included), doc strings, metadata, opsets
// and the opaque parts, so a hit saves the same optimized model as the miss did.
//
// decode_image runs FlatBuffers' verifier over META first and checks every id and data range it
// follows, so a damaged or hand-made image is an Error (the caller drops it), never a crash.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/image_file.h"
#include "core/ir/model.h"

namespace fusor::cache {

// One ExecPlan's memory plan (the fields of engine/exec's MemoryLayout and its planned sizes).
struct ImageMemoryPlan {
  uint32_t ordinal = 0;
  std::vector<int64_t> offset;
  std::vector<uint64_t> capacity;
  std::vector<int32_t> buffer;
  std::vector<uint8_t> inplace, is_view;
  std::vector<uint64_t> planned_bytes;
  uint64_t arena_bytes = 0, naive_bytes = 0;
  int32_t num_buffers = 0, num_inplace = 0;
};

struct ImagePrepacked {
  uint64_t kernel_id = 0;
  std::string name;
  const void* data = nullptr;  // encoding: the buffer; decoding: inside the mapped image
  uint64_t bytes = 0;
};

struct ImagePlan {
  std::string variant;                 // must equal the session's for the plan to be used
  std::vector<std::string> node_impl;  // per top-level node in order: "" = the registry default
  std::string provider_nodes;          // JSON object
  std::vector<ImagePrepacked> prepacked;
  std::vector<ImageMemoryPlan> memory;
};

// The META bytes; tensors and prepacked buffers are added to `data` (which keeps pointers only:
// `model` and the plan's buffers must stay alive until the image is written).
std::string encode_image_meta(const Model& model, const ImagePlan* plan, ImageDataBuilder& data);

struct DecodedImage {
  std::unique_ptr<Model> model;
  std::optional<ImagePlan> plan;  // prepacked data points into the image (keep it alive)
};

// From a mapped image: tensors alias the mapping and hold a reference to it.
DecodedImage decode_image(const std::shared_ptr<const MappedImage>& image, const std::string& model_name);

// From META bytes just encoded, with `data` still pointing at the encoded model's memory, which
// `keep_alive` owns (a miss decodes what it encoded, so a miss and a hit run the same graph).
DecodedImage decode_image(std::string_view meta, const ImageDataBuilder& data, std::shared_ptr<const void> keep_alive,
                          const std::string& model_name);

}  // namespace fusor::cache
