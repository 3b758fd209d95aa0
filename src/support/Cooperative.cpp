//===- Cooperative.cpp - Workers that run one at a time and wait ----------===//
#include "support/Cooperative.h"

#include <stdexcept>
#include <thread>

namespace pk {

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

std::exception_ptr Cooperative::deadlock() const {
  std::vector<Waiting> blocked;
  for (size_t j = 0; j < workers.size(); ++j)
    if (workers[j].state == Worker::State::Blocked)
      blocked.push_back({j, workers[j].tag, workers[j].what});
  if (deadlockError)
    return deadlockError(blocked);
  return std::make_exception_ptr(std::runtime_error("deadlock: every worker waits"));
}

void Cooperative::abortAll(std::exception_ptr e) {
  if (!error)
    error = e;
  aborting = true;
  changed.notify_all();
}

void Cooperative::runWorker(size_t i, const std::function<void()> &work) {
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return current == i || aborting; });
    if (aborting) {
      workers[i].state = Worker::State::Done;
      changed.notify_all();
      return;
    }
  }
  try {
    work();
  } catch (const Aborted &) {
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex);
    abortAll(std::current_exception());
  }
  std::lock_guard<std::mutex> lock(mutex);
  workers[i].state = Worker::State::Done;
  if (aborting) {
    changed.notify_all();
    return;
  }
  bool blocked = false;
  for (const Worker &w : workers)
    blocked |= w.state == Worker::State::Blocked;
  if (!handOff(i) && blocked)
    abortAll(deadlock());
  changed.notify_all();
}

void Cooperative::run(size_t n, const std::function<void(size_t)> &work) {
  workers.assign(n, Worker());
  current = 0;
  aborting = false;
  error = nullptr;
  single = n == 1;
  if (single) {
    // One worker runs on the calling thread (until it forks others).
    try {
      work(0);
    } catch (const Aborted &) {
    }
    if (error)
      std::rethrow_exception(error);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] { runWorker(i, [&, i] { work(i); }); });
  for (std::thread &t : threads)
    t.join();
  if (error)
    std::rethrow_exception(error);
}

void Cooperative::fork(size_t n, const std::function<void(size_t)> &work) {
  size_t first;
  {
    std::lock_guard<std::mutex> lock(mutex);
    // A run of one worker had no threads; from here on it has.
    single = false;
    first = workers.size();
    for (size_t i = 0; i < n; ++i)
      workers.emplace_back();
  }
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] { runWorker(first + i, [&, i] { work(i); }); });
  // The forked workers run while this one waits for them to be done.
  auto joined = [this, first, n] {
    for (size_t i = first; i < first + n; ++i)
      if (workers[i].state != Worker::State::Done)
        return false;
    return true;
  };
  std::exception_ptr failure;
  try {
    wait(nullptr, "its forked workers (warps) to finish", joined);
  } catch (...) {
    failure = std::current_exception();
  }
  for (std::thread &t : threads)
    t.join();
  if (failure)
    std::rethrow_exception(failure);
  std::lock_guard<std::mutex> lock(mutex);
  if (error)
    throw Aborted{};
}

void Cooperative::wait(void *tag, const std::string &what, const std::function<bool()> &ready) {
  if (ready())
    return;
  if (single) {
    // Nothing else runs: the wait can never end.
    workers[0] = {Worker::State::Blocked, ready, tag, what};
    std::rethrow_exception(deadlock());
  }
  std::unique_lock<std::mutex> lock(mutex);
  size_t me = current;
  Worker &self = workers[me];
  self = {Worker::State::Blocked, ready, tag, what};
  if (!handOff(me)) {
    abortAll(deadlock());
    throw Aborted{};
  }
  changed.notify_all();
  changed.wait(lock, [&] { return aborting || (current == me && self.state == Worker::State::Ready); });
  if (aborting)
    throw Aborted{};
}

void Cooperative::yield() {
  if (single)
    return;
  // Blocked until asked a second time: handOff asks the others first and
  // this worker last, so each other worker that can run does first.
  bool asked = false;
  wait(nullptr, "its turn after a poll", [&asked] {
    bool again = asked;
    asked = true;
    return again;
  });
}

} // namespace pk
