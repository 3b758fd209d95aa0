//===- BuiltinsInterpret.cpp - JAX's interpret-mode parameters ------------===//
//
// JAX runs Pallas kernels on a CPU with an interpreter that tests
// configure: `interpret=pltpu.InterpretParams(detect_races=True)`, or
// `with pltpu.force_tpu_interpret_mode():`. A program compiled by pkc runs
// on the device its target names, or on pkc's own interpreter when `pkc run`
// asks for it, so these say nothing pkc uses: they are accepted, and their
// fields read back as given, as `interpret=True` is.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"

namespace pk::elab {

namespace {

/// `name(**fields)`: an object whose attributes are the fields given.
Obj interpretParams(const std::string &name) {
  return builtin(name, [name](Elaborator &el, CallArgs &args) -> Obj {
    if (!args.positional.empty())
      el.fail(args.rangeOf(0), name + " takes keyword arguments only");
    auto params = std::make_shared<NamespaceObj>(name);
    for (size_t i = 0; i < args.keywords.size(); ++i)
      params->members[args.keywords[i].first] = args.keywords[i].second;
    return params;
  });
}

/// set_*_interpret_mode(params) and reset_*_interpret_mode_state().
Obj doNothing(const std::string &name) {
  return builtin(name, [](Elaborator &, CallArgs &) -> Obj { return none(); });
}

} // namespace

void defineInterpretModes(NamespaceObj &tpu, std::map<std::string, Obj> &modules) {
  tpu.members["InterpretParams"] = interpretParams("pltpu.InterpretParams");
  tpu.members["force_tpu_interpret_mode"] = namingContext("pltpu.force_tpu_interpret_mode");
  tpu.members["set_tpu_interpret_mode"] = doNothing("pltpu.set_tpu_interpret_mode");
  tpu.members["reset_tpu_interpret_mode_state"] = doNothing("pltpu.reset_tpu_interpret_mode_state");
  auto tpuParams = std::make_shared<NamespaceObj>("jax._src.pallas.mosaic.interpret.params");
  tpuParams->members["InterpretParams"] = tpu.members["InterpretParams"];
  modules[tpuParams->name] = tpuParams;
  auto tpuCall =
      std::make_shared<NamespaceObj>("jax._src.pallas.mosaic.interpret.interpret_pallas_call");
  for (const char *name :
       {"force_tpu_interpret_mode", "set_tpu_interpret_mode", "reset_tpu_interpret_mode_state"})
    tpuCall->members[name] = tpu.members[name];
  modules[tpuCall->name] = tpuCall;

  // The GPU interpreter's parameters live only in JAX's internal modules.
  auto gpuParams = std::make_shared<NamespaceObj>("jax._src.pallas.mosaic_gpu.interpret.params");
  gpuParams->members["InterpretGPUParams"] = interpretParams("InterpretGPUParams");
  gpuParams->members["force_gpu_interpret_mode"] = namingContext("force_gpu_interpret_mode");
  gpuParams->members["set_gpu_interpret_mode"] = doNothing("set_gpu_interpret_mode");
  gpuParams->members["reset_gpu_interpret_mode_state"] =
      doNothing("reset_gpu_interpret_mode_state");
  modules[gpuParams->name] = gpuParams;
}

} // namespace pk::elab
