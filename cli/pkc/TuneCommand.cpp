//===- TuneCommand.cpp - pkc tune: time configurations, keep the fastest --===//
//
// For each export to tune, every configuration (its `@autotune` list, or
// the product of the --try values) is a set of module constants: the file
// is elaborated with them as -D, compiled for GPU 0 and loaded through the
// runtime library as `pkc run --device=cuda` does, and one launch is timed
// on made-up inputs (or --in files) at the --size sizes. The fastest
// configuration is chosen; the record of every trial goes to
// STEM.tune.json and the artifact, compiled from that record exactly as
// `pkc compile --tuned` compiles it, beside it. A configuration that fails
// to compile or launch is recorded with its error and the others go on.
//
// --compile-only compiles every configuration without a GPU and prints
// what ptxas says of each (registers, spills, shared memory).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "CudaExport.h"
#include "ExportInputs.h"
#include "TuneRecord.h"
#include "TunedModule.h"

#include "backends/Compile.h"
#include "driver/Session.h"
#include "ir/PkDialect.h"


#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace pk::cli {

namespace {

/// The configurations --try spells: the values of each name are
/// alternatives, and names combine as a product (in the order first given).
bool configsFromTries(DiagnosticEngine &diag, const std::vector<std::string> &tries,
                      std::vector<ConstantOverrides> &configs) {
  std::vector<std::pair<std::string, std::vector<std::string>>> choices;
  for (const std::string &spec : tries) {
    std::string name, value;
    if (!splitAssignment(spec, name, value)) {
      diag.error(SourceRange(), "--try expects NAME=VALUE (a module constant and a .pk "
                                "expression), got '" +
                                    spec + "'");
      return false;
    }
    auto it = std::find_if(choices.begin(), choices.end(),
                           [&](const auto &c) { return c.first == name; });
    if (it == choices.end())
      choices.push_back({name, {value}});
    else
      it->second.push_back(value);
  }
  configs.assign(1, {});
  for (const auto &[name, values] : choices) {
    std::vector<ConstantOverrides> next;
    for (const ConstantOverrides &partial : configs)
      for (const std::string &value : values) {
        next.push_back(partial);
        next.back().emplace_back(name, value);
      }
    configs = std::move(next);
  }
  return true;
}

/// The largest register count, spills and shared memory over the
/// export's launches.
void recordResources(const std::vector<backends::CudaProgram> &programs, TuneTrial &trial) {
  for (const backends::CudaProgram &program : programs)
    for (const auto &step : program.steps)
      if (const auto *launch = std::get_if<backends::CudaLaunch>(&step)) {
        trial.registers = std::max(trial.registers, launch->registers);
        trial.spillBytes = std::max(trial.spillBytes, launch->spillStores + launch->spillLoads);
        trial.sharedMemory =
            std::max(trial.sharedMemory, launch->staticSharedMemory + launch->dynamicSharedMemory);
      }
}

/// The first error a trial's diagnostics hold, on one line.
std::string firstError(const std::string &diagnostics, const std::string &fallback) {
  for (llvm::StringRef rest = diagnostics; !rest.empty();) {
    auto [line, next] = rest.split('\n');
    if (line.contains("error: "))
      return line.trim().str();
    rest = next;
  }
  return fallback;
}

/// The median time of one launch of `kernel`, in microseconds: launches
/// are queued in rounds of about 20 ms on a stream of their own and timed
/// from the host, so that queueing hides the launch overhead as it does
/// in a program that launches back to back.
std::optional<double> timeLaunches(const pk_kernel *kernel, const std::vector<DLTensor> &args,
                                   std::string &error) {
  void *stream = nullptr;
  if (pk_stream_create(0, &stream) != PK_OK) {
    error = std::string("cannot create a stream: ") + pk_last_error();
    return std::nullopt;
  }
  std::unique_ptr<void, void (*)(void *)> owner(stream, [](void *s) { pk_stream_destroy(0, s); });
  using Clock = std::chrono::steady_clock;
  auto launches = [&](int64_t count) -> std::optional<double> {
    auto start = Clock::now();
    for (int64_t i = 0; i < count; ++i)
      if (pk_launch(kernel, args.data(), args.size(), stream) != PK_OK) {
        error = std::string("launching failed: ") + pk_last_error();
        return std::nullopt;
      }
    if (pk_stream_synchronize(0, stream) != PK_OK) {
      error = std::string("the kernels failed: ") + pk_last_error();
      return std::nullopt;
    }
    return std::chrono::duration<double>(Clock::now() - start).count() / double(count);
  };
  if (!launches(1)) // the first launch also loads the module's code
    return std::nullopt;
  std::optional<double> estimate = launches(3);
  if (!estimate)
    return std::nullopt;
  constexpr double kRoundSeconds = 0.02;
  int64_t count =
      std::clamp<int64_t>(int64_t(kRoundSeconds / std::max(*estimate, 1e-7)), 1, 100000);
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    std::optional<double> seconds = launches(count);
    if (!seconds)
      return std::nullopt;
    rounds.push_back(*seconds);
  }
  std::sort(rounds.begin(), rounds.end());
  return std::round(rounds[rounds.size() / 2] * 1e9) / 1e3; // to the nanosecond
}

/// Compiles (and unless `compileOnly`, times) one configuration of export
/// `name`, in a session of its own whose diagnostics become the trial's
/// error.
TuneTrial runTrial(const CommonOptions &common, const TuneOptions &options, const std::string &name,
                   const std::string &target, const ConstantOverrides &config) {
  TuneTrial trial;
  trial.config = config;
  std::string diagnostics;
  llvm::raw_string_ostream stream(diagnostics);
  Session session(stream);
  session.setImportDirectories(common.includeDirs);
  session.setDeviceKind(backends::deviceKindOf(target));
  mlir::OwningOpRef<mlir::ModuleOp> module =
      loadWithDefines(session, common.input, definesWith(common.defines, config));
  if (!module) {
    trial.error = firstError(diagnostics, "elaborating it failed");
    return trial;
  }
  for (pk::ExportOp other : llvm::make_early_inc_range(module->getOps<pk::ExportOp>()))
    if (other.getSymName() != name)
      other.erase();
  std::optional<ExportSignature> signature = exportSignature(*module, name);

  if (options.compileOnly) {
    std::string error;
    std::optional<backends::BackendOutput> output = compileForCuda(session, *module, target, error);
    if (!output)
      trial.error = firstError(diagnostics, error);
    else
      recordResources(output->cudaPrograms, trial);
    return trial;
  }

  std::optional<std::vector<HostArray>> inputs =
      exportInputs(session.diagnostics(), *signature, options.inputs, options.sizes);
  if (!inputs) {
    trial.error = firstError(diagnostics, "its inputs could not be made");
    return trial;
  }
  std::string error;
  std::optional<CudaExport> loaded = loadOnCuda(session, *module, name, target, error);
  if (!loaded) {
    trial.error = firstError(diagnostics, error);
    return trial;
  }
  recordResources(loaded->programs, trial);
  std::vector<HostArray> outputs = outputArrays(*signature, *inputs);
  DeviceArguments device;
  if (!device.prepare(loaded->kernel, *inputs, outputs, error)) {
    trial.error = error;
    return trial;
  }
  trial.microseconds = timeLaunches(loaded->kernel, device.tensors(), error);
  if (!trial.microseconds)
    trial.error = error;
  return trial;
}

std::string describeBytes(uint64_t bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0)
    return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " B";
}

/// One trial's line, printed as soon as it is done: a tuning run can take
/// a while, and the lines say where it is.
void printTrial(llvm::raw_ostream &out, const TuneTrial &t, size_t width, bool timed) {
  std::string config = describeConstants(t.config);
  out << "  " << config << std::string(width - config.size() + 2, ' ');
  if (!t.error.empty()) {
    out << "failed: " << t.error << "\n";
  } else {
    if (timed)
      out << llvm::formatv("{0,10:f1} us  ", *t.microseconds);
    out << llvm::formatv("{0,3} registers, {1} spilled, {2} shared\n", t.registers,
                         describeBytes(t.spillBytes), describeBytes(t.sharedMemory));
  }
  out.flush();
}

} // namespace

int runTune(const CommonOptions &common, const TuneOptions &options,
            const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, common, diagnostics);
  DiagnosticEngine &diag = session.diagnostics();
  auto error = [&](const std::string &message, int status = 1) {
    diag.error(SourceRange(), message);
    return status;
  };
  if (llvm::StringRef(common.input).ends_with(".mlir"))
    return error("pkc tune needs the .pk source: it compiles the file once per configuration", 2);
  // Listing the configurations elaborates the file too: for the target
  // asked for, or the one GPUs of this kind are (each trial compiles for
  // GPU 0's own).
  session.setDeviceKind(
      backends::deviceKindOf(options.target.empty() ? "cuda:sm_90a" : options.target));

  mlir::OwningOpRef<mlir::ModuleOp> module = loadWithDefines(session, common.input, common.defines);
  if (!module)
    return 1;

  // What to tune, and the configurations of each.
  std::vector<ConstantOverrides> tried;
  if (!options.tries.empty()) {
    if (!configsFromTries(diag, options.tries, tried))
      return 2;
    std::unique_ptr<ast::Module> ast = session.parse(common.input);
    std::set<std::string> constants = ast ? moduleConstants(*ast) : std::set<std::string>();
    for (const auto &[name, value] : tried.front())
      if (!constants.count(name))
        return error("--try " + name + "=...: " + common.input + " does not assign '" + name +
                         "' at module level; a configuration overrides module constants as -D "
                         "does",
                     2);
  }
  std::vector<std::string> names = exportNames(*module);
  std::vector<std::pair<std::string, std::vector<ConstantOverrides>>> work;
  for (const std::string &name : options.exports)
    if (llvm::find(names, name) == names.end())
      return error("--export " + name + ": no export named '" + name + "' in " + common.input +
                       " (exports: " + llvm::join(names, ", ") + ")",
                   2);
  for (pk::ExportOp op : module->getOps<pk::ExportOp>()) {
    std::string name = op.getSymName().str();
    bool named = llvm::is_contained(options.exports, name);
    if (!options.exports.empty() && !named)
      continue;
    std::vector<ConstantOverrides> configs = tried.empty() ? autotuneConfigs(op) : tried;
    if (configs.empty() && !named)
      continue;
    if (configs.empty())
      return error("export '" + name +
                   "' has no configurations to try: decorate it with "
                   "@autotune(configs=[dict(BLOCK=128), ...]) or give --try NAME=VALUE");
    work.emplace_back(name, std::move(configs));
  }
  if (work.empty())
    return error(common.input + " has no export with configurations to try: decorate one with "
                                "@autotune(configs=[dict(BLOCK=128), ...]) or give --try "
                                "NAME=VALUE");

  // Where: GPU 0, or with --compile-only the --target.
  std::string target = options.target;
  std::string device;
  if (options.compileOnly) {
    if (target.empty())
      target = "cuda:sm_90a";
  } else {
    std::string why;
    std::string own = cudaTargetOfDevice(why);
    if (own.empty())
      return error("pkc tune times kernels on a GPU, and " + why +
                   "; --compile-only compiles every configuration without one, and pkc compile "
                   "--tuned RECORD rebuilds a tuned artifact on any machine");
    if (!target.empty() && target != own)
      return error("--target " + target + " is not GPU 0's (" + own +
                       "): pkc tune times on GPU 0, for its own target",
                   2);
    target = own;
    char name[256] = {0};
    if (pk_device_name(0, name, sizeof name) == PK_OK)
      device = name;
  }
  std::string why;
  std::optional<backends::Target> parsed = backends::parseTarget(target, why);
  if (!parsed)
    return error(why, 2);
  if (parsed->kind != backends::Target::Kind::Cuda)
    return error("pkc tune tunes CUDA kernels; " + target + " is not a CUDA target", 2);

  // The sizes every export is timed at, checked once here rather than
  // failing every trial.
  TuneRecord record;
  record.sourcePath = common.input;
  if (auto buffer = llvm::MemoryBuffer::getFile(common.input))
    record.sourceSha256 = backends::sha256Hex((*buffer)->getBuffer().str());
  record.target = target;
  record.device = device;
  record.defines = common.defines;
  for (const auto &[name, configs] : work) {
    std::optional<ExportSignature> signature = exportSignature(*module, name);
    TunedExport tuned;
    tuned.name = name;
    if (!options.compileOnly) {
      std::optional<std::vector<HostArray>> inputs =
          exportInputs(diag, *signature, options.inputs, options.sizes);
      if (!inputs)
        return 1;
      std::vector<int64_t> values = symbolValues(*signature, *inputs);
      for (size_t s = 0; s < values.size(); ++s)
        tuned.sizes.emplace_back(signature->symbols[s], values[s]);
    }
    record.exports.push_back(std::move(tuned));
  }

  llvm::raw_ostream &out = llvm::outs();
  bool anyFailed = false;
  for (size_t e = 0; e < work.size(); ++e) {
    const auto &[name, configs] = work[e];
    TunedExport &tuned = record.exports[e];
    std::vector<std::string> sizes;
    for (const auto &[symbol, value] : tuned.sizes)
      sizes.push_back(symbol + "=" + std::to_string(value));
    out << "pkc tune: export '" << name << "', " << configs.size() << " configuration"
        << (configs.size() == 1 ? "" : "s") << ", "
        << (options.compileOnly ? "compiled for " + target
                                : "on " + device + " (" + target + ")" +
                                      (sizes.empty() ? "" : " at " + llvm::join(sizes, " ")))
        << "\n";
    out.flush();
    size_t width = 6;
    for (const ConstantOverrides &config : configs)
      width = std::max(width, describeConstants(config).size());
    for (const ConstantOverrides &config : configs) {
      tuned.trials.push_back(runTrial(common, options, name, target, config));
      printTrial(out, tuned.trials.back(), width, !options.compileOnly);
    }
    const TuneTrial *best = nullptr;
    for (const TuneTrial &trial : tuned.trials) {
      bool ok = options.compileOnly ? trial.error.empty() : trial.microseconds.has_value();
      if (ok && (!best || (trial.microseconds && *trial.microseconds < *best->microseconds)))
        best = &trial;
    }
    if (best && !options.compileOnly) {
      tuned.chosen = best->config;
      out << llvm::formatv("  chosen: {0} ({1:f1} us)\n", describeConstants(best->config),
                           *best->microseconds);
      out.flush();
    }
    if (!best) {
      diag.error(SourceRange(), "export '" + name + "': every configuration failed");
      anyFailed = true;
    }
  }
  if (anyFailed)
    return 1;
  if (options.compileOnly)
    return 0;

  // The record, then the artifact built from it as pkc compile --tuned would.
  std::string outputDir = options.output.empty() ? "." : options.output;
  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return error("cannot create '" + outputDir + "': " + ec.message());
  llvm::SmallString<256> recordPath(outputDir);
  llvm::sys::path::append(recordPath, llvm::sys::path::stem(common.input) + ".tune.json");
  {
    std::error_code ec;
    llvm::raw_fd_ostream file(recordPath, ec, llvm::sys::fs::OF_Text);
    if (!ec) {
      file << writeTuneRecord(record);
      file.close();
      ec = file.error();
    }
    if (ec)
      return error("cannot write '" + recordPath.str().str() + "': " + ec.message());
  }
  Session artifactSession(llvm::errs());
  configure(artifactSession, common, diagnostics);
  mlir::OwningOpRef<mlir::ModuleOp> tunedModule = loadWithChosenConstants(
      artifactSession, common.input, common.defines, chosenConstants(record));
  if (!tunedModule)
    return 1;
  CompileOptions compile;
  compile.targets = {target};
  compile.output = outputDir;
  std::string manifestPath;
  if (int status = compileForTargets(artifactSession, *tunedModule, common, compile, manifestPath))
    return status;
  out << "pkc tune: wrote " << recordPath.str() << " and " << manifestPath << "\n";
  return 0;
}

} // namespace pk::cli
