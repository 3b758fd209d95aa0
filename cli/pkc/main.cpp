//===- main.cpp - The pkc command line ------------------------------------===//
//
//   pkc check FILE                 parse, elaborate, verify
//   pkc compile FILE --emit=ast|ir print a stage
//   pkc run FILE --entry NAME ...  run an export on the GPU or the reference interpreter
//
// Exit status: 0 on success, 1 when the program has errors, 2 for bad
// command-line usage.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "CLI/CLI.hpp"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <pthread.h>
#include <unistd.h>

#include <functional>

#ifndef PKC_VERSION
#define PKC_VERSION "0.0.0"
#endif

namespace {

/// Runs `work` on a thread with a large stack. The parser and the
/// elaborator recurse with the program's nesting; this keeps deep (but
/// legal) programs far from a stack overflow.
int runWithLargeStack(const std::function<int()> &work) {
  struct Job {
    const std::function<int()> *work;
    int result = 1;
  } job{&work};
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, size_t(512) << 20);
  pthread_t thread;
  auto entry = [](void *p) -> void * {
    auto *j = static_cast<Job *>(p);
    j->result = (*j->work)();
    return nullptr;
  };
  if (pthread_create(&thread, &attributes, entry, &job) != 0)
    return work(); // no thread: run here
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
  return job.result;
}

void addCommonOptions(CLI::App *command, pk::cli::CommonOptions &options) {
  command->add_option("file", options.input, ".pk source file (or .mlir pk IR)")->required();
  command->add_option("-D,--define", options.defines,
                      "NAME=VALUE: set (or override) a module constant; fixes a symbolic size");
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"pkc: an ahead-of-time compiler for Pallas-style kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("pkc ") + PKC_VERSION + " (LLVM " +
                                        LLVM_VERSION_STRING + ")");
  std::string color = "auto", format = "text";
  app.add_option("--color", color, "color diagnostics: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--diagnostics-format", format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));

  pk::cli::CommonOptions common;
  CLI::App *check = app.add_subcommand("check", "parse, elaborate and verify a .pk file");
  addCommonOptions(check, common);

  pk::cli::CompileOptions compile;
  CLI::App *compileCommand = app.add_subcommand("compile", "compile a .pk file and print a stage");
  addCommonOptions(compileCommand, common);
  compileCommand
      ->add_option("--emit", compile.emit,
                   "what to produce: ast or ir (the default) without --target; with --target, "
                   "artifact (the default: artifact + manifest), ptx, llvm, gpu, cubin (CUDA) or "
                   "mlir (TPU)")
      ->check(CLI::IsMember({"ast", "ir", "artifact", "ptx", "llvm", "gpu", "cubin", "mlir"}));
  compileCommand->add_option("--target", compile.targets,
                             "cuda:sm_90a, cuda:sm_80, ... or tpu; repeat for several artifacts");
  compileCommand->add_option("-o,--output", compile.output,
                             "output file ('-' for stdout), or with --target the directory for "
                             "artifacts and the manifest");
  compileCommand->add_option("--dump-dir", compile.dumpDir,
                             "write the IR after every backend stage (and tool logs) here");
  compileCommand->add_flag("--debug-info", compile.debugInfo, "print source locations in the IR");

  pk::cli::RunOptions run;
  CLI::App *runCommand = app.add_subcommand("run", "run an export on the GPU or the reference interpreter");
  addCommonOptions(runCommand, common);
  runCommand->add_option("--entry", run.entry, "the export to run (default: the only one)");
  runCommand->add_option("--in", run.inputs, "NAME=FILE.npy: an input array");
  runCommand->add_option("--out", run.outputs, "FILE.npy or INDEX=FILE.npy: where to write an output");
  runCommand->add_option("--size", run.sizes, "NAME=INT: a symbolic size, for generated inputs");
  runCommand->add_flag("--print", run.print, "print the outputs NumPy-style");
  runCommand
      ->add_option("--device", run.device,
                   "where to run: cuda (GPU 0, through the runtime library), cuda-sim (the CUDA "
                   "backend's kernels on the SIMT simulator), interpreter, or auto "
                   "(the default: cuda when a GPU is present, else the interpreter)")
      ->check(CLI::IsMember({"auto", "cuda", "cuda-sim", "interpreter"}));
  runCommand->add_option("--target", run.target, "--device=cuda-sim: the CUDA target (cuda:sm_90a)");
  runCommand->add_option("--cta-order", run.ctaOrder,
                         "--device=cuda-sim: the order CTAs run in: linear, reverse, shuffled[:SEED]");
  runCommand->add_flag("--sim-stats", run.simStats, "--device=cuda-sim: print what was simulated");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  bool useColor = color == "always" || (color == "auto" && isatty(STDERR_FILENO));
  pk::cli::DiagnosticOptions diagnostics{useColor, format == "json"};
  return runWithLargeStack([&] {
    if (check->parsed())
      return pk::cli::runCheck(common, diagnostics);
    if (compileCommand->parsed())
      return pk::cli::runCompile(common, compile, diagnostics);
    return pk::cli::runRun(common, run, diagnostics);
  });
}
