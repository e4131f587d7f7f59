// The session image of a cached session (issue 17; the file format is cache/image_file.h and
// cache/image_model.h): what load_optimized found or must store, and how prepare_session builds
// an executor from it.
//
// - Hit: the image is mapped; the model's weights alias the mapping. When the image holds a plan
//   for this session's variant (kernel choice and provider list: image_variant), the executor
//   takes the stored kernel implementation per node, serves prepacked constants from the mapping
//   (no repacking) and restores the memory plans (no planning): restore_exec_options.
// - Miss (or a hit whose image has no plan for this variant): the executor is built with a
//   recording prepack source, and store_session_image writes a new image with the model, the
//   recorded buffers and the memory plans, then points the entry at it.
// A miss and a hit run the same graph: a miss decodes the image form it is about to store, so
// both number values and order nodes the same way, and the prepacked bytes are the same by the
// kernels' contract; outputs are byte-identical (tests/cache/session_image_test.cpp).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cache/image_file.h"
#include "cache/image_model.h"
#include "cache/store.h"
#include "core/ir/model.h"
#include "engine/exec/executor.h"
#include "engine/exec/prepack_sources.h"

namespace fusor {

struct SessionImageState {
  std::unique_ptr<cache::Store> store;
  std::string key;
  std::string model_name;
  cache::EntryMeta meta;
  std::string info;        // the entry's facts (cache/payload.h)
  int64_t max_bytes = 0;
  std::shared_ptr<const cache::MappedImage> image;  // hit
  std::optional<cache::ImagePlan> plan;             // hit: the stored plan, if any
  bool needs_store = false;                         // a miss, or a hit without a usable plan
  std::shared_ptr<RecordingPrepackSource> recorder; // set while planning for a store
};

// engine version + build + CPU features: the identity images are checked against on open.
std::string image_identity();

// The execution setup a stored plan is valid for: the kernel implementation asked for, the
// provider list, and the environment that changes which kernel a node gets or how it packs
// (FUSOR_KERNELS, FUSOR_ISA, FUSOR_GEMM_TILE, FUSOR_GEMM_BLOCK).
std::string image_variant(const ExecOptions& exec, const std::vector<std::string>& providers);

// Sets exec's kernel choice per node, prepack source and stored memory plans from the image's
// plan; false (exec unchanged) when there is no plan for `variant` or it does not fit the model.
bool restore_exec_options(const SessionImageState& st, const Model& model, const std::string& variant,
                          ExecOptions& exec, std::map<std::string, int64_t>& provider_nodes);

// Writes the image of `model` (with the plan of `executor` when given: the recorder's buffers,
// every plan's initial memory, the kernel implementation per top-level node) and stores the
// entry. Never throws: a failure is a warning and the run goes on. Returns whether it stored.
bool store_session_image(SessionImageState& st, const Model& model, const Executor* executor,
                         const std::string& variant, const ExecOptions* exec,
                         const std::map<std::string, int64_t>* provider_nodes);

}  // namespace fusor
