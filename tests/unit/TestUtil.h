//===- TestUtil.h - Compiling and running .pk snippets in tests -*- C++ -*-===//
#ifndef PK_TESTS_UNIT_TESTUTIL_H
#define PK_TESTS_UNIT_TESTUTIL_H

#include "driver/Session.h"
#include "interpreter/Interpreter.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <memory>
#include <stdexcept>
#include <string>

namespace pk::test {

/// A .pk source compiled in memory, with the diagnostics it produced.
struct Compiled {
  std::string diagnostics;
  std::unique_ptr<llvm::raw_string_ostream> stream;
  std::unique_ptr<Session> session;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  explicit operator bool() const { return static_cast<bool>(module); }

  /// Runs an export on the interpreter; fails the test on error.
  std::vector<HostArray> run(const std::string &name, const std::vector<HostArray> &inputs) {
    if (!module)
      throw std::runtime_error("the program did not compile:\n" + diagnostics);
    RunResult result = runExport(*module, name, inputs);
    if (!result.ok())
      throw std::runtime_error("the interpreter failed: " + result.error);
    return result.outputs;
  }
};

inline Compiled compile(const std::string &source, std::vector<std::string> defines = {}) {
  Compiled c;
  c.stream = std::make_unique<llvm::raw_string_ostream>(c.diagnostics);
  c.session = std::make_unique<Session>(*c.stream);
  ElaborationOptions options;
  c.session->addDefines(defines, options);
  c.module = c.session->compileSource("test.pk", source, options);
  c.stream->flush();
  return c;
}

inline HostArray array(DType dtype, std::vector<int64_t> shape, const std::vector<double> &values) {
  HostArray a(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    a.setDouble(static_cast<int64_t>(i), values[i]);
  return a;
}

inline HostArray iotaArray(DType dtype, std::vector<int64_t> shape, double scale = 1, double offset = 0) {
  HostArray a(dtype, std::move(shape));
  for (int64_t i = 0; i < a.size(); ++i)
    a.setDouble(i, static_cast<double>(i) * scale + offset);
  return a;
}

} // namespace pk::test

#endif // PK_TESTS_UNIT_TESTUTIL_H
