//===- Imports.cpp - import and from-import -------------------------------===//
//
// `import` binds either a built-in namespace (jax, jax.numpy, functools, ...)
// or another .pk file: `from kernels.common import gelu` runs
// kernels/common.pk, found on the import path by the driver's
// ImportLoader, and takes `gelu` from its globals.
//
// `from .common import gelu` looks next to the importing file instead (two
// dots: its parent directory), as Python's relative imports do in a package.
//
// An imported module runs once per elaboration, in a module frame of its
// own, with Python's semantics: its top level executes at the first
// import, later imports share the result, and its functions keep seeing
// its globals wherever they are called from. Two things differ on
// purpose: `-D` applies only to the file being compiled (its imports are
// libraries, compiled the same way for every user), and `@export` in an
// imported file exports nothing (the importer chooses its exports).
// Diagnostics inside an imported file point at that file's lines, with a
// note at each import that led there.
//
// Cycles are Python's too: importing a module whose top level is still
// running gives it as it is so far (a package's __init__ that imports its
// submodules, which import siblings from the package, works), and a name
// it has not defined yet is an error that shows the cycle. The file being
// compiled is Python's `__main__`: importing it by name runs it again as
// a module.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Elaborator.h"

#include "frontend/elab/Builtins.h"

#include "llvm/Support/Casting.h"

using namespace pk::ast;

namespace pk::elab {

Obj Elaborator::importModule(const std::string &dottedName, SourceRange range) {
  auto it = modules.find(dottedName);
  if (it != modules.end())
    return it->second;
  if (Obj module = importPkModule(dottedName, range))
    return module;
  // A module pkc does not have: opaque. Real programs import test and
  // platform helpers they never use in the kernels pkc compiles; anything
  // used from one is reported at the line that uses it.
  std::string known;
  for (const auto &[name, module] : modules)
    if (name.find("pallas.") == std::string::npos && name.find('.') == std::string::npos)
      known += (known.empty() ? "" : ", ") + name;
  auto opaque = std::make_shared<NamespaceObj>(dottedName);
  opaque->opaque = true;
  opaque->importedAt = range;
  std::string top = dottedName.substr(0, dottedName.find('.'));
  opaque->why = "module '" + dottedName + "' is not one of pkc's modules (" + known + ")";
  if (options.imports) {
    std::string file;
    for (char c : dottedName)
      file += c == '.' ? '/' : c;
    opaque->why += " and there is no " + file + ".pk on the import path (" +
                   options.imports->describePath() + "; add directories with -I)";
  }
  return opaque;
}

Obj Elaborator::importPkModule(const std::string &dottedName, SourceRange range) {
  if (!options.imports)
    return nullptr;
  return runPkModule(options.imports->load(dottedName), dottedName, range);
}

Obj Elaborator::importRelative(unsigned level, const std::string &dottedName, SourceRange range) {
  std::string shown = std::string(level, '.') + dottedName;
  if (!options.imports)
    fail(range, "cannot import '" + shown + "': this compilation reads no other .pk files");
  std::string where;
  ImportLoader::Result found =
      options.imports->loadRelative(sources().name(range.begin.file), level, dottedName, where);
  if (Obj module = runPkModule(found, shown, range))
    return module;
  std::string file;
  for (char c : dottedName)
    file += c == '.' ? '/' : c;
  fail(range, "cannot import '" + shown + "': there is no " + file + ".pk in " + where);
}

Obj Elaborator::runPkModule(const ImportLoader::Result &found, const std::string &dottedName,
                            SourceRange range) {
  if (found.failed) {
    // The parser reported the syntax error in the imported file; say
    // which import read it, and stop.
    diagnostics.report(
        Diagnostic(Severity::Note, range, "in module '" + dottedName + "' imported here"));
    throw ElabError{Diagnostic(Severity::Note, SourceRange(), "")};
  }
  const ast::Module *module = found.module;
  if (!module)
    return nullptr;
  if (auto done = pkModules.find(module); done != pkModules.end())
    return done->second;

  for (size_t i = 1; i < importStack.size(); ++i) {
    if (importStack[i] != module)
      continue;
    auto partial = std::make_shared<NamespaceObj>(dottedName);
    partial->members.insert(importFrames[i]->vars.begin(), importFrames[i]->vars.end());
    for (size_t j = i; j < importStack.size(); ++j)
      partial->partialCycle += sources().name(importStack[j]->file) + " imports ";
    partial->partialCycle += sources().name(module->file);
    return partial;
  }

  // Run the module's top level in a frame of its own, as the module level
  // (so `return` there is an error and `def`s close over these globals).
  auto moduleFrame = std::make_shared<Frame>();
  moduleFrame->vars["__name__"] = makeStr(dottedName);
  moduleFrame->vars["__file__"] = makeStr(sources().name(module->file));
  {
    std::shared_ptr<Frame> savedGlobals = globals;
    globals = moduleFrame;
    FrameSwitch enter(*this, moduleFrame);
    ModeGuard mode(*this, EmitMode::Module);
    std::vector<CallSite> savedCalls;
    savedCalls.swap(callStack); // the import's caller is not the module's
    importStack.push_back(module);
    importFrames.push_back(moduleFrame);
    try {
      exec(module->body);
    } catch (ElabError &e) {
      importStack.pop_back();
      importFrames.pop_back();
      callStack.swap(savedCalls);
      globals = savedGlobals;
      e.diagnostic.addNote(range, "in module '" + dottedName + "' imported here");
      throw;
    }
    importStack.pop_back();
    importFrames.pop_back();
    callStack.swap(savedCalls);
    globals = savedGlobals;
  }
  auto ns = std::make_shared<NamespaceObj>(dottedName);
  ns->members.insert(moduleFrame->vars.begin(), moduleFrame->vars.end());
  pkModules[module] = ns;
  return ns;
}

void Elaborator::bindPackagePath(const std::string &dottedName, const Obj &module) {
  // `import a.b.c` binds `a`; `a.b.c` then reaches the module. Packages are
  // directories, not modules: their namespaces only hold what was imported.
  size_t dot = dottedName.find('.');
  std::string top = dottedName.substr(0, dot);
  auto bound = frame->vars.find(top);
  Obj existing = bound == frame->vars.end() ? nullptr : bound->second;
  auto *package = llvm::dyn_cast_or_null<NamespaceObj>(existing.get());
  std::shared_ptr<NamespaceObj> root;
  if (package && package->name == top)
    root = std::static_pointer_cast<NamespaceObj>(existing);
  else
    root = std::make_shared<NamespaceObj>(top);
  setVariable(top, root);
  NamespaceObj *at = root.get();
  while (dot != std::string::npos) {
    size_t next = dottedName.find('.', dot + 1);
    std::string part =
        dottedName.substr(dot + 1, next == std::string::npos ? next : next - dot - 1);
    if (next == std::string::npos) {
      at->members[part] = module;
      break;
    }
    Obj &child = at->members[part];
    if (!llvm::isa_and_nonnull<NamespaceObj>(child.get()))
      child = std::make_shared<NamespaceObj>(dottedName.substr(0, next));
    at = llvm::cast<NamespaceObj>(child.get());
    dot = next;
  }
}

void Elaborator::execImport(const ImportStmt &s) {
  for (const ImportedName &m : s.modules) {
    Obj module = importModule(m.name, m.range);
    if (!m.alias.empty()) {
      setVariable(m.alias, module);
      continue;
    }
    std::string top = m.name.substr(0, m.name.find('.'));
    if (modules.count(top)) {
      // `import a.b` binds `a`, as in Python.
      setVariable(top, importModule(top, m.range));
      continue;
    }
    if (top == m.name)
      setVariable(top, module);
    else
      bindPackagePath(m.name, module);
  }
}

void Elaborator::execImportFrom(const ImportFromStmt &s) {
  if (s.level > 0) {
    // `from . import common` imports modules; `from .common import gelu`
    // takes names from one.
    if (s.module.empty()) {
      for (const ImportedName &n : s.names)
        setVariable(n.alias.empty() ? n.name : n.alias, importRelative(s.level, n.name, n.range));
      return;
    }
    Obj module = importRelative(s.level, s.module, s.moduleRange);
    if (s.importsAll) {
      for (const auto &[name, member] : llvm::cast<NamespaceObj>(*module).members)
        if (name.rfind('_', 0) != 0)
          setVariable(name, member);
      return;
    }
    for (const ImportedName &n : s.names)
      setVariable(n.alias.empty() ? n.name : n.alias, getAttribute(*this, module, n.name, n.range));
    return;
  }
  if (s.module == "__future__")
    return; // `from __future__ import annotations` and friends change nothing here
  // `from kernels import common`: `kernels` may be a directory of .pk
  // files rather than a module; then each name is a module in it.
  Obj module;
  if (modules.count(s.module) || s.importsAll)
    module = importModule(s.module, s.moduleRange);
  else
    module = importPkModule(s.module, s.moduleRange);
  if (!module) {
    for (const ImportedName &n : s.names) {
      // `from jax._src import dtypes`: one of pkc's modules inside a
      // package pkc does not have (the rest of jax._src stays opaque).
      std::string dotted = s.module + "." + n.name;
      if (modules.count(dotted)) {
        setVariable(n.alias.empty() ? n.name : n.alias, importModule(dotted, n.range));
        continue;
      }
      Obj submodule = importPkModule(dotted, n.range);
      if (!submodule) // neither a module nor a directory of them: opaque
        submodule = getAttribute(*this, importModule(s.module, s.moduleRange), n.name, n.range);
      setVariable(n.alias.empty() ? n.name : n.alias, submodule);
    }
    return;
  }
  if (s.importsAll) {
    for (const auto &[name, member] : llvm::cast<NamespaceObj>(*module).members)
      if (!modules.count(s.module) && name.rfind('_', 0) == 0)
        continue; // as in Python, `import *` skips a module's private names
      else
        setVariable(name, member);
    return;
  }
  for (const ImportedName &n : s.names) {
    Obj member;
    std::string dotted = s.module + "." + n.name;
    auto *package = llvm::dyn_cast<NamespaceObj>(module.get());
    if (modules.count(dotted))
      member = importModule(dotted, n.range);
    else if (package && !package->opaque && !package->members.count(n.name))
      // A package's submodule its __init__ did not import (or has not yet).
      member = importPkModule(dotted, n.range);
    if (!member && package && !package->partialCycle.empty() && !package->members.count(n.name))
      fail(n.range, "cannot import name '" + n.name + "' from partially initialized module '" +
                        s.module +
                        "' (most likely due to a circular import: " + package->partialCycle + ")");
    if (!member)
      member = getAttribute(*this, module, n.name, n.range);
    setVariable(n.alias.empty() ? n.name : n.alias, member);
  }
}

} // namespace pk::elab
