//===- FuseArrayCode.cpp - Merge generated producer/consumer kernels ------===//
//
// A generated pallas_call (array code at export level) writes each result
// whole, once, at the end of its kernel; a generated consumer reads each
// input whole, once, at the start of its. With the same grid and the same
// block for the array in between, the consumer's program at a grid point
// reads exactly what the producer's program at that point wrote, so the two
// kernels run as one: the producer's body first, its stored values in place
// of the consumer's loads.
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"

#include "ir/WholeRef.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace pk {

#define GEN_PASS_DEF_PKFUSEARRAYCODE
#include "transforms/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kGenerated = "pk.generated";
constexpr llvm::StringLiteral kVmapAxes = "pk.vmap_axes";

bool isGenerated(mlir::Operation *op) {
  auto call = llvm::dyn_cast_or_null<PallasCallOp>(op);
  return call && call->hasAttr(kGenerated) && call.getNumScalarPrefetch() == 0 &&
         call.getGridBounds().empty() && call.getScratchTypes().empty() &&
         call.getInputOutputAliases().empty();
}

/// The value a generated kernel stores whole into `out`, or null.
mlir::Value storedWhole(mlir::BlockArgument out) {
  StoreOp store;
  for (mlir::Operation *user : out.getUsers()) {
    auto s = llvm::dyn_cast<StoreOp>(user);
    if (!s || store || s->getBlock() != out.getOwner() || s.getRef() != out)
      return nullptr;
    store = s;
  }
  if (!store || !writesWholeRef(store))
    return nullptr;
  return store.getValue();
}

std::string fusedName(llvm::StringRef producer, llvm::StringRef consumer) {
  std::string name = (producer + "_" + consumer).str();
  return name.size() <= 48 ? name : "fusion";
}

/// Merges `producer` into `consumer` when it can; returns whether it did.
bool fuse(PallasCallOp producer, PallasCallOp consumer) {
  if (producer.getGrid() != consumer.getGrid() ||
      producer->getAttr(kVmapAxes) != consumer->getAttr(kVmapAxes) ||
      producer->getBlock() != consumer->getBlock())
    return false;
  mlir::Block &pBody = producer.getKernelBlock(), &cBody = consumer.getKernelBlock();
  unsigned pIn = producer.getInputs().size(), cIn = consumer.getInputs().size();

  // What the producer stores, per result.
  llvm::SmallVector<mlir::Value> stored;
  for (unsigned j = 0; j < producer.getNumResults(); ++j) {
    mlir::Value v = storedWhole(pBody.getArgument(pIn + j));
    if (!v)
      return false;
    stored.push_back(v);
  }
  // The consumer's inputs that are producer results: read whole, with the
  // block the producer writes, as the stored value's type.
  llvm::DenseMap<unsigned, unsigned> fromProducer; // consumer input -> producer result
  for (unsigned k = 0; k < cIn; ++k) {
    auto r = llvm::dyn_cast<mlir::OpResult>(consumer.getInputs()[k]);
    if (!r || r.getOwner() != producer)
      continue;
    unsigned j = r.getResultNumber();
    if (consumer.getInSpec(k) != producer.getOutSpec(j))
      return false;
    for (mlir::Operation *user : cBody.getArgument(k).getUsers()) {
      auto load = llvm::dyn_cast<LoadOp>(user);
      if (!load || !readsWholeRef(load) || load.getType() != stored[j].getType())
        return false;
    }
    fromProducer[k] = j;
  }

  // The fused call: the producer's inputs, then the consumer's others (each
  // array once per block), then the consumer's outputs.
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<mlir::Attribute> inSpecs;
  auto addInput = [&](mlir::Value v, mlir::Attribute spec) {
    for (unsigned i = 0; i < inputs.size(); ++i)
      if (inputs[i] == v && inSpecs[i] == spec)
        return i;
    inputs.push_back(v);
    inSpecs.push_back(spec);
    return static_cast<unsigned>(inputs.size() - 1);
  };
  llvm::SmallVector<unsigned> pArg, cArg(cIn, ~0u);
  for (unsigned i = 0; i < pIn; ++i)
    pArg.push_back(addInput(producer.getInputs()[i], producer.getInSpec(i)));
  for (unsigned k = 0; k < cIn; ++k)
    if (!fromProducer.count(k))
      cArg[k] = addInput(consumer.getInputs()[k], consumer.getInSpec(k));

  mlir::OpBuilder b(consumer);
  auto fused = PallasCallOp::create(
      b, consumer.getLoc(), consumer.getResultTypes(), inputs, mlir::ValueRange{},
      b.getStringAttr(fusedName(producer.getName(), consumer.getName())), consumer.getGridAttr(),
      b.getArrayAttr(inSpecs), consumer.getOutSpecsAttr(), consumer.getOutShapesAttr(),
      consumer.getScratchTypesAttr(), consumer.getInputOutputAliasesAttr(), nullptr, nullptr,
      b.getI64IntegerAttr(0));
  for (llvm::StringLiteral name : {kGenerated, kVmapAxes})
    if (mlir::Attribute a = consumer->getAttr(name))
      fused->setAttr(name, a);

  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<mlir::Location> argLocs;
  for (unsigned i = 0; i < pIn; ++i)
    if (argTypes.size() == pArg[i]) {
      argTypes.push_back(pBody.getArgument(i).getType());
      argLocs.push_back(pBody.getArgument(i).getLoc());
    }
  for (unsigned k = 0; k < cIn; ++k)
    if (cArg[k] != ~0u && argTypes.size() == cArg[k]) {
      argTypes.push_back(cBody.getArgument(k).getType());
      argLocs.push_back(cBody.getArgument(k).getLoc());
    }
  for (unsigned o = cIn; o < cBody.getNumArguments(); ++o) {
    argTypes.push_back(cBody.getArgument(o).getType());
    argLocs.push_back(cBody.getArgument(o).getLoc());
  }
  mlir::Block *body = b.createBlock(&fused.getKernel(), {}, argTypes, argLocs);
  b.setInsertionPointToEnd(body);

  // The producer's body, without its stores of the results.
  mlir::IRMapping map;
  for (unsigned i = 0; i < pIn; ++i)
    map.map(pBody.getArgument(i), body->getArgument(pArg[i]));
  for (mlir::Operation &op : pBody.without_terminator()) {
    auto store = llvm::dyn_cast<StoreOp>(op);
    if (store && llvm::isa<mlir::BlockArgument>(store.getRef()) &&
        llvm::cast<mlir::BlockArgument>(store.getRef()).getArgNumber() >= pIn)
      continue;
    b.clone(op, map);
  }
  // The consumer's, its loads of producer results replaced by the values.
  for (unsigned k = 0; k < cIn; ++k)
    if (cArg[k] != ~0u)
      map.map(cBody.getArgument(k), body->getArgument(cArg[k]));
  unsigned firstOut = body->getNumArguments() - (cBody.getNumArguments() - cIn);
  for (unsigned o = cIn; o < cBody.getNumArguments(); ++o)
    map.map(cBody.getArgument(o), body->getArgument(firstOut + (o - cIn)));
  for (mlir::Operation &op : cBody) {
    if (auto load = llvm::dyn_cast<LoadOp>(op))
      if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(load.getRef());
          arg && arg.getOwner() == &cBody && fromProducer.count(arg.getArgNumber())) {
        map.map(load.getResult(), map.lookup(stored[fromProducer[arg.getArgNumber()]]));
        continue;
      }
    b.clone(op, map);
  }

  consumer->replaceAllUsesWith(fused->getResults());
  consumer->erase();
  producer->erase();
  return true;
}

/// Erases generated calls nothing reads (array code whose result only gave
/// a dtype or shape): they have no other effect.
void eraseUnused(mlir::ModuleOp module) {
  bool erased = true;
  while (erased) {
    erased = false;
    llvm::SmallVector<PallasCallOp> dead;
    module.walk([&](PallasCallOp call) {
      if (isGenerated(call) && call->use_empty())
        dead.push_back(call);
    });
    for (PallasCallOp call : dead)
      call->erase();
    erased = !dead.empty();
  }
}

struct FuseArrayCodePass : impl::PkFuseArrayCodeBase<FuseArrayCodePass> {
  void runOnOperation() override {
    eraseUnused(getOperation());
    bool changed = true;
    while (changed) {
      changed = false;
      llvm::SmallVector<PallasCallOp> producers;
      getOperation().walk([&](PallasCallOp call) {
        if (isGenerated(call))
          producers.push_back(call);
      });
      for (PallasCallOp producer : producers) {
        // Every result used, and only by one generated call.
        mlir::Operation *consumer = nullptr;
        bool single = true;
        for (mlir::Value r : producer->getResults())
          for (mlir::Operation *user : r.getUsers()) {
            if (consumer && user != consumer)
              single = false;
            consumer = user;
          }
        for (mlir::Value r : producer->getResults())
          single &= !r.use_empty();
        if (single && isGenerated(consumer) &&
            fuse(producer, llvm::cast<PallasCallOp>(consumer))) {
          changed = true;
          break; // the walk's list holds erased calls now
        }
      }
    }
  }
};

} // namespace

} // namespace pk
