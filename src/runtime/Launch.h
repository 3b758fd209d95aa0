//===- Launch.h - Running an export's program -------------------*- C++ -*-===//
#ifndef PK_RUNTIME_LAUNCH_H
#define PK_RUNTIME_LAUNCH_H

#include "runtime/Module.h"

namespace pk::rt {

/// pk_validate: checks the arguments only.
void validateLaunch(const pk_kernel &k, const DLTensor *args, size_t numArgs);
/// pk_launch: validates, then queues the program's steps on `stream`.
void launch(const pk_kernel &k, const DLTensor *args, size_t numArgs, cu::CUstream stream);

} // namespace pk::rt

#endif // PK_RUNTIME_LAUNCH_H
