//===- Cooperative.h - Warpgroups that wait for one another -----*- C++ -*-===//
//
// The warpgroups of a Mosaic GPU kernel run different code and wait for
// one another on mbarriers and CTA barriers, which lockstep execution of
// the whole CTA cannot express. Each runs as a worker: an OS thread of
// which exactly one runs at a time, switching only when the running one
// must wait. Runs are therefore deterministic, and when every unfinished
// worker waits the run stops with a deadlock error instead of hanging.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_COOPERATIVE_H
#define PK_BACKENDS_CUDA_SIM_COOPERATIVE_H

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace pk::sim {

class Cooperative {
public:
  /// Runs work(i) for every i below n, one at a time, starting with 0;
  /// rethrows the first exception a worker threw (or a deadlock error).
  void run(size_t n, const std::function<void(size_t)> &work);
  /// Blocks the running worker until `ready()` holds, letting others run;
  /// `what` says what it waits for, for a deadlock message.
  void wait(const std::string &what, const std::function<bool()> &ready);
  /// Builds the deadlock message from the waits of the blocked workers
  /// (worker index, `what`).
  std::function<std::string(const std::vector<std::pair<size_t, std::string>> &)> describeDeadlock;

private:
  struct Worker {
    enum class State { Ready, Blocked, Done } state = State::Ready;
    std::function<bool()> ready;
    std::string what;
  };
  /// Hands the baton from `from` to the next worker that can run; false
  /// when none can (deadlock). Called with the lock held.
  bool handOff(size_t from);
  void abortAll(std::exception_ptr error);
  /// The deadlock of the blocked workers, as an error to rethrow.
  std::exception_ptr deadlockError() const;

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Worker> workers;
  size_t current = 0;
  bool aborting = false;
  std::exception_ptr error;
};

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_COOPERATIVE_H
