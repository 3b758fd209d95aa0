//===- ExportSignature.cpp ------------------------------------------------===//
#include "ir/ExportSignature.h"

#include "ir/DTypeMapping.h"
#include "ir/PkDialect.h"

namespace pk {

namespace {

ExportSignature::Array arrayOf(mlir::Type type, mlir::AffineMap shape, llvm::StringRef name) {
  auto element = llvm::cast<mlir::RankedTensorType>(type).getElementType();
  return {name.str(), *dtypeOf(element), shape};
}

} // namespace

std::vector<std::string> exportNames(mlir::ModuleOp module) {
  std::vector<std::string> names;
  for (auto op : module.getOps<pk::ExportOp>())
    names.push_back(op.getSymName().str());
  return names;
}

ExportSignature exportSignature(ExportOp op) {
  ExportSignature s;
  s.name = op.getSymName().str();
  for (mlir::Attribute a : op.getSymbols())
    s.symbols.push_back(llvm::cast<mlir::StringAttr>(a).getValue().str());
  for (unsigned i = 0; i < op.getArgumentTypes().size(); ++i)
    s.arguments.push_back(arrayOf(op.getArgumentTypes()[i], op.getArgShape(i), op.getArgName(i)));
  for (unsigned i = 0; i < op.getResultTypes().size(); ++i)
    s.results.push_back(arrayOf(op.getResultTypes()[i], op.getResultShape(i),
                                "output " + std::to_string(i)));
  // The export verifier guarantees every symbol stands alone somewhere.
  for (unsigned sym = 0; sym < s.symbols.size(); ++sym) {
    std::optional<ExportSignature::Binding> binding;
    for (unsigned a = 0; a < s.arguments.size() && !binding; ++a) {
      llvm::ArrayRef<mlir::AffineExpr> dims = s.arguments[a].shape.getResults();
      for (unsigned d = 0; d < dims.size() && !binding; ++d)
        if (auto e = llvm::dyn_cast<mlir::AffineSymbolExpr>(dims[d]); e && e.getPosition() == sym)
          binding = ExportSignature::Binding{a, d};
    }
    s.bindings.push_back(binding.value_or(ExportSignature::Binding{0, 0}));
  }
  if (auto tuned = op->getAttrOfType<mlir::DictionaryAttr>(kTunedAttr))
    s.tuned = overridesOf(tuned);
  return s;
}

ConstantOverrides overridesOf(mlir::DictionaryAttr dict) {
  ConstantOverrides out;
  for (mlir::NamedAttribute entry : dict)
    if (auto text = llvm::dyn_cast<mlir::StringAttr>(entry.getValue()))
      out.emplace_back(entry.getName().str(), text.str());
  return out;
}

mlir::DictionaryAttr overridesAttr(mlir::MLIRContext *context, const ConstantOverrides &overrides) {
  std::vector<mlir::NamedAttribute> entries;
  for (const auto &[name, value] : overrides)
    entries.emplace_back(mlir::StringAttr::get(context, name),
                         mlir::StringAttr::get(context, value));
  return mlir::DictionaryAttr::get(context, entries);
}

std::vector<ConstantOverrides> autotuneConfigs(ExportOp op) {
  std::vector<ConstantOverrides> configs;
  if (auto list = op->getAttrOfType<mlir::ArrayAttr>(kAutotuneAttr))
    for (mlir::Attribute config : list)
      if (auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(config))
        configs.push_back(overridesOf(dict));
  return configs;
}

std::optional<ExportSignature> exportSignature(mlir::ModuleOp module, llvm::StringRef name) {
  for (auto op : module.getOps<pk::ExportOp>())
    if (op.getSymName() == name)
      return exportSignature(op);
  return std::nullopt;
}

} // namespace pk
