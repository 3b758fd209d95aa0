//===- TunedModule.cpp - A file elaborated with per-export constants ------===//
#include "TunedModule.h"

#include "Commands.h"

#include "driver/Session.h"
#include "ir/PkDialect.h"

#include "llvm/ADT/StringExtras.h"

namespace pk::cli {

std::vector<std::string> definesWith(const std::vector<std::string> &defines,
                                     const ConstantOverrides &overrides) {
  std::vector<std::string> out;
  for (const std::string &define : defines) {
    std::string name = define.substr(0, define.find('='));
    if (llvm::none_of(overrides, [&](const auto &o) { return o.first == name; }))
      out.push_back(define);
  }
  for (const auto &[name, value] : overrides)
    out.push_back(name + "=" + value);
  return out;
}

std::string describeConstants(const ConstantOverrides &constants) {
  std::vector<std::string> parts;
  for (const auto &[name, value] : constants)
    parts.push_back(name + "=" + value);
  return llvm::join(parts, " ");
}

mlir::OwningOpRef<mlir::ModuleOp>
loadWithChosenConstants(Session &session, const std::string &path,
                        const std::vector<std::string> &defines,
                        const std::map<std::string, ConstantOverrides> &chosen) {
  mlir::OwningOpRef<mlir::ModuleOp> base = loadWithDefines(session, path, defines);
  if (!base)
    return nullptr;
  std::vector<std::string> names = exportNames(*base);
  // With --export, the record's other exports are not compiled (nor
  // elaborated: the base lacks them).
  const std::vector<std::string> &selected = session.exportSelection();
  auto wanted = [&](const std::string &name) {
    return selected.empty() || llvm::is_contained(selected, name);
  };
  for (const auto &[name, constants] : chosen)
    if (wanted(name) && llvm::find(names, name) == names.end()) {
      session.diagnostics().error(
          SourceRange(), "the tuning record chose constants for export '" + name + "', which " +
                             path + " does not have (exports: " + llvm::join(names, ", ") + ")");
      return nullptr;
    }

  // One elaboration per distinct choice; each export taken from the one
  // it chose (untuned exports from the base).
  std::map<ConstantOverrides, std::vector<std::string>> groups;
  for (const auto &[name, constants] : chosen)
    if (wanted(name))
      groups[constants].push_back(name);
  std::map<std::string, pk::ExportOp> tunedOps;
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> elaborated;
  for (const auto &[constants, members] : groups) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        loadWithDefines(session, path, definesWith(defines, constants));
    if (!module) {
      session.diagnostics().report(
          Diagnostic(Severity::Note, SourceRange(),
                     "while elaborating " + path + " with " + describeConstants(constants) +
                         ", the constants tuning chose for " + llvm::join(members, ", ")));
      return nullptr;
    }
    for (pk::ExportOp op : module->getOps<pk::ExportOp>())
      if (llvm::is_contained(members, op.getSymName().str())) {
        op->setAttr(kTunedAttr, overridesAttr(module->getContext(), constants));
        tunedOps[op.getSymName().str()] = op;
      }
    elaborated.push_back(std::move(module));
  }

  // The file's order, each tuned export in place of the base's.
  for (pk::ExportOp op : llvm::make_early_inc_range(base->getOps<pk::ExportOp>())) {
    auto tuned = tunedOps.find(op.getSymName().str());
    if (tuned == tunedOps.end())
      continue;
    tuned->second->moveBefore(op);
    op.erase();
  }
  return base;
}

} // namespace pk::cli
