//===- Error.h - Status codes, messages, and the C API's error guard -*- C++ -*-===//
//
// Inside the runtime an error is an exception (pk::rt::Error) carrying the
// pk_status and a sentence. The C API functions run their bodies through
// guard(), which turns every exception into a status plus the thread-local
// message pk_last_error() returns: nothing escapes into C callers, and
// nothing aborts.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_ERROR_H
#define PK_RUNTIME_ERROR_H

#include "pk/runtime.h"

#include <exception>
#include <new>
#include <string>

namespace pk::rt {

class Error : public std::exception {
public:
  Error(pk_status status, std::string message) : status_(status), message_(std::move(message)) {}
  pk_status status() const { return status_; }
  const std::string &message() const { return message_; }
  const char *what() const noexcept override { return message_.c_str(); }

private:
  pk_status status_;
  std::string message_;
};

[[noreturn]] inline void fail(pk_status status, std::string message) {
  throw Error(status, std::move(message));
}

/// Sets the calling thread's pk_last_error() message.
void setLastError(const char *message) noexcept;
const char *lastError() noexcept;

/// Runs `body` (which returns nothing, or throws) and reports how it went.
template <typename Body> pk_status guard(Body &&body) noexcept {
  try {
    body();
    return PK_OK;
  } catch (const Error &e) {
    setLastError(e.message().c_str());
    return e.status();
  } catch (const std::bad_alloc &) {
    setLastError("out of host memory");
    return PK_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    setLastError((std::string("internal error: ") + e.what()).c_str());
    return PK_ERROR_INTERNAL;
  } catch (...) {
    setLastError("internal error: unknown exception");
    return PK_ERROR_INTERNAL;
  }
}

} // namespace pk::rt

#endif // PK_RUNTIME_ERROR_H
