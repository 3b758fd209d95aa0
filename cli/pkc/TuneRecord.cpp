//===- TuneRecord.cpp - Tuning records as JSON ----------------------------===//
#include "TuneRecord.h"

#include <nlohmann/json.hpp>

namespace pk::cli {

namespace {

using json = nlohmann::ordered_json;

json constantsJson(const ConstantOverrides &constants) {
  json out = json::object();
  for (const auto &[name, value] : constants)
    out[name] = value;
  return out;
}

ConstantOverrides constantsOf(const json &value, const std::string &where) {
  if (!value.is_object())
    throw std::runtime_error(where + " must be an object of NAME: \".pk expression\"");
  ConstantOverrides out;
  for (const auto &[name, text] : value.items()) {
    if (!text.is_string())
      throw std::runtime_error(where + "." + name + " must be a string (a .pk expression)");
    out.emplace_back(name, text.get<std::string>());
  }
  return out;
}

} // namespace

std::string writeTuneRecord(const TuneRecord &record) {
  json exports = json::array();
  for (const TunedExport &e : record.exports) {
    json sizes = json::object();
    for (const auto &[name, value] : e.sizes)
      sizes[name] = value;
    json trials = json::array();
    for (const TuneTrial &t : e.trials) {
      json trial = {{"config", constantsJson(t.config)}};
      if (t.microseconds) {
        trial["microseconds"] = *t.microseconds;
      } else {
        trial["error"] = t.error;
      }
      if (t.registers) {
        trial["registers"] = t.registers;
        trial["spill_bytes"] = t.spillBytes;
        trial["shared_memory"] = t.sharedMemory;
      }
      trials.push_back(std::move(trial));
    }
    exports.push_back({{"name", e.name},
                       {"sizes", std::move(sizes)},
                       {"chosen", constantsJson(e.chosen)},
                       {"trials", std::move(trials)}});
  }
  json out = {{"format", "pkc-tune"},
              {"version", kTuneRecordVersion},
              {"source", {{"path", record.sourcePath}, {"sha256", record.sourceSha256}}},
              {"target", record.target},
              {"device", record.device},
              {"defines", record.defines},
              {"exports", std::move(exports)}};
  return out.dump(2) + "\n";
}

bool parseTuneRecord(llvm::StringRef text, const std::string &name, TuneRecord &record,
                     std::string &error) {
  try {
    json in = json::parse(text.begin(), text.end());
    if (!in.is_object() || in.value("format", "") != "pkc-tune")
      throw std::runtime_error("not a tuning record (its \"format\" is not \"pkc-tune\")");
    if (!in.contains("version") || !in["version"].is_number_integer() ||
        in["version"].get<int64_t>() != kTuneRecordVersion)
      throw std::runtime_error("a tuning record of a version this pkc does not know (it reads "
                               "version " +
                               std::to_string(kTuneRecordVersion) + ")");
    record = TuneRecord();
    if (in.contains("source") && in["source"].is_object()) {
      record.sourcePath = in["source"].value("path", "");
      record.sourceSha256 = in["source"].value("sha256", "");
    }
    record.target = in.value("target", "");
    record.device = in.value("device", "");
    if (in.contains("defines")) {
      if (!in["defines"].is_array())
        throw std::runtime_error("\"defines\" must be an array of NAME=VALUE strings");
      for (const json &d : in["defines"]) {
        if (!d.is_string())
          throw std::runtime_error("\"defines\" must be an array of NAME=VALUE strings");
        record.defines.push_back(d.get<std::string>());
      }
    }
    if (!in.contains("exports") || !in["exports"].is_array())
      throw std::runtime_error("\"exports\" must be an array");
    for (const json &e : in["exports"]) {
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
        throw std::runtime_error("every export needs a \"name\"");
      TunedExport tuned;
      tuned.name = e["name"].get<std::string>();
      std::string where = "export '" + tuned.name + "'";
      if (!e.contains("chosen"))
        throw std::runtime_error(where + " has no \"chosen\" configuration");
      tuned.chosen = constantsOf(e["chosen"], where + ".chosen");
      if (e.contains("sizes") && e["sizes"].is_object())
        for (const auto &[name, value] : e["sizes"].items())
          if (value.is_number_integer())
            tuned.sizes.emplace_back(name, value.get<int64_t>());
      if (e.contains("trials") && e["trials"].is_array())
        for (const json &t : e["trials"]) {
          if (!t.is_object() || !t.contains("config"))
            continue;
          TuneTrial trial;
          trial.config = constantsOf(t["config"], where + ".trials[].config");
          if (t.contains("microseconds") && t["microseconds"].is_number())
            trial.microseconds = t["microseconds"].get<double>();
          trial.error = t.value("error", "");
          tuned.trials.push_back(std::move(trial));
        }
      for (const TunedExport &other : record.exports)
        if (other.name == tuned.name)
          throw std::runtime_error(where + " appears twice");
      record.exports.push_back(std::move(tuned));
    }
  } catch (const std::exception &e) {
    error = name + ": " + e.what();
    return false;
  }
  return true;
}

std::map<std::string, ConstantOverrides> chosenConstants(const TuneRecord &record) {
  std::map<std::string, ConstantOverrides> out;
  for (const TunedExport &e : record.exports)
    out[e.name] = e.chosen;
  return out;
}

} // namespace pk::cli
