//===- TuneRecord.h - What `pkc tune` measured and chose --------*- C++ -*-===//
//
// A tuning record (STEM.tune.json, docs/tuning.md) holds, per export, the
// sizes it was timed at, every configuration tried with its time or why
// it failed, and the one chosen. `pkc compile --tuned RECORD` compiles
// each export with its chosen constants, on any machine: the choice needs
// a GPU, reproducing it does not.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLI_PKC_TUNERECORD_H
#define PK_CLI_PKC_TUNERECORD_H

#include "ir/ExportSignature.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pk::cli {

struct TuneTrial {
  ConstantOverrides config;
  std::optional<double> microseconds; ///< a launch's median time; none when it failed
  std::string error;                  ///< why it failed
  // What ptxas reported, the largest over the export's kernels.
  unsigned registers = 0;
  uint64_t spillBytes = 0;
  uint64_t sharedMemory = 0;
};

struct TunedExport {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> sizes; ///< symbolic sizes timed at
  std::vector<TuneTrial> trials;
  ConstantOverrides chosen;
};

struct TuneRecord {
  std::string sourcePath;
  std::string sourceSha256;
  std::string target;               ///< "cuda:sm_90a"
  std::string device;               ///< the GPU's name
  std::vector<std::string> defines; ///< the -D the file was tuned with
  std::vector<TunedExport> exports;
};

constexpr int kTuneRecordVersion = 1;

std::string writeTuneRecord(const TuneRecord &record);
/// Reads the record `text` (from the file `name`); false, with `error`
/// set, when it is not a tuning record pkc knows.
bool parseTuneRecord(llvm::StringRef text, const std::string &name, TuneRecord &record,
                     std::string &error);

/// The constants each tuned export was chosen with, by export name.
std::map<std::string, ConstantOverrides> chosenConstants(const TuneRecord &record);

} // namespace pk::cli

#endif // PK_CLI_PKC_TUNERECORD_H
