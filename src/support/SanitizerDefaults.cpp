//===- SanitizerDefaults.cpp - ASan / UBSan options of a sanitized build --===//
//
// Linked into every program of a sanitized build (cmake/PkSanitizers.cmake),
// so that pkc, the tests and the build steps that run them behave the same
// whoever starts them: ASAN_OPTIONS / UBSAN_OPTIONS in the environment still
// override these.
//
//===----------------------------------------------------------------------===//

extern "C" {

/// LLVM's allocators poison the memory they hand out in code compiled with
/// ASan (our copies of their inline functions) but not in Debian's libMLIR,
/// whose writes to it would read as use-after-poison: that manual poisoning
/// is off. ASan's own checks all stay.
const char *__asan_default_options() { return "allow_user_poisoning=0"; }

/// A report ends the program (the build also says -fno-sanitize-recover) with
/// the stack that led to it.
const char *__ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }

} // extern "C"
