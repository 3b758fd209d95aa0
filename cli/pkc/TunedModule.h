//===- TunedModule.h - A file elaborated with per-export constants -*- C++ -*-===//
//
// -D sets a module constant for the whole file, but tuning chooses
// constants per export: a matmul file's bf16 and f32 exports want
// different blocks. So the file is elaborated once per distinct choice,
// each time keeping the exports that chose it, and the exports are
// gathered, in the file's order, into one module that the backends
// compile as any other: one artifact, one manifest. (pk IR has nothing at
// module level but exports, each self-contained, so they move freely.)
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLI_PKC_TUNEDMODULE_H
#define PK_CLI_PKC_TUNEDMODULE_H

#include "ir/ExportSignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace pk {
class Session;
}

namespace pk::cli {

/// `path` elaborated with the -D `defines`, each export named in `chosen`
/// with its constants on top (replacing a -D of the same name) and marked
/// with them (pk.tuned). Null, with errors reported, on failure, or when
/// `chosen` names an export the file does not have.
mlir::OwningOpRef<mlir::ModuleOp>
loadWithChosenConstants(Session &session, const std::string &path,
                        const std::vector<std::string> &defines,
                        const std::map<std::string, ConstantOverrides> &chosen);

/// The -D list for one configuration: `defines` without the names
/// `overrides` sets, then `overrides` as NAME=VALUE.
std::vector<std::string> definesWith(const std::vector<std::string> &defines,
                                     const ConstantOverrides &overrides);

/// "BLOCK_M=128 BLOCK_N=64": a configuration as a person reads it.
std::string describeConstants(const ConstantOverrides &constants);

} // namespace pk::cli

#endif // PK_CLI_PKC_TUNEDMODULE_H
