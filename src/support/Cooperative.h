//===- Cooperative.h - Workers that run one at a time and wait ---*- C++ -*-===//
//
// Programs whose threads wait for one another (Mosaic GPU kernels: Pallas
// threads on barriers and semaphores, warpgroups on mbarriers) cannot be
// run in lockstep. Each worker runs on an OS thread, but exactly one runs
// at a time and control passes only when the running one must wait: runs
// are deterministic, and when every unfinished worker waits the run stops
// with a deadlock error instead of hanging. The reference interpreter and
// the SIMT simulator both schedule with it.
//
//===----------------------------------------------------------------------===//
#ifndef PK_SUPPORT_COOPERATIVE_H
#define PK_SUPPORT_COOPERATIVE_H

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace pk {

class Cooperative {
public:
  /// What a blocked worker waits for: the `tag` and text it gave wait().
  struct Waiting {
    size_t worker;
    void *tag;
    std::string what;
  };
  /// The error a deadlock raises from run(), made from every blocked
  /// worker's wait (in worker order; never empty).
  std::function<std::exception_ptr(const std::vector<Waiting> &)> deadlockError;

  /// Runs work(i) for every i below n, one at a time, starting with 0
  /// (one worker runs on the calling thread); rethrows the first
  /// exception a worker threw, or the deadlock error.
  void run(size_t n, const std::function<void(size_t)> &work);
  /// Blocks the running worker until `ready()` holds, letting the others
  /// run; `tag` and `what` say what it waits for, for a deadlock error.
  void wait(void *tag, const std::string &what, const std::function<bool()> &ready);
  /// Lets the other workers that can run take a turn before the running
  /// one goes on: what a poll that found nothing does (plgpu.barrier_test
  /// in a loop), so that it cannot keep the worker it waits for from
  /// running.
  void yield();
  /// From the running worker: runs work(i) for every i below n as new
  /// workers among the others, and returns when all of them are done (a
  /// fork and join: Mosaic GPU's warps of a warpgroup). Rethrows the
  /// first exception one of them threw. Their indices follow the
  /// existing workers'.
  void fork(size_t n, const std::function<void(size_t)> &work);

private:
  struct Worker {
    enum class State { Ready, Blocked, Done } state = State::Ready;
    std::function<bool()> ready;
    void *tag = nullptr;
    std::string what;
  };
  /// Passes control from `from` to the next worker that can run; false
  /// when none can. Called with the lock held (or with one worker).
  bool handOff(size_t from);
  /// The deadlock of the blocked workers, as an exception to rethrow.
  std::exception_ptr deadlock() const;
  void abortAll(std::exception_ptr error);

  /// The body of worker `i`'s OS thread: waits for its turn, runs, hands
  /// off when done.
  void runWorker(size_t i, const std::function<void()> &work);

  std::mutex mutex;
  std::condition_variable changed;
  /// A deque: workers forked while others wait keep their addresses.
  std::deque<Worker> workers;
  size_t current = 0;
  bool single = false;
  bool aborting = false;
  std::exception_ptr error;
};

} // namespace pk

#endif // PK_SUPPORT_COOPERATIVE_H
