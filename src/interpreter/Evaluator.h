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

/// A block buffer a Ref points to: all of `data`, or - for a view
/// (pk.ref_view, pk.ref_transpose) - the elements at
/// `offset + sum(index[d] * strides[d])` of it.
struct RefBuffer {
  TensorPtr data;
  DType dtype; ///< with signedness, for uninitialized values
  bool written = false;
  bool isView = false;
  int64_t offset = 0;
  std::vector<int64_t> shape, strides; ///< when isView
  /// A view of global memory may reach past the array it views (Mosaic
  /// GPU kernels slice `x.at[pl.ds(start, k)]` and copy only blocks inside
  /// it): per view axis, how many elements from its start lie inside.
  /// Empty when all of it does; only pipeline blocks read such a view.
  std::vector<int64_t> inBounds;

  const std::vector<int64_t> &viewShape() const { return isView ? shape : data->shape; }
  std::vector<int64_t> elementStrides() const { return isView ? strides : stridesOf(data->shape); }
  int64_t base() const { return isView ? offset : 0; }
  /// A view of the same storage starting where this one starts, with no
  /// axes yet: the caller pushes each axis's size and stride.
  RefBuffer emptyView() const {
    RefBuffer view;
    view.data = data;
    view.dtype = dtype;
    view.isView = true;
    view.offset = base();
    return view;
  }
  /// How many elements from the start of view axis d lie inside the array.
  int64_t extentInBounds(size_t d) const {
    return inBounds.empty() ? viewShape()[d] : inBounds[d];
  }
  /// Whether element `k` (row-major) of the view lies inside the array:
  /// always, unless the view reaches past it (inBounds).
  bool holdsElement(int64_t k) const {
    const std::vector<int64_t> &shape = viewShape();
    for (size_t d = inBounds.size(); d-- > 0; k /= shape[d])
      if (k % shape[d] >= inBounds[d])
        return false;
    return true;
  }
};

/// Calls f(flat element index, storage offset) for each element of a
/// buffer (or view), row-major.
template <typename F> void forEachElement(const RefBuffer &ref, F f) {
  const std::vector<int64_t> &shape = ref.viewShape();
  std::vector<int64_t> strides = ref.elementStrides();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t at = ref.base();
    for (size_t d = 0; d < shape.size(); ++d)
      at += index[d] * strides[d];
    f(k, at);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// All the elements of a buffer (or view), and writing all of them.
TensorPtr readAll(const RefBuffer &ref);
void writeAll(RefBuffer &ref, const Tensor &value);

struct SemaphoreArray;

/// One semaphore: an array and the element an op picked.
struct SemaphoreSlot {
  SemaphoreArray *array;
  int64_t index;
  bool operator==(const SemaphoreSlot &o) const { return array == o.array && index == o.index; }
  bool operator!=(const SemaphoreSlot &o) const { return !(*this == o); }
};

/// A copy started (pk.dma_start) and not yet waited for: the elements of
/// its destination, which the kernel must not touch until the wait
/// (EvalDma.cpp).
struct PendingDma {
  const Tensor *dst;
  std::vector<int64_t> elements; ///< storage offsets in `dst`, sorted
  SemaphoreSlot semaphore;
  mlir::Location start;
};

struct ThreadContext;

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
  /// The Pallas thread of a pk.mesh_kernel this evaluator runs (MeshKernel.cpp).
  void setThread(ThreadContext *t) { thread = t; }
  ThreadContext *getThread() const { return thread; }
  /// Forgets the values of the previous program (not constants).
  void clearValues() {
    values.clear();
    refs.clear();
    views.clear();
    syncObjects.clear();
  }

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
  // EvalDebug.cpp
  void evalDebugPrint(mlir::Operation *op);
  // Evaluator.cpp
  bool evalControlFlow(mlir::Operation *op);
  // EvalMosaicGpu.cpp
  bool evalMosaicGpu(mlir::Operation *op);
  // EvalDma.cpp
  bool evalDma(mlir::Operation *op);
  /// The semaphore `sem[indices]` names (checked in range).
  SemaphoreSlot semaphoreAt(mlir::Operation *op, mlir::Value sem, mlir::OperandRange indices);
  void evalRunScoped(mlir::Operation *op);
  void evalWarpMap(mlir::Operation *op);
  void evalNamedBarrier(mlir::Operation *op);
  void evalPipeline(mlir::Operation *op);
  /// Binds a view buffer owned by this evaluator to `v`.
  RefBuffer &bindView(mlir::Value v, RefBuffer view);

public:
  /// Sync objects (barriers, semaphores) bound to values (EvalMosaicGpu.cpp).
  llvm::DenseMap<mlir::Value, void *> syncObjects;
  /// Copies in flight; they outlive a program (a kernel may wait in the
  /// next grid step for a copy it started in this one).
  std::vector<PendingDma> pendingDmas;
  /// Fails when `op` touches element `at` of `data` while a copy into it
  /// is in flight.
  void checkNotInFlight(mlir::Operation *op, const Tensor &data, int64_t at, bool write);
  /// Fails when a semaphore of `semaphores` is not back at zero where it
  /// goes away (`what`: "the kernel ends", "the scope ends").
  void checkSemaphoresSettled(mlir::Operation *op, const SemaphoreArray &semaphores,
                              mlir::Type type, const char *what);

private:

  llvm::DenseMap<mlir::Value, TensorPtr> values;
  llvm::DenseMap<mlir::Value, RefBuffer *> refs;
  llvm::DenseMap<mlir::Operation *, TensorPtr> constants;
  ProgramContext context;
  ThreadContext *thread = nullptr;
  llvm::DenseMap<mlir::Value, std::unique_ptr<RefBuffer>> views;
  uint64_t stepsLeft;
  /// Set once a view reaches past its array: ops then check their Refs.
  bool partialViews = false;
};

} // namespace pk::interp

#endif // PK_INTERPRETER_EVALUATOR_H
