//===- Artifacts.cpp - Choosing an artifact and reading it safely ---------===//
#include "runtime/Error.h"
#include "runtime/Module.h"
#include "runtime/Sha256.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pk::rt {

int selectArtifact(const Manifest &m, int major, int minor) {
  int best = -1;
  unsigned bestScore = 0;
  for (size_t i = 0; i < m.artifacts.size(); ++i) {
    const Artifact &a = m.artifacts[i];
    if (!a.cuda)
      continue;
    unsigned score = compatibility(*a.cuda, a.format, unsigned(major), unsigned(minor));
    if (score > bestScore) { // ties keep the first
      best = int(i);
      bestScore = score;
    }
  }
  return best;
}

std::string noArtifactMessage(const Manifest &m, const std::string &origin,
                              const std::string &device, int major, int minor) {
  std::string message = origin + ": no artifact runs on " + device;
  if (m.artifacts.empty())
    return message + "; the manifest lists no artifacts";
  message += "; the manifest has";
  for (size_t i = 0; i < m.artifacts.size(); ++i) {
    const Artifact &a = m.artifacts[i];
    message += (i ? ", " : " ") + a.file + " (" + a.target + ", " + a.format;
    if (a.cuda)
      message += ", runs on " + runsOn(*a.cuda, a.format);
    else if (a.target.rfind("cuda:", 0) == 0)
      message += ", a format the runtime does not load";
    message += ")";
  }
  std::string arch =
      "sm_" + std::to_string(major) + std::to_string(minor) + (major >= 9 ? "a" : "");
  return message + ". Compile for this device with --target=cuda:" + arch;
}

namespace {

std::string bytesText(uint64_t n) { return std::to_string(n) + " bytes"; }

} // namespace

std::string readArtifact(const Artifact &a, const ArtifactSource &source,
                         const std::string &origin) {
  std::string bytes, where;
  const pk_artifact_data *blob = nullptr;
  for (size_t i = 0; i < source.numBlobs; ++i)
    if (source.blobs[i].file && a.file == source.blobs[i].file)
      blob = &source.blobs[i];
  if (blob) {
    if (!blob->data && blob->size)
      fail(PK_ERROR_INVALID_ARGUMENT,
           "pk_artifact_data for " + a.file + " has a null data pointer");
    bytes.assign(static_cast<const char *>(blob->data), blob->size);
    where = a.file + " (in memory)";
  } else if (source.directory.empty() && source.blobs != nullptr) {
    fail(PK_ERROR_IO, origin + ": artifact " + a.file +
                          " is not among the pk_artifact_data given to the loader");
  } else if (source.directory.empty()) {
    fail(PK_ERROR_IO, origin + ": artifact " + a.file +
                          " was not given: a manifest loaded from memory takes its artifacts from "
                          "pk_load_options.artifacts");
  } else {
    where = source.directory + "/" + a.file;
    std::ifstream in(where, std::ios::binary);
    if (!in)
      fail(PK_ERROR_IO, origin + ": cannot read artifact " + where + ": " + std::strerror(errno));
    std::ostringstream content;
    content << in.rdbuf();
    if (!in.good() && !in.eof())
      fail(PK_ERROR_IO, origin + ": cannot read artifact " + where);
    bytes = content.str();
  }
  // The size first: a truncated file is the common failure, and says so.
  if (bytes.size() != a.size)
    fail(PK_ERROR_ARTIFACT, origin + ": artifact " + where + " has " + bytesText(bytes.size()) +
                                ", the manifest says " + bytesText(a.size) +
                                ": it is truncated or stale; recompile the kernels");
  std::string hash = sha256Hex(bytes.data(), bytes.size());
  if (hash != a.sha256)
    fail(PK_ERROR_ARTIFACT, origin + ": artifact " + where + " has sha256 " + hash +
                                ", the manifest says " + a.sha256 +
                                ": it does not belong to this manifest; recompile the kernels");
  return bytes;
}

} // namespace pk::rt
