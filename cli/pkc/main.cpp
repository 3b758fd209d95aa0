//===- main.cpp - The pkc command line ------------------------------------===//
//
//   pkc check FILE                 parse, elaborate, verify
//   pkc compile FILE --emit=ast|ir print a stage
//   pkc compile FILE --target=T... artifacts and their manifest (--header, --embed, -MD)
//   pkc run FILE --entry NAME ...  run an export on the GPU or the reference interpreter
//   pkc tune FILE --size N=...     time configurations on the GPU, compile the fastest
//   pkc --print-targets            the --target values this pkc accepts
//
// Arguments may come from response files (@FILE); Arguments.cpp turns the
// GCC-style -MD/-MF/-MT into the long options declared here.
//
// Exit status: 0 on success, 1 when the program has errors, 2 for bad
// command-line usage.
//
//===----------------------------------------------------------------------===//
#include "Arguments.h"
#include "Commands.h"

#include "backends/Target.h"

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
  command->add_option(
      "-I,--include-dir", options.includeDirs,
      "DIR: where imported .pk files are searched (after the file's own directory)");
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> arguments;
  std::string argumentError;
  if (!pk::cli::normalizeArguments(argc, argv, arguments, argumentError)) {
    llvm::errs() << "pkc: error: " << argumentError << "\n";
    return 2;
  }

  CLI::App app{"pkc: an ahead-of-time compiler for Pallas-style kernels"};
  app.require_subcommand(0, 1);
  // --color and --diagnostics-format also after the command, where build
  // systems append their flags.
  app.fallthrough();
  bool printTargets = false;
  app.add_flag("--print-targets", printTargets, "list the --target values this pkc accepts");
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
  std::string checkTarget;
  check->add_option("--target", checkTarget,
                    "elaborate for this target's device (cuda:sm_90a, tpu:v6e, ...): what "
                    "device_kind and get_tpu_info answer, TPU tiling of array code");

  pk::cli::CompileOptions compile;
  CLI::App *compileCommand = app.add_subcommand("compile", "compile a .pk file and print a stage");
  addCommonOptions(compileCommand, common);
  compileCommand
      ->add_option("--emit", compile.emit,
                   "what to produce: ast, ir (the default) or header (typed C++ launchers) without "
                   "--target; with --target, "
                   "artifact (the default: artifact + manifest), ptx, llvm, gpu, cubin (CUDA) or "
                   "mlir (TPU)")
      ->check(CLI::IsMember(
          {"ast", "ir", "header", "artifact", "ptx", "llvm", "gpu", "cubin", "mlir"}));
  compileCommand->add_option("--target", compile.targets,
                             "cuda:sm_90a, cuda:sm_80, ..., tpu (any generation) or tpu:v6e (one; "
                             "--print-targets lists all); repeat for several artifacts");
  compileCommand->add_option("--export", compile.exports,
                             "NAME: compile only this export (repeat for several; default: all)");
  compileCommand->add_option("-o,--output", compile.output,
                             "output file ('-' for stdout), or with --target the directory for "
                             "artifacts and the manifest");
  compileCommand->add_option("--tuned", compile.tuned,
                             "RECORD: compile each export with the constants pkc tune chose for "
                             "it (STEM.tune.json)");
  compileCommand->add_option("--dump-dir", compile.dumpDir,
                             "write the IR after every backend stage (and tool logs) here");
  compileCommand->add_flag("--debug-info", compile.debugInfo, "print source locations in the IR");
  compileCommand->add_flag("--time-report", compile.timeReport,
                           "print the wall time of each step (parse, elaborate, each backend "
                           "stage and its MLIR passes, LLVM, ptxas) on stderr");
  compileCommand->add_option("--header", compile.header,
                             "with --target: also write the typed C++ launch header here");
  compileCommand->add_flag("--embed", compile.embed,
                           "with --target: also write STEM.embed.cpp, the artifacts as a C++ "
                           "source (the header then loads them from memory)");
  compileCommand->add_flag("--MD", compile.writeDeps,
                           "(-MD) write a Makefile-style dependency file: every file read");
  compileCommand->add_option("--MF", compile.depFile,
                             "(-MF FILE) the dependency file (default: the output's, .d for its "
                             "extension)");
  compileCommand->add_option("--MT", compile.depTargets,
                             "(-MT TARGET) the rule's target (default: the output); repeatable");

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

  pk::cli::TuneOptions tune;
  CLI::App *tuneCommand = app.add_subcommand(
      "tune", "time an export's configurations on GPU 0 and compile the fastest");
  addCommonOptions(tuneCommand, common);
  tuneCommand->add_option("--export", tune.exports,
                          "NAME: tune this export (repeat for several; default: those with "
                          "@autotune)");
  tuneCommand->add_option("--try", tune.tries,
                          "NAME=VALUE: a value to try for a module constant (repeat; the "
                          "values of each name are alternatives, names combine); replaces "
                          "@autotune's configurations");
  tuneCommand->add_option("--size", tune.sizes, "NAME=INT: a symbolic size to time at");
  tuneCommand->add_option("--in", tune.inputs, "NAME=FILE.npy: an input to time on");
  tuneCommand->add_option("--target", tune.target,
                          "the CUDA target (default: GPU 0's; cuda:sm_90a with --compile-only)");
  tuneCommand->add_option("-o,--output", tune.output,
                          "the directory for the tuning record and the artifact (default: .)");
  tuneCommand->add_flag("--compile-only", tune.compileOnly,
                        "compile every configuration and print what ptxas reports; time none "
                        "(no GPU needed)");

  // An option given several times gathers a list (--target, -D, --in...),
  // one value an occurrence: CLI11 would otherwise let `--target tpu` go on
  // to take the file after it, and `pkc compile --target tpu k.pk -o out`
  // would fail with "file is required".
  for (CLI::App *command : app.get_subcommands([](CLI::App *) { return true; }))
    for (CLI::Option *option : command->get_options())
      if (!option->get_positional() && option->get_items_expected_max() > 1)
        option->allow_extra_args(false);

  try {
    // CLI11 wants the arguments without the program name, last first.
    std::vector<std::string> reversed(arguments.rbegin(), arguments.rend() - 1);
    app.parse(reversed);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (printTargets) {
    for (const std::string &target : pk::backends::supportedTargets())
      llvm::outs() << target << "\n";
    return 0;
  }
  if (app.get_subcommands().empty()) {
    llvm::errs()
        << "pkc: error: a command is required (check, compile, run or tune); see pkc --help\n";
    return 2;
  }

  bool useColor = color == "always" || (color == "auto" && isatty(STDERR_FILENO));
  pk::cli::DiagnosticOptions diagnostics{useColor, format == "json"};
  return runWithLargeStack([&] {
    if (check->parsed())
      return pk::cli::runCheck(common, checkTarget, diagnostics);
    if (compileCommand->parsed())
      return pk::cli::runCompile(common, compile, diagnostics);
    if (tuneCommand->parsed())
      return pk::cli::runTune(common, tune, diagnostics);
    return pk::cli::runRun(common, run, diagnostics);
  });
}
