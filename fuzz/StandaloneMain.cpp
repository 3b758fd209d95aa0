//===- StandaloneMain.cpp - Runs a fuzz harness without libFuzzer ---------===//
//
// The harnesses in this directory are libFuzzer targets (scripts/fuzz.sh).
// Linked with this main instead, in the ordinary build, each becomes a
// test: it runs LLVMFuzzerTestOneInput on every file it is given (seed
// corpora, findings kept as regressions) and on a fixed number of
// mutations of each, drawn from a fixed seed, so the run is the same every
// time. A harness reports a broken invariant by aborting, so a failure is
// the test's failure; the input that did it is written to
// pk-fuzz-failure.bin in the working directory.
//
//   pk-fuzz-NAME-replay [--mutations N] [--seed S] FILE_OR_DIR...
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <csignal>
#include <fcntl.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

/// Byte strings worth inserting: the tokens and limits programs, .npy
/// headers and manifests are built from.
const char *const kTokens[] = {
    "(", ")", "[", "]", "{", "}", ":", ",", "\n", "\n    ", "**", "//", "@export\n", "def ",
    "lambda x: ", "if ", " else ", "for ", "0", "-1", "1e308", "2**63", "None", "'",
    "\"", "...", "jnp.", "pl.", "\xff", "\x00", "'shape': (", "\"shape\": [", "\"N\"",
    "9223372036854775807", "-9223372036854775808"};

std::string mutate(const std::string &input, std::mt19937_64 &rng) {
  std::string s = input;
  auto pick = [&](size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; };
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 5) {
    case 0: // overwrite a byte
      if (!s.empty())
        s[pick(s.size())] = static_cast<char>(rng());
      break;
    case 1: { // erase a range
      if (s.empty())
        break;
      size_t at = pick(s.size());
      s.erase(at, 1 + pick(std::min<size_t>(16, s.size() - at)));
      break;
    }
    case 2: { // duplicate a range (deepens nesting, lengthens chains)
      if (s.empty())
        break;
      size_t at = pick(s.size()), n = 1 + pick(std::min<size_t>(64, s.size() - at));
      s.insert(pick(s.size() + 1), s.substr(at, n));
      break;
    }
    default: // insert a token
      s.insert(pick(s.size() + 1), kTokens[pick(sizeof kTokens / sizeof *kTokens)]);
      break;
    }
  }
  return s;
}

bool readFile(const std::filesystem::path &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

const std::string *current = nullptr;

/// On a crash, saves the input that caused it (write(2) only: this runs
/// in a signal handler) and dies of the same signal.
void saveCurrentInput(int signal) {
  if (current) {
    int fd = ::open("pk-fuzz-failure.bin", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t ignored = ::write(fd, current->data(), current->size());
      (void)ignored;
      ::close(fd);
    }
    const char message[] = "the failing input is in pk-fuzz-failure.bin\n";
    ssize_t ignored = ::write(2, message, sizeof message - 1);
    (void)ignored;
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void run(const std::string &input) {
  current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()), input.size());
  current = nullptr;
}

} // namespace

int main(int argc, char **argv) {
  unsigned mutations = 0;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--mutations" || arg == "--seed") && i + 1 < argc) {
      unsigned long long v = std::strtoull(argv[++i], nullptr, 10);
      if (arg == "--mutations")
        mutations = static_cast<unsigned>(v);
      else
        seed = v;
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto &entry : std::filesystem::directory_iterator(arg, ec))
        if (entry.is_regular_file())
          files.push_back(entry.path());
    } else {
      files.push_back(arg);
    }
  }
  // Directory order is the file system's; sorted, every run is the same.
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "%s: no inputs\n", argv[0]);
    return 2;
  }
  for (int signal : {SIGABRT, SIGSEGV, SIGFPE, SIGBUS, SIGILL})
    std::signal(signal, saveCurrentInput);
  std::mt19937_64 rng(seed);
  size_t executions = 0;
  for (const std::filesystem::path &path : files) {
    std::string input;
    if (!readFile(path, input)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], path.c_str());
      return 2;
    }
    std::fprintf(stderr, "%s\n", path.c_str()); // the input a crash belongs to
    run(input);
    ++executions;
    for (unsigned m = 0; m < mutations; ++m) {
      std::string mutated = mutate(input, rng);
      run(mutated);
      ++executions;
    }
  }
  std::printf("%zu inputs (%zu files, %u mutations each), no finding\n", executions, files.size(),
              mutations);
  return 0;
}
