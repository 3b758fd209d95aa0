//===- Cooperative.cpp - Warpgroups that wait for one another -------------===//
#include "backends/cuda/sim/Cooperative.h"

#include "backends/cuda/sim/Executor.h"

#include <thread>

namespace pk::sim {

namespace {

/// Unwinds a worker the run stops (after an error elsewhere).
struct Aborted {};

} // namespace

bool Cooperative::handOff(size_t from) {
  size_t n = workers.size();
  for (size_t k = 1; k <= n; ++k) {
    size_t j = (from + k) % n;
    Worker &w = workers[j];
    if (w.state == Worker::State::Ready || (w.state == Worker::State::Blocked && w.ready())) {
      w.state = Worker::State::Ready;
      current = j;
      return true;
    }
  }
  return false;
}

std::exception_ptr Cooperative::deadlockError() const {
  std::vector<std::pair<size_t, std::string>> blocked;
  for (size_t j = 0; j < workers.size(); ++j)
    if (workers[j].state == Worker::State::Blocked)
      blocked.push_back({j, workers[j].what});
  return std::make_exception_ptr(SimError(describeDeadlock ? describeDeadlock(blocked) : "deadlock"));
}

void Cooperative::abortAll(std::exception_ptr e) {
  if (!error)
    error = e;
  aborting = true;
  changed.notify_all();
}

void Cooperative::run(size_t n, const std::function<void(size_t)> &work) {
  workers.assign(n, Worker());
  current = 0;
  aborting = false;
  error = nullptr;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return current == i || aborting; });
        if (aborting) {
          workers[i].state = Worker::State::Done;
          return;
        }
      }
      try {
        work(i);
      } catch (const Aborted &) {
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        abortAll(std::current_exception());
      }
      std::lock_guard<std::mutex> lock(mutex);
      workers[i].state = Worker::State::Done;
      if (aborting)
        return;
      bool blocked = false;
      for (const Worker &w : workers)
        blocked |= w.state == Worker::State::Blocked;
      if (!handOff(i) && blocked)
        abortAll(deadlockError());
      changed.notify_all();
    });
  for (std::thread &t : threads)
    t.join();
  if (error)
    std::rethrow_exception(error);
}

void Cooperative::wait(const std::string &what, const std::function<bool()> &ready) {
  if (ready())
    return;
  std::unique_lock<std::mutex> lock(mutex);
  size_t me = current;
  Worker &self = workers[me];
  self.state = Worker::State::Blocked;
  self.ready = ready;
  self.what = what;
  if (!handOff(me)) {
    abortAll(deadlockError());
    throw Aborted{};
  }
  changed.notify_all();
  changed.wait(lock, [&] { return aborting || (current == me && self.state == Worker::State::Ready); });
  if (aborting)
    throw Aborted{};
}

} // namespace pk::sim
