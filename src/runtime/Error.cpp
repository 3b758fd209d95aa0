//===- Error.cpp - The thread-local error message -------------------------===//
#include "runtime/Error.h"

namespace pk::rt {

namespace {
// A fixed buffer rather than a std::string: setting it never allocates, so
// reporting an out-of-memory error cannot itself run out of memory, and
// the pointer pk_last_error() returns stays valid until the next failure.
constexpr size_t kMessageCapacity = 2048;
thread_local char lastMessage[kMessageCapacity] = "";
} // namespace

void setLastError(const char *message) noexcept {
  size_t i = 0;
  for (; message[i] && i + 1 < kMessageCapacity; ++i)
    lastMessage[i] = message[i];
  lastMessage[i] = '\0';
}

const char *lastError() noexcept { return lastMessage; }

} // namespace pk::rt
