#include "engine/exec/prepack_sources.h"

#include "core/util/log.h"

namespace fusor {

PrepackedBuffer RecordingPrepackSource::get(uint64_t kernel_id, std::string_view name, size_t bytes,
                                            const PrepackFill& fill) {
  PrepackedBuffer b = fill_fresh(bytes, fill);
  std::lock_guard lock(mu_);
  records_.push_back({kernel_id, std::string(name), b});
  return b;
}

std::vector<PrepackRecord> RecordingPrepackSource::records() const {
  std::lock_guard lock(mu_);
  return records_;
}

void StoredPrepackSource::add(uint64_t kernel_id, std::string name, PrepackedBuffer buffer) {
  std::lock_guard lock(mu_);
  table_[{kernel_id, std::move(name)}] = std::move(buffer);
}

PrepackedBuffer StoredPrepackSource::get(uint64_t kernel_id, std::string_view name, size_t bytes,
                                         const PrepackFill& fill) {
  {
    std::lock_guard lock(mu_);
    auto it = table_.find(std::make_pair(kernel_id, std::string(name)));
    if (it != table_.end() && it->second.size() == bytes) {
      ++served_;
      return it->second;
    }
    ++filled_;
  }
  FUSOR_LOG(Info) << "session image: no prepacked buffer '" << name << "' of " << bytes << " bytes for kernel "
                  << (kernel_id >> 32) << "/" << (kernel_id & 0xffffffffu) << "; packing it";
  return fill_fresh(bytes, fill);
}

size_t StoredPrepackSource::served() const {
  std::lock_guard lock(mu_);
  return served_;
}

size_t StoredPrepackSource::filled() const {
  std::lock_guard lock(mu_);
  return filled_;
}

}  // namespace fusor
