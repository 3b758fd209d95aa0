//===- Autotune.cpp - `@autotune(configs=[...])`: what `pkc tune` tries ---===//
//
// A configuration is a dict from module constants to values: the `-D`
// defines one trial of `pkc tune` compiles the file with, as Triton's
// `triton.Config` is a dict of meta-parameters. The decorator checks each
// configuration here, at the user's line (a constant the file does not
// assign, a value -D cannot spell), and the export carries them as
// `pk.autotune`: an array of dictionaries from names to .pk expressions,
// which is all the tuner needs to recompile the file per configuration.
// Compiling without a tuning record ignores them: the file's own values
// are the default configuration.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "ir/ExportSignature.h"

#include <cmath>

namespace pk::elab {

namespace {

/// `value` as a .pk expression that evaluates back to it, or nothing for
/// values -D cannot spell (functions, arrays, dtypes, ...).
std::optional<std::string> expressionText(const Object &value) {
  switch (value.kind()) {
  case Object::Kind::None:
  case Object::Kind::Bool:
  case Object::Kind::Int:
    return repr(value);
  case Object::Kind::Float:
    if (!std::isfinite(llvm::cast<FloatObj>(value).value))
      return std::nullopt;
    return repr(value);
  case Object::Kind::Str: {
    const std::string &text = llvm::cast<StrObj>(value).value;
    if (text.find_first_of("'\\\n\r") != std::string::npos)
      return std::nullopt;
    return repr(value);
  }
  case Object::Kind::Tuple:
  case Object::Kind::List: {
    const auto &sequence = llvm::cast<SequenceObj>(value);
    if (sequence.namedTuple)
      return std::nullopt;
    std::string text = sequence.isList() ? "[" : "(";
    for (size_t i = 0; i < sequence.items.size(); ++i) {
      std::optional<std::string> item = expressionText(*sequence.items[i]);
      if (!item)
        return std::nullopt;
      text += (i ? ", " : "") + *item;
    }
    if (!sequence.isList() && sequence.items.size() == 1)
      text += ",";
    return text + (sequence.isList() ? "]" : ")");
  }
  default:
    return std::nullopt;
  }
}

/// The configurations of `@autotune(configs=...)`, checked.
mlir::ArrayAttr readConfigs(Elaborator &el, const Obj &configs, SourceRange range) {
  auto *list = llvm::dyn_cast<SequenceObj>(configs.get());
  if (!list)
    el.fail(range, "@autotune(configs=...) takes a list of dicts, one per configuration to "
                   "try, such as [dict(BLOCK=128), dict(BLOCK=256)]; got " +
                       repr(*configs));
  if (list->items.empty())
    el.fail(range, "@autotune(configs=...) needs at least one configuration");
  mlir::MLIRContext *context = el.builder().getContext();
  std::vector<mlir::Attribute> attrs;
  for (size_t c = 0; c < list->items.size(); ++c) {
    std::string which = "configuration " + std::to_string(c + 1);
    auto *dict = llvm::dyn_cast<DictObj>(list->items[c].get());
    if (!dict)
      el.fail(range, "@autotune: " + which + " is " + repr(*list->items[c]) +
                         ", not a dict from module constants to values");
    ConstantOverrides overrides;
    for (const auto &[key, value] : dict->entries) {
      auto *name = llvm::dyn_cast<StrObj>(key.get());
      if (!name)
        el.fail(range, "@autotune: " + which + " has the key " + repr(*key) +
                           "; keys are the names of module constants");
      if (!el.assignsModuleConstant(name->value))
        el.fail(range, "@autotune: " + which + " sets '" + name->value +
                           "', which this file does not assign at module level; a "
                           "configuration overrides module constants as -D does");
      std::optional<std::string> text = expressionText(*value);
      if (!text)
        el.fail(range, "@autotune: " + which + " gives '" + name->value + "' the value " +
                           repr(*value) +
                           "; configurations hold numbers, booleans, "
                           "strings, None, and tuples or lists of them (what -D can spell)");
      overrides.emplace_back(name->value, *text);
    }
    if (overrides.empty())
      el.fail(range, "@autotune: " + which + " is empty; it must set at least one constant");
    attrs.push_back(overridesAttr(context, overrides));
  }
  return mlir::ArrayAttr::get(context, attrs);
}

} // namespace

Obj autotuneBuiltin(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"configs"}});
  // In a file this one imports, configurations name that file's
  // constants, which -D cannot reach: only the compiled file's count.
  if (el.importing())
    return std::make_shared<BuiltinObj>("autotune", [](Elaborator &, CallArgs &inner) -> Obj {
      return inner.positional.empty() ? none() : inner.positional[0];
    });
  mlir::ArrayAttr configs = readConfigs(el, a[0], a.range(0));
  SourceRange range = args.range;
  return std::make_shared<BuiltinObj>(
      "autotune", [configs, range](Elaborator &el, CallArgs &inner) -> Obj {
        if (inner.positional.size() != 1 || !inner.keywords.empty() ||
            !llvm::isa<FunctionObj>(inner.positional[0].get()))
          el.fail(inner.range, "@autotune(configs=[...]) decorates a function: write it above "
                               "'def', next to @export");
        el.registerAutotune(std::static_pointer_cast<FunctionObj>(inner.positional[0]), configs,
                            range);
        return inner.positional[0];
      });
}

} // namespace pk::elab
