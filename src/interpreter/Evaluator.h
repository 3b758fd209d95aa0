//===- Evaluator.h - Executes the ops of a kernel ---------------*- C++ -*-===//
//
// Walks a region's ops in order and computes each result from its
// operands, whole block at a time. Used for kernel bodies and index_map
// regions; scf ops recurse into their regions.
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_EVALUATOR_H
#define PK_INTERPRETER_EVALUATOR_H

#include "interpreter/Tensor.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"

#include "llvm/ADT/DenseMap.h"

#include <stdexcept>
#include <string>

namespace pk::interp {

/// A run-time error, reported at the op that raised it.
struct RunError {
  std::string message;
  mlir::Location location;
};

/// A block buffer a Ref points to.
struct RefBuffer {
  TensorPtr data;
  DType dtype; ///< with signedness, for uninitialized values
  bool written = false;
};

/// What is fixed for one program of a pallas_call.
struct ProgramContext {
  std::vector<int64_t> programIds;
  std::vector<int64_t> gridSizes;
  const std::vector<int64_t> *symbols = nullptr;
};

class Evaluator {
public:
  explicit Evaluator(uint64_t stepBudget) : stepsLeft(stepBudget) {}

  /// Runs the single block of `region` with its arguments bound to `args`
  /// and returns the operands of its terminator.
  std::vector<TensorPtr> runRegion(mlir::Region &region, const std::vector<TensorPtr> &args);
  /// Binds a Ref block argument.
  void bindRef(mlir::Value arg, RefBuffer *buffer) { refs[arg] = buffer; }
  void setContext(const ProgramContext &c) { context = c; }
  /// Forgets the values of the previous program (not constants).
  void clearValues() { values.clear(); refs.clear(); }

  [[noreturn]] void fail(mlir::Operation *op, const std::string &message);

private:
  void runBlock(mlir::Block &block);
  void eval(mlir::Operation *op);
  TensorPtr get(mlir::Value v);
  RefBuffer &getRef(mlir::Value v);
  void set(mlir::Value v, TensorPtr t) { values[v] = std::move(t); }

  // EvalElementwise.cpp
  bool evalArith(mlir::Operation *op);
  bool evalMath(mlir::Operation *op);
  TensorPtr constant(mlir::Operation *op);
  // EvalStructure.cpp
  bool evalStructure(mlir::Operation *op);
  // EvalMemory.cpp
  void evalLoad(mlir::Operation *op);
  void evalStore(mlir::Operation *op);
  void evalGather(mlir::Operation *op);
  void evalScatter(mlir::Operation *op);
  void evalAtomicRmw(mlir::Operation *op);
  void evalAtomicCas(mlir::Operation *op);
  // Evaluator.cpp
  bool evalControlFlow(mlir::Operation *op);

  llvm::DenseMap<mlir::Value, TensorPtr> values;
  llvm::DenseMap<mlir::Value, RefBuffer *> refs;
  llvm::DenseMap<mlir::Operation *, TensorPtr> constants;
  ProgramContext context;
  uint64_t stepsLeft;
};

} // namespace pk::interp

#endif // PK_INTERPRETER_EVALUATOR_H
