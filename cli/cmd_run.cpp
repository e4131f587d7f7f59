// fusor run MODEL [--input NAME=FILE]... [--output-dir DIR] [--output-format pb|npy] [run flags]
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/report.h"
#include "cli/run_flags.h"
#include "core/util/error.h"
#include "core/onnx/tensor_io.h"
#include "core/util/stopwatch.h"

namespace fusor::cli {

namespace {

// " min -0.12 max 3.4 mean 0.5" for numeric tensors, "" otherwise.
std::string summary_stats(const Tensor& t) {
  if (t.numel() == 0 || t.dtype() == DataType::String || dtype_size(t.dtype()) == 0 ||
      t.dtype() == DataType::Float16 || t.dtype() == DataType::BFloat16 || t.dtype() == DataType::Complex64 ||
      t.dtype() == DataType::Complex128)
    return "";
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nan = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.as_double(i);
    if (std::isnan(v)) {
      ++nan;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "  min %.6g  max %.6g  mean %.6g", lo, hi, sum / std::max<int64_t>(1, t.numel() - nan));
  std::string s = buf;
  if (nan) s += "  (" + std::to_string(nan) + " NaN)";
  return s;
}

int run_run(const Args& args) {
  std::string format = args.get_or("output-format", "pb");
  if (format != "pb" && format != "npy") throw_usage("--output-format: expected pb or npy, got '" + format + "'");
  auto out_dir = args.get("output-dir");
  if (args.has("output-format") && !out_dir) throw_usage("--output-format needs --output-dir");

  RunSession s = open_run_session(args);
  Stopwatch clock;
  std::vector<Tensor> outs = s.executor->run(s.inputs, nullptr, s.start_timeout());
  double run_ms = clock.ms();
  std::vector<std::string> names = s.executor->output_names();

  if (out_dir) {
    std::error_code ec;
    std::filesystem::create_directories(*out_dir, ec);
    if (ec) throw_bad_input(*out_dir + ": cannot create the output directory: " + ec.message());
  }
  std::ostream& out = std::cout;
  out << "model     " << s.model->path << "\n";
  out << "init      " << ms_text(s.init_ms()) << " (load " << ms_text(s.load_ms) << ", optimize "
      << ms_text(s.optimize_ms) << ", plan " << ms_text(s.plan_ms) << "; cache " << s.cache << ")\n";
  out << "run       " << ms_text(run_ms) << " on " << s.executor->threads().num_threads() << " thread(s)\n";
  out << "inputs:\n";
  for (const auto& [name, t] : s.inputs)
    out << "  " << name << "  " << dtype_name(t.dtype()) << "[" << shape_str(t.shape()) << "]\n";
  out << "outputs:\n";
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& t = outs[i];
    if (t.is_plain())
      out << "  " << names[i] << "  " << dtype_name(t.dtype()) << "[" << shape_str(t.shape()) << "]" << summary_stats(t);
    else
      out << "  " << names[i] << "  " << t.describe();
    for (const Tensor& item : t.items())
      out << "\n    " << dtype_name(item.dtype()) << "[" << shape_str(item.shape()) << "]" << summary_stats(item);
    if (out_dir) {
      if (!t.is_plain() && format != "pb")
        throw_usage("output '" + names[i] + "' is a " + t.describe() + ", which .npy cannot hold: use --output-format pb");
      std::filesystem::path p = std::filesystem::path(*out_dir) /
                                (format == "pb" ? "output_" + std::to_string(i) + ".pb" : "out." + sanitize_name(names[i]) + ".npy");
      if (format == "pb")
        write_value_pb(p.string(), t, names[i]);
      else
        write_tensor_npy(p.string(), t);
      out << "  -> " << p.string();
    }
    out << "\n";
  }
  return kExitOk;
}

}  // namespace

Command run_command() {
  Command c;
  c.name = "run";
  c.summary = "run a model on given or random inputs and write its outputs";
  c.usage = "MODEL [--input NAME=FILE]... [--output-dir DIR] [--output-format pb|npy] [--threads N] [--seed S]\n"
            "          [--range LO,HI] [--int-range LO,HI] [--value NAME=V] [optimization flags]";
  c.description =
      "Loads and optimizes MODEL, plans it once and runs it once. Inputs not given with --input are\n"
      "seeded random data of the declared shape (after --dim/--shape); unset symbolic dims are 1, with\n"
      "a warning. With --output-dir, outputs are written as DIR/output_<i>.pb in graph-output order\n"
      "(the ONNX test-data convention: a sequence output is a SequenceProto, an empty optional an\n"
      "OptionalProto), or with --output-format npy as DIR/out.<name>.npy (as ort_peer.js --dump\n"
      "does; tensors only). A summary goes to stdout.";
  c.declare = [](ArgParser& p) {
    p.positional("MODEL", "an .onnx file")
        .option("output-dir", "DIR", "write the outputs into DIR (created if missing)")
        .option("output-format", "pb|npy", "output file format (default pb)");
    add_run_flags(p);
  };
  c.run = run_run;
  return c;
}

}  // namespace fusor::cli
