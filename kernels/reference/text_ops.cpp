// Text reference kernels: StringNormalizer and TfIdfVectorizer.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// StringNormalizer: drops stopwords (compared case-insensitively unless is_case_sensitive=1),
// then applies case_change_action (NONE / LOWER / UPPER, ASCII). Input [C] or [1, C]; when every
// string is dropped the output holds one empty string.
class StringNormalizerKernel : public Kernel {
 public:
  explicit StringNormalizerKernel(const KernelInfo& info)
      : case_sensitive_(info.n().attr_int("is_case_sensitive", 0) != 0) {
    std::string a = info.n().attr_string("case_change_action", "NONE");
    if (a != "NONE" && a != "LOWER" && a != "UPPER") throw_bad_input(info.where() + ": unknown case_change_action '" + a + "'");
    action_ = a;
    if (const Attribute* s = info.n().attr("stopwords"))
      for (const std::string& w : s->strings) stop_.insert(case_sensitive_ ? w : ascii_case(w, false));
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    if (x.dtype() != DataType::String) throw_bad_input(w + ": input must be strings");
    if (!(x.rank() == 1 || (x.rank() == 2 && x.dim(0) == 1))) throw_bad_input(w + ": input must be [C] or [1, C]");
    std::vector<std::string> kept;
    for (const std::string& s : x.string_data()) {
      if (stop_.count(case_sensitive_ ? s : ascii_case(s, false))) continue;
      kept.push_back(action_ == "NONE" ? s : ascii_case(s, action_ == "UPPER"));
    }
    if (kept.empty()) kept.push_back("");
    const int64_t k = static_cast<int64_t>(kept.size());
    Tensor& y = ctx.output(0, x.rank() == 1 ? Shape{k} : Shape{1, k}, DataType::String);
    y.string_data() = std::move(kept);
  }

 private:
  bool case_sensitive_;
  std::string action_;
  std::set<std::string> stop_;
};

// TfIdfVectorizer: counts the pool's n-grams (min_gram_length..max_gram_length, tokens taken
// every skip+1 positions for skip in 0..max_skip_count; unigrams once per position) in each row,
// then TF (count), IDF (weight if count > 0) or TFIDF (count * weight).
class TfIdfVectorizerKernel : public Kernel {
 public:
  explicit TfIdfVectorizerKernel(const KernelInfo& info) {
    const Node& n = info.n();
    const std::string w = info.where();
    min_n_ = n.attr_int("min_gram_length", 1);
    max_n_ = n.attr_int("max_gram_length", 1);
    max_skip_ = n.attr_int("max_skip_count", 0);
    std::string mode = n.attr_string("mode", "TF");
    if (mode != "TF" && mode != "IDF" && mode != "TFIDF") throw_bad_input(w + ": unknown mode '" + mode + "'");
    mode_ = mode;
    std::vector<int64_t> counts = n.attr_ints("ngram_counts");
    std::vector<int64_t> indexes = n.attr_ints("ngram_indexes");
    weights_ = n.attr_floats("weights");
    const Attribute* pi = n.attr("pool_int64s");
    const Attribute* ps = n.attr("pool_strings");
    strings_ = ps != nullptr && !ps->strings.empty();
    const int64_t pool_size = strings_ ? static_cast<int64_t>(ps->strings.size()) : (pi ? static_cast<int64_t>(pi->ints.size()) : 0);
    if (min_n_ < 1 || max_n_ < min_n_) throw_bad_input(w + ": bad gram lengths");
    // Level l (n = l + 1) occupies pool[counts[l], counts[l + 1]).
    int64_t ngram = 0;
    for (size_t l = 0; l < counts.size(); ++l) {
      const int64_t begin = counts[l], end = l + 1 < counts.size() ? counts[l + 1] : pool_size;
      const int64_t len = static_cast<int64_t>(l) + 1;
      if (begin < 0 || end > pool_size || (end - begin) % len) throw_bad_input(w + ": ngram_counts do not match the pool");
      for (int64_t p = begin; p < end; p += len, ++ngram) {
        if (ngram >= static_cast<int64_t>(indexes.size())) throw_bad_input(w + ": too few ngram_indexes");
        std::vector<std::string> key;
        for (int64_t t = 0; t < len; ++t) key.push_back(strings_ ? ps->strings[p + t] : std::to_string(pi->ints[p + t]));
        pool_[key] = indexes[ngram];
        out_len_ = std::max(out_len_, indexes[ngram] + 1);
      }
    }
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    if (x.rank() != 1 && x.rank() != 2) throw_bad_input(w + ": input must be [C] or [N, C]");
    const int64_t rows = x.rank() == 2 ? x.dim(0) : 1, cols = x.dim(-1);
    Tensor& y = ctx.output(0, x.rank() == 2 ? Shape{rows, out_len_} : Shape{out_len_}, DataType::Float);
    float* py = y.data<float>();
    std::fill(py, py + y.numel(), 0.0f);
    auto token = [&](int64_t i) {
      if (x.dtype() == DataType::String) return x.string_data()[i];
      return std::to_string(x.as_int64(i));
    };
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<std::string> toks;
      for (int64_t c = 0; c < cols; ++c) toks.push_back(token(r * cols + c));
      std::vector<double> counts(static_cast<size_t>(out_len_), 0);
      for (int64_t i = 0; i < cols; ++i)
        for (int64_t n = min_n_; n <= max_n_; ++n)
          for (int64_t s = 0; s <= (n == 1 ? 0 : max_skip_); ++s) {
            const int64_t last = i + (n - 1) * (s + 1);
            if (last >= cols) break;
            std::vector<std::string> key;
            for (int64_t t = 0; t < n; ++t) key.push_back(toks[i + t * (s + 1)]);
            if (auto it = pool_.find(key); it != pool_.end()) counts[it->second] += 1;
          }
      for (int64_t k = 0; k < out_len_; ++k) {
        const double wt = k < static_cast<int64_t>(weights_.size()) ? weights_[k] : 1.0;
        double v = counts[k];
        if (mode_ == "IDF") v = v > 0 ? wt : 0;
        else if (mode_ == "TFIDF") v *= wt;
        py[r * out_len_ + k] = static_cast<float>(v);
      }
    }
  }

 private:
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0, out_len_ = 0;
  std::string mode_;
  std::vector<float> weights_;
  bool strings_ = false;
  std::map<std::vector<std::string>, int64_t> pool_;  // n-gram (tokens as text) -> output index
};

}  // namespace

void register_text_kernels(KernelRegistry& r) {
  add_reference_kernel<StringNormalizerKernel>(r, "StringNormalizer");
  add_reference_kernel<TfIdfVectorizerKernel>(r, "TfIdfVectorizer");
}

}  // namespace fusor
