//===- Export.cpp - `@export` functions become pk.export ops --------------===//
//
// An export's signature declares the full arrays it takes: `x: f32[N, 128]`.
// Names in it that the program does not define are symbolic sizes, bound
// at launch from the arguments' shapes. The body runs at compile time and
// must return the results of pallas_calls (or arguments).
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/StateRefs.h"
#include "frontend/elab/StaticArray.h"
#include "ir/DTypeMapping.h"
#include "ir/ExportSignature.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace pk::elab {

namespace {

std::string dimsText(Elaborator &el, const std::vector<Dim> &dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    if (dims[i].isStatic()) {
      s += std::to_string(dims[i].value);
      continue;
    }
    s += symbolicText(dims[i].expr); // symbols by name: N, not s0
  }
  return s;
}

bool sameDims(const std::vector<Dim> &a, const std::vector<Dim> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].isStatic() != b[i].isStatic())
      return false;
    if (a[i].isStatic() ? a[i].value != b[i].value : a[i].expr != b[i].expr)
      return false;
  }
  return true;
}

} // namespace

mlir::RankedTensorType Elaborator::globalType(const std::vector<Dim> &dims, DType dtype) {
  std::vector<int64_t> shape;
  for (const Dim &d : dims)
    shape.push_back(d.isStatic() ? d.value : mlir::ShapedType::kDynamic);
  return mlir::RankedTensorType::get(shape, storageType(ctx, dtype));
}

mlir::AffineMap Elaborator::symbolicShape(const std::vector<Dim> &dims) {
  std::vector<mlir::AffineExpr> exprs;
  for (const Dim &d : dims)
    exprs.push_back(d.isStatic() ? mlir::getAffineConstantExpr(d.value, ctx) : d.expr);
  return mlir::AffineMap::get(0, static_cast<unsigned>(symbolNames.size()), exprs, ctx);
}

mlir::ArrayAttr Elaborator::symbolsAttr() {
  std::vector<llvm::StringRef> names(symbolNames.begin(), symbolNames.end());
  return b.getStrArrayAttr(names);
}

std::string Elaborator::describeDims(const std::vector<Dim> &dims) { return dimsText(*this, dims); }

void Elaborator::registerExport(std::shared_ptr<FunctionObj> function, SourceRange range) {
  // Only the file being compiled has exports; a function marked @export
  // in a module it imports is an ordinary function there.
  if (importing())
    return;
  if (frame != globals)
    fail(range, "@export must decorate a function at module level");
  for (const auto &[existing, where] : pendingExports)
    if (existing->name == function->name)
      fail(range, "export '" + function->name + "' is defined twice");
  pendingExports.emplace_back(std::move(function), range);
}

void Elaborator::registerAutotune(std::shared_ptr<FunctionObj> function, mlir::ArrayAttr configs,
                                  SourceRange range) {
  for (Autotuned &existing : autotuned)
    if (existing.function == function)
      fail(range, "'" + function->name + "' already has @autotune configurations");
  autotuned.push_back({std::move(function), configs, range});
}

bool Elaborator::assignsModuleConstant(const std::string &name) {
  return moduleAssignments.count(name) != 0;
}

void Elaborator::elaborateExport(const FunctionObj &f, SourceRange range) {
  currentExport = f.name;
  symbolNames.clear();
  symbolRanges.clear();
  if (!f.def)
    fail(range, "@export needs a 'def' function");

  // Read the signature with unknown names turned into symbols.
  struct Param {
    std::string name;
    std::vector<Dim> dims;
    DType dtype;
    SourceRange range;
  };
  std::vector<Param> params;
  std::optional<std::vector<std::shared_ptr<ArrayAnnotationObj>>> declaredResults;
  bool declaredTuple = false;
  {
    FrameSwitch inClosure(*this, f.closure);
    creatingSymbols = true;
    auto readAnnotation = [&](const ast::Expr &annotation) -> std::shared_ptr<ArrayAnnotationObj> {
      // An unknown name before `[` is a misspelt dtype, not a symbolic size.
      if (auto *sub = llvm::dyn_cast<ast::SubscriptExpr>(&annotation))
        if (auto *name = llvm::dyn_cast<ast::NameExpr>(sub->value.get());
            name && !isDefined(name->name)) {
          std::optional<DType> meant = parseDType(name->name);
          const std::string &n = name->name;
          if (n.size() == 2 && (n[0] == 'i' || n[0] == 'u') && (n[1] == '2' || n[1] == '4'))
            fail(name->range(), std::string(n[0] == 'u' ? "uint" : "int") + n[1] +
                                    " arrays are not supported: pkc's narrowest integers are "
                                    "8-bit (i8, u8)");
          fail(name->range(),
               "unknown dtype '" + name->name + "' in an array type; " +
                   (meant ? "write " + std::string(shortName(*meant)) + "[...] or jnp." +
                                numpyName(*meant) + "[...]"
                          : std::string("use f32, bf16, f16, i32, ... as in f32[N, 128]")));
        }
      Obj value = eval(annotation);
      if (auto *dtype = llvm::dyn_cast<DTypeObj>(value.get()))
        return std::make_shared<ArrayAnnotationObj>(dtype->dtype, std::vector<Dim>{});
      if (auto a = std::dynamic_pointer_cast<ArrayAnnotationObj>(value))
        return a;
      // Python's scalar types: 0-d arrays of JAX's default dtypes.
      if (auto *builtin = llvm::dyn_cast<BuiltinObj>(value.get())) {
        if (builtin->name == "bool")
          return std::make_shared<ArrayAnnotationObj>(DType::Bool, std::vector<Dim>{});
        if (builtin->name == "int")
          return std::make_shared<ArrayAnnotationObj>(DType::I32, std::vector<Dim>{});
        if (builtin->name == "float")
          return std::make_shared<ArrayAnnotationObj>(DType::F32, std::vector<Dim>{});
      }
      fail(annotation.range(), "expected an array type such as f32[N, 128], got " + repr(*value));
    };
    for (const ast::Parameter &p : f.def->parameters) {
      if (p.kind == ast::Parameter::Kind::VarPositional ||
          p.kind == ast::Parameter::Kind::VarKeyword)
        fail(p.range, "export '" + f.name + "' cannot take *args or **kwargs");
      if (p.defaultValue)
        fail(p.range, "export parameters cannot have default values");
      if (!p.annotation)
        fail(p.range, "export parameter '" + p.name +
                          "' needs an array type annotation such as f32[N]");
      auto annotation = readAnnotation(*p.annotation);
      params.push_back({p.name, annotation->shape, annotation->dtype, p.range});
    }
    if (const ast::Expr *ret = f.def->returnAnnotation.get()) {
      std::vector<std::shared_ptr<ArrayAnnotationObj>> results;
      if (auto *tuple = llvm::dyn_cast<ast::SequenceExpr>(ret)) {
        declaredTuple = true;
        for (const ast::ExprPtr &e : tuple->elements)
          results.push_back(readAnnotation(*e));
      } else if (auto *sub = llvm::dyn_cast<ast::SubscriptExpr>(ret);
                 sub && llvm::isa<ast::NameExpr>(sub->value.get()) &&
                 llvm::cast<ast::NameExpr>(*sub->value).name == "tuple") {
        declaredTuple = true;
        for (const ast::ExprPtr &e : sub->indices)
          results.push_back(readAnnotation(*e));
      } else {
        results.push_back(readAnnotation(*ret));
      }
      declaredResults = results;
    }
    creatingSymbols = false;
  }

  // Every symbol must be readable from some argument's shape.
  for (size_t s = 0; s < symbolNames.size(); ++s) {
    bool bound = false;
    for (const Param &p : params)
      for (const Dim &d : p.dims)
        if (!d.isStatic())
          if (auto sym = llvm::dyn_cast<mlir::AffineSymbolExpr>(d.expr); sym && sym.getPosition() == s)
            bound = true;
    if (!bound)
      fail(s < symbolRanges.size() ? symbolRanges[s] : f.def->nameRange,
           "symbolic size '" + symbolNames[s] + "' of export '" + f.name +
               "' must appear alone as a dimension of some parameter, so that it can be read "
               "from the arguments (or fix it with -D " + symbolNames[s] + "=...)");
  }

  // The export op, its entry block, and the parameters as arrays.
  std::vector<mlir::Type> inputTypes;
  for (const Param &p : params)
    inputTypes.push_back(globalType(p.dims, p.dtype));
  auto exportOp = pk::ExportOp::create(b, loc(f.range), f.name,
                                       b.getFunctionType(inputTypes, {}),
                                       symbolsAttr(), nullptr, nullptr);
  for (const Autotuned &entry : autotuned)
    if (entry.function.get() == &f)
      exportOp->setAttr(kAutotuneAttr, entry.configs);
  std::vector<mlir::Location> argLocs;
  for (const Param &p : params)
    argLocs.push_back(loc(p.range));
  mlir::Block *entry = b.createBlock(&exportOp.getBody(), {}, inputTypes, argLocs);

  std::vector<mlir::Attribute> argAttrs;
  CallArgs args;
  args.range = f.def->nameRange;
  args.callee = f.name;
  for (size_t i = 0; i < params.size(); ++i) {
    argAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(pk::ExportOp::kNameAttr, b.getStringAttr(params[i].name)),
         b.getNamedAttr(pk::ExportOp::kShapeAttr,
                        mlir::AffineMapAttr::get(symbolicShape(params[i].dims)))}));
    args.addPositional(std::make_shared<GlobalArrayObj>(entry->getArgument(i), params[i].dims,
                                                        params[i].dtype, params[i].name),
                       params[i].range);
  }

  Obj result;
  {
    ModeGuard mode(*this, EmitMode::Export);
    b.setInsertionPointToEnd(entry);
    resetStateRefs(*this);
    result = callFunction(f, args, /*noteCallSite=*/false);
    // A NumPy array returned from jax.jit is a constant array.
    result = static_numpy::materializeLeaves(*this, result, f.def->nameRange);
  }

  // The results: pallas_call outputs or arguments, one or a tuple.
  std::vector<std::shared_ptr<GlobalArrayObj>> results;
  bool returnedTuple = false;
  if (auto single = std::dynamic_pointer_cast<GlobalArrayObj>(result)) {
    results.push_back(single);
  } else if (auto *seq = llvm::dyn_cast<SequenceObj>(result.get())) {
    returnedTuple = true;
    for (const Obj &item : seq->items) {
      auto array = std::dynamic_pointer_cast<GlobalArrayObj>(item);
      if (!array)
        fail(f.def->nameRange, "export '" + f.name +
                                   "' must return arrays (pallas_call results), but one result is " +
                                   repr(*item));
      results.push_back(array);
    }
  } else {
    fail(f.def->nameRange, "export '" + f.name +
                               "' must return the result of a pallas_call, but returns " +
                               repr(*result));
  }
  if (results.empty())
    fail(f.def->nameRange, "export '" + f.name + "' returns no arrays");
  for (const auto &r : results)
    if (!r->batch.empty())
      fail(f.def->nameRange, "export '" + f.name + "' returns an array mapped by a jax.vmap that "
                             "has returned; return the vmapped function's results instead");
  if (declaredResults) {
    const ast::Expr &annotation = *f.def->returnAnnotation;
    if (declaredResults->size() != results.size() || declaredTuple != returnedTuple)
      fail(annotation.range(), "export '" + f.name + "' is annotated to return " +
                                   std::to_string(declaredResults->size()) + " array(s) but returns " +
                                   std::to_string(results.size()));
    for (size_t i = 0; i < results.size(); ++i) {
      const auto &declared = *(*declaredResults)[i];
      if (declared.dtype != results[i]->dtype || !sameDims(declared.shape, results[i]->shape))
        fail(annotation.range(), "export '" + f.name + "' is annotated to return " +
                                     shortName(declared.dtype) + "[" + describeDims(declared.shape) +
                                     "] but returns " + shortName(results[i]->dtype) + "[" +
                                     describeDims(results[i]->shape) + "]");
    }
  }

  std::vector<mlir::Type> resultTypes;
  std::vector<mlir::Value> resultValues;
  std::vector<mlir::Attribute> resultAttrs;
  for (const auto &r : results) {
    resultTypes.push_back(r->value.getType());
    resultValues.push_back(r->value);
    resultAttrs.push_back(b.getDictionaryAttr({b.getNamedAttr(
        pk::ExportOp::kShapeAttr, mlir::AffineMapAttr::get(symbolicShape(r->shape)))}));
  }
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(entry);
    pk::ReturnOp::create(b, loc(f.def->nameRange), resultValues);
  }
  exportOp.setFunctionTypeAttr(mlir::TypeAttr::get(b.getFunctionType(inputTypes, resultTypes)));
  exportOp.setSymbolsAttr(symbolsAttr());
  exportOp.setArgAttrsAttr(b.getArrayAttr(argAttrs));
  exportOp.setResAttrsAttr(b.getArrayAttr(resultAttrs));
  if (returnedTuple)
    exportOp->setAttr("pk.returns_tuple", b.getUnitAttr());
  b.setInsertionPointToEnd(irModule->getBody());
  currentExport.clear();
}

} // namespace pk::elab
