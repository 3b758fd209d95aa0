//===- EvalDma.cpp - Async copies and semaphores --------------------------===//
//
// Semantics of Pallas's TPU interpret mode: a copy (pk.dma_start) moves its
// data when it starts and adds the number of elements it moved to its DMA
// semaphore (capped at 32767, the largest count interpret mode keeps); its
// wait (pk.dma_wait) takes the destination's element count off again.
// Regular semaphores count what pl.semaphore_signal adds.
//
// What would be a race or a hang on a TPU is an error at the op: waiting
// for more than the copies that landed, reading or writing a copy's
// destination before its wait, and a semaphore that is not back at zero
// when its scope (or the kernel) ends.
//
//===----------------------------------------------------------------------===//
#include "interpreter/MeshRuntime.h"

#include "ir/PkDialect.h"
#include "support/ShapeText.h"

#include <algorithm>

namespace pk::interp {

using namespace mlir;

namespace {

/// The most a DMA semaphore counts in Pallas's interpret mode (int16).
constexpr int64_t kSemaphoreMax = 32767;

int64_t elementCount(const RefBuffer &ref) {
  int64_t n = 1;
  for (int64_t d : ref.viewShape())
    n *= d;
  return n;
}

int64_t &countOf(const SemaphoreSlot &slot) { return slot.array->counts[slot.index]; }

} // namespace

SemaphoreSlot Evaluator::semaphoreAt(Operation *op, Value sem, OperandRange indices) {
  auto *array = static_cast<SemaphoreArray *>(syncObjects.lookup(sem));
  if (!array)
    fail(op, "internal error: a semaphore is not allocated");
  std::vector<int64_t> index;
  for (Value v : indices)
    index.push_back(get(v)->i[0]);
  auto shape = llvm::cast<pk::SemaphoreType>(sem.getType()).getShape();
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape[d])
      fail(op, "semaphore index " + shapeText(index) + " is out of range for an array of " +
                   shapeText(shape));
    flat = flat * shape[d] + index[d];
  }
  return {array, flat};
}

void Evaluator::checkNotInFlight(Operation *op, const Tensor &data, int64_t at, bool write) {
  for (const PendingDma &dma : pendingDmas) {
    if (dma.dst != &data || !std::binary_search(dma.elements.begin(), dma.elements.end(), at))
      continue;
    fail(op, std::string(write ? "this write" : "this read") +
                 " touches the destination of an async copy started at " +
                 lineOf(dma.start) +
                 " that has not been waited for: on a TPU the copy may still be landing; call "
                 "its .wait() first");
  }
}

void Evaluator::checkSemaphoresSettled(Operation *op, const SemaphoreArray &semaphores, Type type,
                                       const char *what) {
  auto sem = llvm::cast<pk::SemaphoreType>(type);
  for (size_t i = 0; i < semaphores.counts.size(); ++i) {
    if (semaphores.counts[i] == 0)
      continue;
    std::string which = semaphores.counts.size() == 1 ? "" : " " + std::to_string(i);
    if (sem.isDma()) {
      std::string count = "DMA semaphore" + which + " still counts " +
                          std::to_string(semaphores.counts[i]) + " elements when " + what;
      // Point at the copy, where the missing wait belongs.
      for (const PendingDma &dma : pendingDmas)
        if (dma.semaphore.array == &semaphores && dma.semaphore.index == static_cast<int64_t>(i))
          throw RunError{"this async copy is never waited for: its " + count, dma.start};
      fail(op, count + ": an async copy was started and never waited for");
    }
    fail(op, "semaphore" + which + " is left at " + std::to_string(semaphores.counts[i]) +
                 " when " + what + "; every signal needs a matching wait");
  }
}

bool Evaluator::evalDma(Operation *op) {
  if (auto start = llvm::dyn_cast<pk::DmaStartOp>(op)) {
    RefBuffer &src = getRef(start.getSrc());
    RefBuffer &dst = getRef(start.getDst());
    SemaphoreSlot slot = semaphoreAt(op, start.getSemaphore(), start.getIndices());
    // Ragged views (pl.ds with a traced size) agree only at run time.
    if (src.viewShape() != dst.viewShape())
      fail(op, "this async copy's source has shape " + shapeText(src.viewShape()) +
                   " and its destination " + shapeText(dst.viewShape()) +
                   " at run time; a copy moves between windows of the same shape");
    // The source must not be landing itself, nor the destination already.
    if (!pendingDmas.empty()) {
      forEachElement(src, [&](int64_t, int64_t at) { checkNotInFlight(op, *src.data, at, false); });
      forEachElement(dst, [&](int64_t, int64_t at) { checkNotInFlight(op, *dst.data, at, true); });
    }
    writeAll(dst, *readAll(src));
    PendingDma pending{dst.data.get(), {}, slot, op->getLoc()};
    forEachElement(dst, [&](int64_t, int64_t at) { pending.elements.push_back(at); });
    std::sort(pending.elements.begin(), pending.elements.end());
    pendingDmas.push_back(std::move(pending));
    int64_t &count = countOf(slot);
    count = std::min(count + std::min(elementCount(dst), kSemaphoreMax), kSemaphoreMax);
    return true;
  }
  if (auto wait = llvm::dyn_cast<pk::DmaWaitOp>(op)) {
    SemaphoreSlot slot = semaphoreAt(op, wait.getSemaphore(), wait.getIndices());
    int64_t &count = countOf(slot);
    int64_t needed = std::min(elementCount(getRef(wait.getDst())), kSemaphoreMax);
    if (count < needed)
      fail(op, "this wait is for a copy of " + std::to_string(needed) +
                   " elements, but the DMA semaphore has seen " +
                   (count == 0 ? std::string("none land") : std::to_string(count) + " land") +
                   ": no matching copy was started on it, so on a TPU it would wait forever");
    count -= needed;
    // The copies this wait accounts for, oldest first, are no longer in flight.
    int64_t settled = 0;
    for (auto it = pendingDmas.begin(); it != pendingDmas.end() && settled < needed;) {
      if (it->semaphore != slot) {
        ++it;
        continue;
      }
      settled += std::min(static_cast<int64_t>(it->elements.size()), kSemaphoreMax);
      it = pendingDmas.erase(it);
    }
    return true;
  }
  if (auto read = llvm::dyn_cast<pk::SemaphoreReadOp>(op)) {
    TensorPtr t = makeTensor(elementKindOf(read.getType()), {});
    t->i[0] = countOf(semaphoreAt(op, read.getSemaphore(), read.getIndices()));
    set(read.getResult(), t);
    return true;
  }
  if (auto signal = llvm::dyn_cast<pk::SemaphoreSignalOp>(op)) {
    countOf(semaphoreAt(op, signal.getSemaphore(), signal.getIndices())) +=
        get(signal.getIncrement())->i[0];
    return true;
  }
  if (auto wait = llvm::dyn_cast<pk::SemaphoreWaitOp>(op)) {
    int64_t &count = countOf(semaphoreAt(op, wait.getSemaphore(), wait.getIndices()));
    int64_t value = get(wait.getValue())->i[0];
    if (count < value) {
      if (!thread)
        fail(op, "deadlock: the semaphore is at " + std::to_string(count) +
                     " and nothing else runs that could raise it to " + std::to_string(value));
      int64_t *c = &count;
      thread->run->scheduler->wait(op, "a semaphore to reach " + std::to_string(value),
                                   [c, value] { return *c >= value; });
    }
    if (!wait.getNoDecrement())
      count -= value;
    return true;
  }
  return false;
}

} // namespace pk::interp
