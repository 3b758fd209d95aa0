//===- Decode.cpp - gpu.func -> simulator instructions --------------------===//
//
// Accepts exactly the ops stage 03 may contain (arith, math, vector on 1-D
// vectors, scf, gpu thread queries / barrier / shuffle, llvm memory ops)
// and rejects anything else by name, so that a new op in the backend's
// output fails loudly instead of being simulated wrongly.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/ir/PkGpuDialect.h"
#include "backends/cuda/sim/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace pk::sim {

using namespace mlir;

std::optional<ValueType> classify(Type type) {
  ValueType v;
  if (auto vector = llvm::dyn_cast<VectorType>(type)) {
    if (vector.getRank() != 1 || vector.isScalable())
      return std::nullopt;
    std::optional<ValueType> element = classify(vector.getElementType());
    if (!element || element->isVector || element->kind == Kind::Ptr)
      return std::nullopt;
    element->width = static_cast<uint32_t>(vector.getDimSize(0));
    element->isVector = true;
    return element;
  }
  if (auto integer = llvm::dyn_cast<IntegerType>(type)) {
    switch (integer.getWidth()) {
    case 128:
      // Only cluster launch control's answer: two 64-bit words, low first.
      v.kind = Kind::I64;
      v.width = 2;
      v.isVector = true;
      return v;
    case 1:
      v.kind = Kind::I1;
      return v;
    case 8:
      v.kind = Kind::I8;
      return v;
    case 16:
      v.kind = Kind::I16;
      return v;
    case 32:
      v.kind = Kind::I32;
      return v;
    case 64:
      v.kind = Kind::I64;
      return v;
    default:
      return std::nullopt;
    }
  }
  if (llvm::isa<IndexType>(type)) {
    v.kind = Kind::I64; // the backend lowers index to 64 bits
    return v;
  }
  if (type.isF16()) {
    v.kind = Kind::F16;
    return v;
  }
  if (type.isBF16()) {
    v.kind = Kind::BF16;
    return v;
  }
  if (type.isF32()) {
    v.kind = Kind::F32;
    return v;
  }
  if (type.isF64()) {
    v.kind = Kind::F64;
    return v;
  }
  if (auto pointer = llvm::dyn_cast<LLVM::LLVMPointerType>(type)) {
    v.kind = Kind::Ptr;
    v.addressSpace = pointer.getAddressSpace();
    return v;
  }
  return std::nullopt;
}

std::string describeOp(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  // Stage 03's line, and the user's (Simulate.cpp fuses them).
  auto print = [&](FileLineColLoc file) {
    os << file.getFilename().getValue() << ":" << file.getLine() << ":" << file.getColumn();
  };
  if (auto file = llvm::dyn_cast<FileLineColLoc>(op->getLoc())) {
    print(file);
    os << ": ";
  } else if (auto fused = llvm::dyn_cast<FusedLoc>(op->getLoc())) {
    ArrayRef<Location> parts = fused.getLocations();
    if (parts.size() == 2 && llvm::isa<FileLineColLoc>(parts[0]) &&
        llvm::isa<FileLineColLoc>(parts[1])) {
      print(llvm::cast<FileLineColLoc>(parts[0]));
      os << " (from ";
      print(llvm::cast<FileLineColLoc>(parts[1]));
      os << "): ";
    }
  }
  os << "`";
  std::string text;
  llvm::raw_string_ostream ts(text);
  op->print(ts, OpPrintingFlags().skipRegions().useLocalScope());
  // One line: the op without its attributes' line breaks.
  for (char &c : text)
    if (c == '\n')
      c = ' ';
  os << text << "`";
  return s;
}

namespace {

const llvm::StringMap<Op> &elementwiseOps() {
  static const llvm::StringMap<Op> ops = {
      {"arith.addi", Op::AddI},          {"arith.subi", Op::SubI},
      {"arith.muli", Op::MulI},          {"arith.divsi", Op::DivSI},
      {"arith.divui", Op::DivUI},        {"arith.remsi", Op::RemSI},
      {"arith.remui", Op::RemUI},        {"arith.ceildivsi", Op::CeilDivSI},
      {"arith.ceildivui", Op::CeilDivUI}, {"arith.floordivsi", Op::FloorDivSI},
      {"arith.andi", Op::AndI},          {"arith.ori", Op::OrI},
      {"arith.xori", Op::XOrI},          {"arith.shli", Op::ShLI},
      {"arith.shrsi", Op::ShRSI},        {"arith.shrui", Op::ShRUI},
      {"arith.maxsi", Op::MaxSI},        {"arith.maxui", Op::MaxUI},
      {"arith.minsi", Op::MinSI},        {"arith.minui", Op::MinUI},
      {"arith.mulsi_extended", Op::MulSIExtended},
      {"arith.mului_extended", Op::MulUIExtended},
      {"arith.addui_extended", Op::AddUIExtended},
      {"math.absi", Op::AbsI},           {"math.ctlz", Op::CtLz},
      {"math.cttz", Op::CtTz},           {"math.ctpop", Op::CtPop},
      {"math.ipowi", Op::IPowI},
      {"arith.addf", Op::AddF},          {"arith.subf", Op::SubF},
      {"arith.mulf", Op::MulF},          {"arith.divf", Op::DivF},
      {"arith.remf", Op::RemF},          {"arith.maximumf", Op::MaximumF},
      {"arith.minimumf", Op::MinimumF},  {"arith.maxnumf", Op::MaxNumF},
      {"arith.minnumf", Op::MinNumF},    {"math.powf", Op::PowF},
      {"math.atan2", Op::Atan2},         {"math.copysign", Op::CopySign},
      {"arith.negf", Op::NegF},          {"math.absf", Op::AbsF},
      {"math.exp", Op::Exp},             {"math.exp2", Op::Exp2},
      {"math.expm1", Op::ExpM1},         {"math.log", Op::Log},
      {"math.log1p", Op::Log1p},         {"math.log2", Op::Log2},
      {"math.log10", Op::Log10},         {"math.sqrt", Op::Sqrt},
      {"math.rsqrt", Op::Rsqrt},         {"math.cbrt", Op::Cbrt},
      {"math.sin", Op::Sin},             {"math.cos", Op::Cos},
      {"math.tan", Op::Tan},             {"math.tanh", Op::Tanh},
      {"math.sinh", Op::Sinh},           {"math.cosh", Op::Cosh},
      {"math.asin", Op::Asin},           {"math.acos", Op::Acos},
      {"math.atan", Op::Atan},           {"math.asinh", Op::Asinh},
      {"math.acosh", Op::Acosh},         {"math.atanh", Op::Atanh},
      {"math.erf", Op::Erf},             {"math.erfc", Op::Erfc},
      {"math.floor", Op::Floor},         {"math.ceil", Op::Ceil},
      {"math.trunc", Op::Trunc},         {"math.round", Op::Round},
      {"math.roundeven", Op::RoundEven}, {"math.fma", Op::Fma},
      {"math.fpowi", Op::FPowI},         {"math.isnan", Op::IsNaN},
      {"math.isinf", Op::IsInf},         {"math.isfinite", Op::IsFinite},
      {"arith.select", Op::Select},      {"arith.extsi", Op::ExtSI},
      {"arith.extui", Op::ExtUI},        {"arith.trunci", Op::TruncI},
      {"arith.extf", Op::ExtF},          {"arith.truncf", Op::TruncF},
      {"arith.sitofp", Op::SIToFP},      {"arith.uitofp", Op::UIToFP},
      {"arith.fptosi", Op::FPToSI},      {"arith.fptoui", Op::FPToUI},
      {"arith.index_cast", Op::IndexCast}, {"arith.index_castui", Op::IndexCastUI},
      {"arith.bitcast", Op::Bitcast},
  };
  return ops;
}

/// Flags in Instr::imm of integer ops: LLVM's poison-generating flags.
constexpr int64_t kNsw = 1, kNuw = 2, kExact = 4;

/// Bytes LLVM allocates for a value of `type` in memory (GEP strides).
std::optional<int64_t> allocSize(Type type) {
  if (auto array = llvm::dyn_cast<LLVM::LLVMArrayType>(type)) {
    std::optional<int64_t> element = allocSize(array.getElementType());
    if (!element)
      return std::nullopt;
    return *element * static_cast<int64_t>(array.getNumElements());
  }
  std::optional<ValueType> v = classify(type);
  if (!v || (v->isVector && v->kind == Kind::I1))
    return std::nullopt;
  int64_t bytes = v->kind == Kind::Ptr ? 8 : storeBytesOf(v->kind);
  if (!v->isVector)
    return bytes;
  // NVPTX's data layout aligns vectors to their size (a power of two).
  int64_t size = bytes * v->width, padded = 1;
  while (padded < size)
    padded *= 2;
  return padded;
}

class Decoder {
public:
  Decoder(Kernel &k, std::string &error) : k(k), error(error) {}

  bool decodeFunc(::mlir::gpu::GPUFuncOp func) {
    k.name = func.getName().str();
    std::optional<llvm::ArrayRef<int32_t>> known = func.getKnownBlockSize();
    if (!known || known->size() != 3)
      return fail(func, "the kernel has no known_block_size; the simulator needs the CTA's size");
    for (unsigned i = 0; i < 3; ++i)
      k.blockSize[i] = static_cast<unsigned>((*known)[i]);
    if (auto n = func->getAttrOfType<IntegerAttr>(pk::gpu::kWarpgroupsAttr))
      k.warpgroups = static_cast<unsigned>(n.getInt());
    k.ctasWaitForEachOther = func->hasAttr(pk::gpu::kCtasWaitForEachOtherAttr);
    if (func.getBody().getBlocks().size() != 1)
      return fail(func, "the kernel body has several blocks; stage 03 is structured (scf)");
    mlir::Block &entry = func.getBody().front();
    k.blocks.emplace_back();
    for (BlockArgument arg : entry.getArguments()) {
      std::optional<ValueType> t = classify(arg.getType());
      if (!t || t->isVector || (t->kind != Kind::Ptr && t->kind != Kind::I64 && t->kind != Kind::I32))
        return fail(func, "kernel parameter " + std::to_string(arg.getArgNumber()) +
                              " has a type the simulator cannot pass");
      k.params.push_back(define(arg));
      k.paramTypes.push_back(*t);
    }
    if (!decodeBlock(entry, 0))
      return false;
    if (!llvm::isa<::mlir::gpu::ReturnOp>(entry.getTerminator()))
      return fail(entry.getTerminator(), "the kernel does not end with gpu.return");
    k.wordsPerThread = words;
    return true;
  }

private:
  bool fail(Operation *op, const std::string &message) {
    error = "kernel '" + k.name + "': " + message + "\n  at " + describeOp(op);
    return false;
  }

  /// A new slot; for `v` (when given) its value.
  int32_t define(Value v, std::optional<ValueType> t = std::nullopt) {
    if (!t)
      t = classify(v.getType());
    Slot s;
    s.kind = t->kind;
    s.width = t->width;
    s.offset = words * k.threads();
    words += t->width;
    k.slots.push_back(s);
    int32_t id = static_cast<int32_t>(k.slots.size() - 1);
    if (v)
      slots[v] = id;
    return id;
  }

  std::optional<int32_t> use(Value v) {
    auto it = slots.find(v);
    if (it == slots.end())
      return std::nullopt;
    return it->second;
  }

  bool checkTypes(Operation *op) {
    for (Type t : op->getOperandTypes())
      if (!classify(t))
        return fail(op, "an operand has a type the simulator does not model");
    for (Type t : op->getResultTypes())
      if (!classify(t))
        return fail(op, "a result has a type the simulator does not model");
    return true;
  }

  /// The instruction for `op` with its operands and results as slots.
  Instr &emit(mlir::Block &from, Block &into, Operation *op, Op code) {
    Instr instr = operandsOnly(op, code);
    if (op->getNumOperands() > 0)
      instr.kind = classify(op->getOperand(0).getType())->kind;
    if (op->getNumResults() > 0) {
      std::optional<ValueType> t = classify(op->getResult(0).getType());
      instr.resultKind = t->kind;
      instr.width = t->width;
    }
    for (Value v : op->getResults())
      instr.out.push_back(define(v));
    into.body.push_back(std::move(instr));
    return into.body.back();
  }

  /// The instruction for `op` with its operands as slots and no results
  /// yet (an op whose result is a struct defines a slot per field, in
  /// `fields`).
  Instr operandsOnly(Operation *op, Op code) {
    Instr instr;
    instr.op = code;
    instr.id = static_cast<uint32_t>(k.ops.size());
    k.ops.push_back(op);
    for (Value v : op->getOperands())
      instr.in.push_back(*use(v));
    return instr;
  }

  bool decodeBlock(mlir::Block &from, uint32_t id);
  bool decodeOp(mlir::Block &from, uint32_t blockId, Operation *op);
  bool decodeConstant(Operation *op);
  bool decodeMma(Block &into, mlir::NVVM::MmaOp mma);
  bool decodeWgmma(Block &into, mlir::NVVM::WgmmaMmaAsyncOp wgmma);
  bool decodeWgmmaRegisterA(Block &into, mlir::LLVM::InlineAsmOp asmOp);
  /// tcgen05 and cluster launch control; nullopt for other ops.
  std::optional<bool> decodeBlackwell(mlir::Block &from, Block &into, Operation *op);
  /// A region's single block as a new simulator block; its id.
  std::optional<uint32_t> decodeRegion(Operation *owner, Region &region);

  Kernel &k;
  std::string &error;
  llvm::DenseMap<Value, int32_t> slots;
  /// The field slots of struct values (cmpxchg's and mma.sync's results).
  llvm::DenseMap<Value, llvm::SmallVector<int32_t, 2>> fields;
  uint64_t words = 0;
};

std::optional<uint32_t> Decoder::decodeRegion(Operation *owner, Region &region) {
  if (region.getBlocks().size() != 1) {
    fail(owner, "a region with " + std::to_string(region.getBlocks().size()) +
                    " blocks; the simulator runs single-block scf regions");
    return std::nullopt;
  }
  mlir::Block &block = region.front();
  uint32_t id = static_cast<uint32_t>(k.blocks.size());
  k.blocks.emplace_back();
  for (BlockArgument arg : block.getArguments()) {
    if (!classify(arg.getType())) {
      fail(owner, "a block argument has a type the simulator does not model");
      return std::nullopt;
    }
    int32_t slot = define(arg);
    k.blocks[id].args.push_back(slot);
  }
  if (!decodeBlock(block, id))
    return std::nullopt;
  return id;
}

bool Decoder::decodeBlock(mlir::Block &from, uint32_t id) {
  for (Operation &op : from) {
    if (&op == from.getTerminator() && from.mightHaveTerminator()) {
      if (auto yield = llvm::dyn_cast<scf::YieldOp>(op)) {
        for (Value v : yield.getOperands())
          k.blocks[id].yields.push_back(*use(v));
        continue;
      }
      if (auto condition = llvm::dyn_cast<scf::ConditionOp>(op)) {
        k.blocks[id].condition = *use(condition.getCondition());
        for (Value v : condition.getArgs())
          k.blocks[id].yields.push_back(*use(v));
        continue;
      }
      if (llvm::isa<::mlir::gpu::ReturnOp>(op)) {
        if (id != 0)
          return fail(&op, "gpu.return inside a region; the simulator expects it at the kernel's end");
        continue;
      }
    }
    if (!decodeOp(from, id, &op))
      return false;
  }
  return true;
}

bool Decoder::decodeConstant(Operation *op) {
  Value result = op->getResult(0);
  std::optional<ValueType> t = classify(result.getType());
  if (!t)
    return fail(op, "a constant of a type the simulator does not model");
  std::vector<uint64_t> lanes(t->width, 0);
  auto word = [&](Attribute a) -> std::optional<uint64_t> {
    if (auto i = llvm::dyn_cast<IntegerAttr>(a))
      return i.getValue().getZExtValue() & widthMask(bitsOf(t->kind));
    if (auto f = llvm::dyn_cast<FloatAttr>(a))
      return f.getValue().bitcastToAPInt().getZExtValue();
    if (auto b = llvm::dyn_cast<BoolAttr>(a))
      return b.getValue() ? 1 : 0;
    return std::nullopt;
  };
  if (llvm::isa<ub::PoisonOp>(op) || op->getName().getStringRef() == "llvm.mlir.poison" ||
      op->getName().getStringRef() == "llvm.mlir.undef") {
    // Whatever the register held: a pattern that looks like garbage.
    for (uint64_t &w : lanes)
      w = 0xdeadbeefcafef00dull & widthMask(bitsOf(t->kind));
  } else {
    Attribute value = op->getAttr("value");
    if (auto dense = llvm::dyn_cast_or_null<DenseElementsAttr>(value)) {
      if (dense.getNumElements() != t->width)
        return fail(op, "a vector constant whose size does not match its type");
      unsigned lane = 0;
      for (Attribute a : dense.getValues<Attribute>()) {
        std::optional<uint64_t> w = word(a);
        if (!w)
          return fail(op, "a constant element the simulator cannot read");
        lanes[lane++] = *w;
      }
    } else if (std::optional<uint64_t> w = value ? word(value) : std::nullopt) {
      for (uint64_t &l : lanes)
        l = *w;
    } else {
      return fail(op, "a constant the simulator cannot read");
    }
  }
  int32_t slot = define(result, t);
  k.constants.push_back({slot, std::move(lanes)});
  return true;
}

bool Decoder::decodeMma(Block &into, NVVM::MmaOp mma) {
  Operation *op = mma.getOperation();
  NVVM::MMAShapeAttr shape = mma.getShapeAttr();
  std::optional<NVVM::MMATypes> a = mma.getMultiplicandAPtxType(), b = mma.getMultiplicandBPtxType();
  bool halves = a && b && *a == *b && (*a == NVVM::MMATypes::f16 || *a == NVVM::MMATypes::bf16);
  auto result = llvm::dyn_cast<LLVM::LLVMStructType>(mma.getRes().getType());
  if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 || !halves || !result ||
      result.getBody().size() != 4 || !llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); }) ||
      mma.getLayoutA() != NVVM::MMALayout::row || mma.getLayoutB() != NVVM::MMALayout::col ||
      mma.getOperandA().size() != 4 || mma.getOperandB().size() != 2 || mma.getOperandC().size() != 4)
    return fail(op, "an mma.sync other than m16n8k16 row.col with f16 or bf16 operands and f32 "
                    "accumulators");
  for (Value v : op->getOperands())
    if (!classify(v.getType()))
      return fail(op, "an operand has a type the simulator does not model");
  Instr instr = operandsOnly(op, Op::Mma);
  instr.kind = *a == NVVM::MMATypes::bf16 ? Kind::BF16 : Kind::F16;
  instr.resultKind = Kind::F32;
  ValueType f32;
  f32.kind = Kind::F32;
  for (int i = 0; i < 4; ++i)
    instr.out.push_back(define(Value(), f32));
  fields[mma.getRes()] = llvm::SmallVector<int32_t, 2>(instr.out.begin(), instr.out.end());
  into.body.push_back(std::move(instr));
  return true;
}

bool Decoder::decodeWgmma(Block &into, NVVM::WgmmaMmaAsyncOp wgmma) {
  Operation *op = wgmma.getOperation();
  NVVM::MMAShapeAttr shape = wgmma.getShape();
  auto halves = [](NVVM::WGMMATypes t) { return t == NVVM::WGMMATypes::f16 || t == NVVM::WGMMATypes::bf16; };
  auto bytes8 = [](NVVM::WGMMATypes t) { return t == NVVM::WGMMATypes::s8 || t == NVVM::WGMMATypes::u8; };
  NVVM::WGMMATypes a = wgmma.getTypeA(), b = wgmma.getTypeB();
  bool tf32 = a == NVVM::WGMMATypes::tf32, integer = bytes8(a) && bytes8(b);
  auto it = fields.find(wgmma.getInouts());
  int64_t n = shape.getN();
  if (shape.getM() != 64 || shape.getK() != (tf32 ? 8 : integer ? 32 : 16) ||
      !(halves(a) || tf32 || integer) || (a != b && !integer) ||
      ((tf32 || integer) && (wgmma.getLayoutA() != NVVM::MMALayout::row ||
                             wgmma.getLayoutB() != NVVM::MMALayout::col)) ||
      wgmma.getTypeD() != (integer ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32) ||
      wgmma.getSatfinite() || it == fields.end() ||
      static_cast<int64_t>(it->second.size()) != n / 2 ||
      wgmma.getScaleA() != NVVM::WGMMAScaleIn::one || wgmma.getScaleB() != NVVM::WGMMAScaleIn::one)
    return fail(op, "a wgmma other than m64nNk16 with f16 or bf16 operands or m64nNk8 with K-major "
                    "tf32 ones, and f32 accumulators, or m64nNk32 with K-major s8 / u8 ones and "
                    "s32 accumulators");
  Instr instr = operandsOnly(op, Op::Wgmma);
  instr.in.clear();
  instr.in.push_back(*use(wgmma.getDescriptorA()));
  instr.in.push_back(*use(wgmma.getDescriptorB()));
  for (int32_t slot : it->second)
    instr.in.push_back(slot);
  instr.kind = tf32 ? Kind::F32 : integer ? Kind::I8 : a == NVVM::WGMMATypes::bf16 ? Kind::BF16 : Kind::F16;
  instr.resultKind = integer ? Kind::I32 : Kind::F32;
  instr.imm = n;
  if (integer) // whether A and B are signed
    instr.list = {a == NVVM::WGMMATypes::s8 ? 1 : 0, b == NVVM::WGMMATypes::s8 ? 1 : 0};
  // Flags: bit 0 D scaled by one (accumulate), bit 1 A MN-major, bit 2 B
  // MN-major (the NVVM layouts: A row and B col are K-major).
  instr.imm2 = (wgmma.getScaleD() == NVVM::WGMMAScaleOut::one ? 1 : 0) |
               (wgmma.getLayoutA() == NVVM::MMALayout::col ? 2 : 0) |
               (wgmma.getLayoutB() == NVVM::MMALayout::row ? 4 : 0);
  ValueType accumulator;
  accumulator.kind = instr.resultKind;
  auto &list = fields[wgmma.getResults()];
  for (int64_t i = 0; i < n / 2; ++i) {
    instr.out.push_back(define(Value(), accumulator));
    list.push_back(instr.out.back());
  }
  into.body.push_back(std::move(instr));
  return true;
}

namespace {

/// The PTX of a wgmma.mma_async with A in registers, as inline assembly
/// writes it: `wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T {d...},
/// {a0, a1, a2, a3}, b-desc, p, 1, 1, trans-b;` after a `setp.ne.b32 p,
/// S, 0;` that sets the scale-d predicate from an immediate (PTX ISA,
/// "wgmma.mma_async"). Operands are asm operand numbers.
struct RegisterAWgmma {
  int64_t n = 0;
  bool bf16 = false, scaleD = false, bTransposed = false;
  llvm::SmallVector<unsigned, 64> d;
  llvm::SmallVector<unsigned, 4> a;
  unsigned descB = 0;
};

/// `$N` -> N.
std::optional<unsigned> asmOperand(llvm::StringRef token) {
  token = token.trim();
  unsigned n = 0;
  if (!token.consume_front("$") || token.getAsInteger(10, n))
    return std::nullopt;
  return n;
}

/// `{$i, $j, ...}` -> the operand numbers.
bool asmOperandList(llvm::StringRef token, llvm::SmallVectorImpl<unsigned> &out) {
  token = token.trim();
  if (!token.consume_front("{") || !token.consume_back("}"))
    return false;
  llvm::SmallVector<llvm::StringRef, 64> items;
  token.split(items, ',');
  for (llvm::StringRef item : items) {
    std::optional<unsigned> n = asmOperand(item);
    if (!n)
      return false;
    out.push_back(*n);
  }
  return true;
}

std::optional<RegisterAWgmma> parseRegisterAWgmma(llvm::StringRef text) {
  RegisterAWgmma w;
  size_t setp = text.find("setp.ne.b32 p, ");
  if (setp == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef scale = text.substr(setp + 15);
  if (scale.starts_with("1, 0;"))
    w.scaleD = true;
  else if (!scale.starts_with("0, 0;"))
    return std::nullopt;
  size_t at = text.find("wgmma.mma_async.sync.aligned.m64n");
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = text.substr(at + 33);
  if (rest.consumeInteger(10, w.n) || !rest.consume_front("k16.f32."))
    return std::nullopt;
  if (rest.consume_front("bf16.bf16 "))
    w.bf16 = true;
  else if (!rest.consume_front("f16.f16 "))
    return std::nullopt;
  rest = rest.take_until([](char c) { return c == ';'; });
  // Operands separated by commas outside braces.
  llvm::SmallVector<llvm::StringRef, 8> operands;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= rest.size(); ++i) {
    if (i == rest.size() || (rest[i] == ',' && depth == 0)) {
      operands.push_back(rest.slice(start, i).trim());
      start = i + 1;
    } else if (rest[i] == '{') {
      ++depth;
    } else if (rest[i] == '}') {
      --depth;
    }
  }
  if (operands.size() != 7 || !asmOperandList(operands[0], w.d) ||
      !asmOperandList(operands[1], w.a) || w.a.size() != 4 || operands[3] != "p" ||
      operands[4] != "1" || operands[5] != "1" || (operands[6] != "0" && operands[6] != "1"))
    return std::nullopt;
  std::optional<unsigned> b = asmOperand(operands[2]);
  if (!b)
    return std::nullopt;
  w.descB = *b;
  w.bTransposed = operands[6] == "1";
  return w;
}

} // namespace

std::optional<bool> Decoder::decodeBlackwell(mlir::Block &from, Block &into, Operation *op) {
  if (llvm::isa<NVVM::Tcgen05RelinquishAllocPermitOp, NVVM::Tcgen05FenceOp, NVVM::Tcgen05WaitOp,
                NVVM::Tcgen05DeallocOp>(op)) {
    // Loads, stores and MMAs complete when issued: nothing to wait for.
    emit(from, into, op, Op::Nop);
    return true;
  }
  if (auto alloc = llvm::dyn_cast<NVVM::Tcgen05AllocOp>(op)) {
    if (alloc.getGroup() != NVVM::CTAGroupKind::CTA_1 ||
        classify(alloc.getAddr().getType())->addressSpace != 3)
      return fail(op, "a tcgen05.alloc other than cta_group::1 into shared memory");
    emit(from, into, op, Op::TmemAlloc);
    return true;
  }
  // A tensor memory address (lane << 16 | column) as the pointer the
  // tcgen05 ops take.
  if (auto cast = llvm::dyn_cast<LLVM::IntToPtrOp>(op)) {
    if (classify(cast.getType())->addressSpace != 6)
      return fail(op, "an inttoptr other than to tensor memory (address space 6)");
    emit(from, into, op, Op::PtrCast);
    return true;
  }
  if (auto load = llvm::dyn_cast<NVVM::Tcgen05LdOp>(op)) {
    if (load.getShape() != NVVM::Tcgen05LdStShape::SHAPE_32X32B || load.getPack() ||
        load.getOffset())
      return fail(op, "a tcgen05.ld other than .32x32b without .pack");
    emit(from, into, op, Op::TmemLoad);
    return true;
  }
  if (auto store = llvm::dyn_cast<NVVM::Tcgen05StOp>(op)) {
    if (store.getShape() != NVVM::Tcgen05LdStShape::SHAPE_32X32B || store.getUnpack() ||
        store.getOffset())
      return fail(op, "a tcgen05.st other than .32x32b without .unpack");
    emit(from, into, op, Op::TmemStore).imm = classify(store.getVal().getType())->width;
    return true;
  }
  if (auto mma = llvm::dyn_cast<NVVM::Tcgen05MMAOp>(op)) {
    if (mma.getKind() != NVVM::Tcgen05MMAKind::F16 ||
        mma.getCtaGroup() != NVVM::CTAGroupKind::CTA_1 ||
        mma.getCollectorOp() != NVVM::Tcgen05MMACollectorOp::DISCARD || mma.getAShift() ||
        mma.getScaleInputD() || mma.getDisableOutputLane() ||
        !mma.getMatrixA().getType().isInteger(64))
      return fail(op, "a tcgen05.mma other than cta_group::1 kind::f16 with A in shared memory");
    emit(from, into, op, Op::Tcgen05Mma);
    return true;
  }
  if (auto commit = llvm::dyn_cast<NVVM::Tcgen05CommitOp>(op)) {
    if (commit.getMulticastMask() || commit.getGroup() != NVVM::CTAGroupKind::CTA_1)
      return fail(op, "a tcgen05.commit other than cta_group::1 without multicast");
    emit(from, into, op, Op::Tcgen05Commit);
    return true;
  }
  if (auto request = llvm::dyn_cast<NVVM::ClusterLaunchControlTryCancelOp>(op)) {
    emit(from, into, op, Op::ClcTryCancel).imm = request.getMulticast() ? 1 : 0;
    return true;
  }
  if (auto query = llvm::dyn_cast<NVVM::ClusterLaunchControlQueryCancelOp>(op)) {
    emit(from, into, op, Op::ClcQuery).imm = static_cast<int64_t>(query.getQueryType());
    return true;
  }
  return std::nullopt;
}

bool Decoder::decodeWgmmaRegisterA(Block &into, LLVM::InlineAsmOp asmOp) {
  Operation *op = asmOp.getOperation();
  auto unsupported = [&] {
    return fail(op, "inline assembly other than the empty register barrier and a wgmma.mma_async "
                    "m64nNk16 with f16 or bf16 A in registers and f32 accumulators");
  };
  std::optional<RegisterAWgmma> w = parseRegisterAWgmma(asmOp.getAsmString());
  auto result = llvm::cast<LLVM::LLVMStructType>(asmOp.getRes().getType());
  unsigned outputs = static_cast<unsigned>(result.getBody().size());
  if (!w || w->n < 8 || w->n > 256 || static_cast<int64_t>(outputs) != w->n / 2 ||
      w->d.size() != outputs || !llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); }))
    return unsupported();
  // Asm operand i >= outputs is the op's operand i - outputs; an input
  // constrained by a digit is tied to that output (its value coming in).
  llvm::SmallVector<llvm::StringRef, 80> constraints;
  asmOp.getConstraints().split(constraints, ',');
  if (constraints.size() != outputs + asmOp.getOperands().size())
    return unsupported();
  auto input = [&](unsigned asmIndex) -> std::optional<int32_t> {
    if (asmIndex < outputs || asmIndex >= constraints.size())
      return std::nullopt;
    return use(asmOp.getOperands()[asmIndex - outputs]);
  };
  llvm::SmallVector<int32_t, 128> accumulators(outputs, -1);
  for (unsigned i = outputs; i < constraints.size(); ++i) {
    unsigned tied = 0;
    if (!constraints[i].getAsInteger(10, tied) && tied < outputs) {
      std::optional<int32_t> slot = input(i);
      if (!slot)
        return unsupported();
      accumulators[tied] = *slot;
    }
  }
  for (unsigned r = 0; r < outputs; ++r)
    if (w->d[r] != r || accumulators[r] < 0)
      return unsupported();
  std::optional<int32_t> descB = input(w->descB);
  if (!descB)
    return unsupported();
  Instr instr;
  instr.op = Op::Wgmma;
  instr.id = static_cast<uint32_t>(k.ops.size());
  k.ops.push_back(op);
  // As decodeWgmma's, with B's descriptor in A's place (unused) and A's
  // four words after the accumulators.
  instr.in.push_back(*descB);
  instr.in.push_back(*descB);
  llvm::append_range(instr.in, accumulators);
  for (unsigned a : w->a) {
    std::optional<int32_t> slot = input(a);
    if (!slot || !asmOp.getOperands()[a - outputs].getType().isInteger(32))
      return unsupported();
    instr.in.push_back(*slot);
  }
  instr.kind = w->bf16 ? Kind::BF16 : Kind::F16;
  instr.resultKind = Kind::F32;
  instr.imm = w->n;
  instr.imm2 = (w->scaleD ? 1 : 0) | (w->bTransposed ? 4 : 0) | 8;
  ValueType f32;
  f32.kind = Kind::F32;
  auto &list = fields[asmOp.getRes()];
  for (unsigned r = 0; r < outputs; ++r) {
    instr.out.push_back(define(Value(), f32));
    list.push_back(instr.out.back());
  }
  into.body.push_back(std::move(instr));
  return true;
}

bool Decoder::decodeOp(mlir::Block &from, uint32_t blockId, Operation *op) {
  Block &into = k.blocks[blockId];
  llvm::StringRef name = op->getName().getStringRef();
  // Structs of scalars (wgmma's accumulators): a slot per field, followed
  // through undef, insertvalue and extractvalue without instructions
  // (slots are never written twice).
  if (auto structType = op->getNumResults() == 1
                            ? llvm::dyn_cast<LLVM::LLVMStructType>(op->getResult(0).getType())
                            : nullptr) {
    if (name == "llvm.mlir.undef" || name == "llvm.mlir.poison") {
      auto &list = fields[op->getResult(0)];
      for (Type t : structType.getBody()) {
        std::optional<ValueType> v = classify(t);
        if (!v || v->isVector)
          return fail(op, "a struct with a field the simulator does not model");
        int32_t slot = define(Value(), v);
        k.constants.push_back({slot, std::vector<uint64_t>(1, 0)});
        list.push_back(slot);
      }
      return true;
    }
    if (auto insert = llvm::dyn_cast<LLVM::InsertValueOp>(op)) {
      auto it = fields.find(insert.getContainer());
      if (it == fields.end() || insert.getPosition().size() != 1 || insert.getPosition()[0] < 0 ||
          insert.getPosition()[0] >= static_cast<int64_t>(it->second.size()))
        return fail(op, "an insertvalue the simulator cannot follow");
      auto list = it->second;
      list[insert.getPosition()[0]] = *use(insert.getValue());
      fields[insert.getResult()] = list;
      return true;
    }
    if (auto wgmma = llvm::dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
      return decodeWgmma(into, wgmma);
    if (auto asmOp = llvm::dyn_cast<LLVM::InlineAsmOp>(op)) {
      // The empty asm that ties registers in place (a compiler barrier):
      // its results are its operands.
      if (asmOp.getAsmString().contains("wgmma.mma_async"))
        return decodeWgmmaRegisterA(into, asmOp);
      if (!asmOp.getAsmString().empty() || asmOp.getOperands().size() != structType.getBody().size())
        return fail(op, "inline assembly (only the empty register barrier and wgmma with A in "
                        "registers are modelled)");
      auto &list = fields[op->getResult(0)];
      for (Value v : asmOp.getOperands())
        list.push_back(*use(v));
      return true;
    }
  }
  if (llvm::isa<arith::ConstantOp, ub::PoisonOp>(op) || name == "llvm.mlir.constant" ||
      name == "llvm.mlir.poison" || name == "llvm.mlir.undef")
    return decodeConstant(op);
  if (llvm::isa<NVVM::WgmmaFenceAlignedOp>(op)) {
    // Registers are read when a wgmma is issued here: the fence is a no-op.
    emit(from, into, op, Op::Nop);
    return true;
  }
  if (llvm::isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
    emit(from, into, op, Op::WgmmaCommit);
    return true;
  }
  if (auto wait = llvm::dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
    Instr &instr = emit(from, into, op, Op::WgmmaWait);
    instr.imm = wait.getGroup();
    return true;
  }
  if (auto cast = llvm::dyn_cast<LLVM::PtrToIntOp>(op)) {
    if (classify(cast.getArg().getType())->addressSpace != 3)
      return fail(op, "a ptrtoint of a pointer other than to shared memory");
    emit(from, into, op, Op::SharedAddress);
    return true;
  }
  // cmpxchg yields a struct {value, success}; extractvalue picks a field.
  if (auto exchange = llvm::dyn_cast<LLVM::AtomicCmpXchgOp>(op)) {
    std::optional<ValueType> t = classify(exchange.getVal().getType());
    std::optional<ValueType> p = classify(exchange.getPtr().getType());
    if (!t || t->isVector || t->kind == Kind::Ptr || !isIntKind(t->kind) || t->kind == Kind::I1)
      return fail(op, "a cmpxchg of a type other than an integer of 8 to 64 bits");
    if (p->addressSpace != 1 && p->addressSpace != 3)
      return fail(op, "a cmpxchg through an address space other than global (1) or shared (3)");
    Instr instr = operandsOnly(op, Op::CmpXchg);
    instr.kind = instr.resultKind = t->kind;
    instr.addressSpace = p->addressSpace;
    instr.imm = storeBytesOf(t->kind);
    instr.imm2 = exchange.getAlignment() ? static_cast<int64_t>(*exchange.getAlignment()) : instr.imm;
    ValueType flag;
    flag.kind = Kind::I1;
    instr.out.push_back(define(Value(), t));
    instr.out.push_back(define(Value(), flag));
    fields[exchange.getResult()] = {instr.out[0], instr.out[1]};
    into.body.push_back(std::move(instr));
    return true;
  }
  if (auto extract = llvm::dyn_cast<LLVM::ExtractValueOp>(op)) {
    auto it = fields.find(extract.getContainer());
    if (it == fields.end() || extract.getPosition().size() != 1 || extract.getPosition()[0] < 0 ||
        extract.getPosition()[0] >= static_cast<int64_t>(it->second.size()))
      return fail(op, "an extractvalue the simulator cannot follow (only cmpxchg's and mma.sync's fields)");
    slots[extract.getResult()] = it->second[extract.getPosition()[0]];
    return true;
  }
  // mma.sync yields a struct of accumulators; extractvalue picks one.
  if (auto mma = llvm::dyn_cast<NVVM::MmaOp>(op))
    return decodeMma(into, mma);
  if (!checkTypes(op))
    return false;
  // A bitcast that regroups bits: vector<2xbf16> <-> i32 and the like.
  if (auto cast = llvm::dyn_cast<LLVM::BitcastOp>(op)) {
    std::optional<ValueType> source = classify(cast.getArg().getType()), dest = classify(cast.getType());
    if (source->kind == Kind::Ptr || dest->kind == Kind::Ptr || source->kind == Kind::I1 ||
        dest->kind == Kind::I1 ||
        source->width * bitsOf(source->kind) != dest->width * bitsOf(dest->kind))
      return fail(op, "a bitcast other than between integer, float and vector types of one size");
    emit(from, into, op, Op::Repack).imm2 = source->width;
    return true;
  }

  auto it = elementwiseOps().find(name);
  if (it != elementwiseOps().end()) {
    Instr &instr = emit(from, into, op, it->second);
    if (auto flags = op->getAttrOfType<arith::IntegerOverflowFlagsAttr>("overflowFlags")) {
      if (bitEnumContainsAny(flags.getValue(), arith::IntegerOverflowFlags::nsw))
        instr.imm |= kNsw;
      if (bitEnumContainsAny(flags.getValue(), arith::IntegerOverflowFlags::nuw))
        instr.imm |= kNuw;
    }
    if (op->hasAttr("isExact"))
      instr.imm |= kExact;
    if (it->second == Op::FPowI || it->second == Op::Select)
      instr.imm2 = classify(op->getOperand(it->second == Op::Select ? 0 : 1).getType())->width;
    if (it->second == Op::FPowI)
      instr.imm = static_cast<int64_t>(classify(op->getOperand(1).getType())->kind);
    if (it->second == Op::Select)
      instr.kind = instr.resultKind;
    if (auto mode = op->getAttrOfType<arith::RoundingModeAttr>("roundingmode"))
      if (mode.getValue() != arith::RoundingMode::to_nearest_even)
        return fail(op, "a rounding mode other than to_nearest_even");
    return true;
  }
  if (auto cmp = llvm::dyn_cast<arith::CmpIOp>(op)) {
    emit(from, into, op, Op::CmpI).imm = static_cast<int64_t>(cmp.getPredicate());
    return true;
  }
  if (auto cmp = llvm::dyn_cast<arith::CmpFOp>(op)) {
    emit(from, into, op, Op::CmpF).imm = static_cast<int64_t>(cmp.getPredicate());
    return true;
  }

  // Vectors.
  if (auto extract = llvm::dyn_cast<vector::ExtractOp>(op)) {
    if (extract.getStaticPosition().size() != 1)
      return fail(op, "vector.extract with other than one position (only 1-D vectors are modelled)");
    Instr &instr = emit(from, into, op, Op::VExtract);
    int64_t p = extract.getStaticPosition()[0];
    instr.imm = ShapedType::isDynamic(p) ? -1 : p;
    instr.imm2 = classify(extract.getSource().getType())->width;
    return true;
  }
  if (auto insert = llvm::dyn_cast<vector::InsertOp>(op)) {
    if (insert.getStaticPosition().size() != 1 || llvm::isa<VectorType>(insert.getValueToStore().getType()))
      return fail(op, "vector.insert of other than one scalar (only 1-D vectors are modelled)");
    Instr &instr = emit(from, into, op, Op::VInsert);
    int64_t p = insert.getStaticPosition()[0];
    instr.imm = ShapedType::isDynamic(p) ? -1 : p;
    return true;
  }
  if (llvm::isa<vector::FromElementsOp>(op)) {
    emit(from, into, op, Op::VFromElements);
    return true;
  }
  if (llvm::isa<vector::BroadcastOp>(op) || name == "vector.splat") {
    Instr &instr = emit(from, into, op, Op::VBroadcast);
    instr.imm = classify(op->getOperand(0).getType())->width;
    if (instr.imm != 1 && instr.imm != instr.width)
      return fail(op, "a broadcast between vectors of different sizes");
    return true;
  }
  if (auto shuffle = llvm::dyn_cast<vector::ShuffleOp>(op)) {
    Instr &instr = emit(from, into, op, Op::VShuffle);
    instr.imm = classify(shuffle.getV1().getType())->width;
    instr.imm2 = classify(shuffle.getV2().getType())->width;
    for (int64_t m : shuffle.getMask())
      instr.list.push_back(m);
    return true;
  }

  // Threads.
  if (auto tid = llvm::dyn_cast<::mlir::gpu::ThreadIdOp>(op)) {
    emit(from, into, op, Op::ThreadId).imm = static_cast<int64_t>(tid.getDimension());
    return true;
  }
  if (auto bid = llvm::dyn_cast<::mlir::gpu::BlockIdOp>(op)) {
    emit(from, into, op, Op::BlockId).imm = static_cast<int64_t>(bid.getDimension());
    return true;
  }
  if (auto dim = llvm::dyn_cast<::mlir::gpu::BlockDimOp>(op)) {
    emit(from, into, op, Op::BlockDim).imm = static_cast<int64_t>(dim.getDimension());
    return true;
  }
  if (auto dim = llvm::dyn_cast<::mlir::gpu::GridDimOp>(op)) {
    emit(from, into, op, Op::GridDim).imm = static_cast<int64_t>(dim.getDimension());
    return true;
  }
  if (llvm::isa<::mlir::gpu::LaneIdOp>(op)) {
    emit(from, into, op, Op::LaneId);
    return true;
  }
  if (llvm::isa<::mlir::gpu::BarrierOp>(op)) {
    emit(from, into, op, Op::Barrier);
    return true;
  }
  if (auto print = llvm::dyn_cast<::mlir::gpu::PrintfOp>(op)) {
    Instr &instr = emit(from, into, op, Op::Printf);
    instr.imm = static_cast<int64_t>(k.strings.size());
    k.strings.push_back(print.getFormat().str());
    for (Value v : print.getArgs())
      instr.list.push_back(static_cast<int64_t>(classify(v.getType())->kind));
    return true;
  }
  if (auto shuffle = llvm::dyn_cast<::mlir::gpu::ShuffleOp>(op)) {
    emit(from, into, op, Op::Shuffle).imm = static_cast<int64_t>(shuffle.getMode());
    return true;
  }

  // Memory.
  if (auto address = llvm::dyn_cast<LLVM::AddressOfOp>(op)) {
    auto global = llvm::dyn_cast_or_null<LLVM::GlobalOp>(
        SymbolTable::lookupNearestSymbolFrom(op, address.getGlobalNameAttr()));
    auto array = global ? llvm::dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType()) : nullptr;
    // A constant table (a block constant of many distinct elements): its
    // bytes go into global memory at each launch.
    auto table = global && global.getConstant() && global.getAddrSpace() == 1
                     ? llvm::dyn_cast_or_null<DenseElementsAttr>(global.getValueOrNull())
                     : nullptr;
    if (table && array && !table.isSplat() &&
        table.getElementType().getIntOrFloatBitWidth() % 8 == 0) {
      // One allocation per table however often the kernel takes its address.
      std::string name = global.getSymName().str();
      auto known = llvm::find_if(k.constantTables,
                                 [&](const Kernel::ConstantTable &t) { return t.name == name; });
      if (known == k.constantTables.end()) {
        ArrayRef<char> raw = table.getRawData();
        k.constantTables.push_back({name, std::vector<uint8_t>(raw.begin(), raw.end())});
        known = std::prev(k.constantTables.end());
      }
      emit(from, into, op, Op::AddressOf).imm = (known - k.constantTables.begin()) + 1;
      return true;
    }
    if (!global || global.getAddrSpace() != 3 || !array || array.getNumElements() != 0 ||
        global.getLinkage() != LLVM::Linkage::External)
      return fail(op, "the simulator models two kinds of globals: dynamic shared memory (an "
                      "external zero-sized array in address space 3) and constant tables (a "
                      "constant array in address space 1 with dense elements)");
    emit(from, into, op, Op::AddressOf);
    k.usesSharedMemory = true;
    return true;
  }
  if (auto gep = llvm::dyn_cast<LLVM::GEPOp>(op)) {
    if (llvm::isa<VectorType>(gep.getType()))
      return fail(op, "a GEP over a vector of pointers");
    Instr &instr = emit(from, into, op, Op::GEP);
    instr.imm2 = classify(gep.getType())->addressSpace;
    Type current = gep.getElemType();
    bool first = true;
    unsigned dynamic = 0;
    for (auto index : gep.getIndices()) {
      Type stepped = current;
      if (!first) {
        if (auto array = llvm::dyn_cast<LLVM::LLVMArrayType>(current))
          stepped = array.getElementType();
        else if (auto vector = llvm::dyn_cast<VectorType>(current))
          stepped = vector.getElementType();
        else
          return fail(op, "a GEP into a type the simulator cannot index (structs are not modelled)");
      }
      std::optional<int64_t> scale = allocSize(stepped);
      if (!scale)
        return fail(op, "a GEP over a type whose size the simulator does not know");
      if (auto value = llvm::dyn_cast<Value>(index)) {
        instr.list.push_back(instr.in[1 + dynamic++]);
        instr.list.push_back(0);
      } else {
        instr.list.push_back(-1);
        instr.list.push_back(llvm::cast<IntegerAttr>(index).getInt());
      }
      instr.list.push_back(*scale);
      current = stepped;
      first = false;
    }
    return true;
  }
  if (auto load = llvm::dyn_cast<LLVM::LoadOp>(op)) {
    if (load.getOrdering() != LLVM::AtomicOrdering::not_atomic) {
      // pl.semaphore_read: a 32-bit atomic load through any pointer.
      if (!load.getType().isInteger(32))
        return fail(op, "an atomic load other than of an i32");
      emit(from, into, op, Op::AtomicLoad);
      return true;
    }
    std::optional<ValueType> t = classify(load.getType());
    if (t->kind == Kind::Ptr || (t->isVector && t->kind == Kind::I1))
      return fail(op, "a load of pointers or of a vector of i1");
    unsigned space = classify(load.getAddr().getType())->addressSpace;
    if (space != 1 && space != 3)
      return fail(op, "a load through address space " + std::to_string(space) +
                          " (the simulator models global (1) and shared (3) memory)");
    Instr &instr = emit(from, into, op, Op::Load);
    instr.addressSpace = space;
    instr.imm = static_cast<int64_t>(storeBytesOf(t->kind)) * t->width;
    if (instr.imm > 512)
      return fail(op, "a load of more than 512 bytes");
    instr.imm2 = load.getAlignment() ? static_cast<int64_t>(*load.getAlignment()) : *allocSize(load.getType());
    return true;
  }
  if (auto store = llvm::dyn_cast<LLVM::StoreOp>(op)) {
    if (store.getOrdering() != LLVM::AtomicOrdering::not_atomic)
      return fail(op, "an atomic store");
    std::optional<ValueType> t = classify(store.getValue().getType());
    if (t->kind == Kind::Ptr || (t->isVector && t->kind == Kind::I1))
      return fail(op, "a store of pointers or of a vector of i1");
    unsigned space = classify(store.getAddr().getType())->addressSpace;
    if (space != 1 && space != 3)
      return fail(op, "a store through address space " + std::to_string(space) +
                          " (the simulator models global (1) and shared (3) memory)");
    Instr &instr = emit(from, into, op, Op::Store);
    instr.addressSpace = space;
    instr.kind = t->kind;
    instr.width = t->width;
    instr.imm = static_cast<int64_t>(storeBytesOf(t->kind)) * t->width;
    if (instr.imm > 512)
      return fail(op, "a store of more than 512 bytes");
    instr.imm2 = store.getAlignment() ? static_cast<int64_t>(*store.getAlignment())
                                      : *allocSize(store.getValue().getType());
    return true;
  }

  if (auto rmw = llvm::dyn_cast<LLVM::AtomicRMWOp>(op)) {
    std::optional<ValueType> t = classify(rmw.getVal().getType());
    unsigned space = classify(rmw.getPtr().getType())->addressSpace;
    if (t->isVector || t->kind == Kind::Ptr || t->kind == Kind::I1)
      return fail(op, "an atomicrmw of a vector, pointer or i1");
    if (space != 1 && space != 3)
      return fail(op, "an atomicrmw through an address space other than global (1) or shared (3)");
    Instr &instr = emit(from, into, op, Op::AtomicRMW);
    instr.kind = instr.resultKind = t->kind;
    instr.addressSpace = space;
    instr.imm = static_cast<int64_t>(rmw.getBinOp());
    instr.list.push_back(storeBytesOf(t->kind));
    instr.imm2 = rmw.getAlignment() ? static_cast<int64_t>(*rmw.getAlignment()) : storeBytesOf(t->kind);
    return true;
  }

  if (llvm::isa<pk::gpu::SemaphoreSignalOp>(op)) {
    emit(from, into, op, Op::SemSignal);
    return true;
  }
  if (auto wait = llvm::dyn_cast<pk::gpu::SemaphoreWaitOp>(op)) {
    emit(from, into, op, Op::SemWait).imm = wait.getNoDecrement() ? 1 : 0;
    return true;
  }

  // Hopper's asynchronous machinery.
  if (auto init = llvm::dyn_cast<NVVM::MBarrierInitOp>(op)) {
    if (init.getPredicate())
      return fail(op, "a predicated mbarrier.init");
    emit(from, into, op, Op::MbarInit);
    return true;
  }
  if (auto arrive = llvm::dyn_cast<NVVM::MBarrierArriveOp>(op)) {
    if (arrive.getCount())
      return fail(op, "an mbarrier.arrive with a count");
    emit(from, into, op, Op::MbarArrive);
    return true;
  }
  if (auto arrive = llvm::dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op)) {
    if (arrive.getPredicate())
      return fail(op, "a predicated mbarrier.arrive.expect_tx");
    emit(from, into, op, Op::MbarArriveExpectTx);
    return true;
  }
  if (llvm::isa<NVVM::MapaOp>(op)) {
    emit(from, into, op, Op::Mapa);
    return true;
  }
  if (llvm::isa<NVVM::ClusterArriveOp, NVVM::ClusterArriveRelaxedOp>(op)) {
    emit(from, into, op, Op::ClusterArrive);
    return true;
  }
  if (llvm::isa<NVVM::ClusterWaitOp>(op)) {
    emit(from, into, op, Op::ClusterWait);
    return true;
  }
  if (llvm::isa<NVVM::MBarrierTryWaitParityOp>(op)) {
    emit(from, into, op, Op::MbarTryWait);
    return true;
  }
  if (auto test = llvm::dyn_cast<NVVM::MBarrierTestWaitOp>(op)) {
    if (!test.getStateOrPhase().getType().isInteger(32))
      return fail(op, "an mbarrier.test_wait of a state (only the parity form is modelled)");
    emit(from, into, op, Op::MbarTestWait);
    return true;
  }
  if (auto load = llvm::dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op)) {
    if (load.getPredicate() || !load.getIm2colOffsets().empty() || load.getL2CacheHint() ||
        load.getMode() != NVVM::TMALoadMode::TILE)
      return fail(op, "a TMA load other than a tiled one without cache hint or predicate");
    Instr instr = operandsOnly(op, Op::TmaLoad);
    instr.in.clear();
    instr.in.push_back(*use(load.getDstMem()));
    instr.in.push_back(*use(load.getTmaDescriptor()));
    instr.in.push_back(*use(load.getMbar()));
    for (Value c : load.getCoordinates())
      instr.in.push_back(*use(c));
    // A multicast: the CTA mask comes last (imm = 1).
    if (Value mask = load.getMulticastMask()) {
      instr.in.push_back(*use(mask));
      instr.imm = 1;
    }
    into.body.push_back(std::move(instr));
    return true;
  }
  if (auto store = llvm::dyn_cast<NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp>(op)) {
    if (store.getPredicate() || store.getL2CacheHint() || store.getMode() != NVVM::TMAStoreMode::TILE)
      return fail(op, "a TMA store other than a tiled one without cache hint or predicate");
    Instr instr = operandsOnly(op, Op::TmaStore);
    instr.in.clear();
    instr.in.push_back(*use(store.getSrcMem()));
    instr.in.push_back(*use(store.getTmaDescriptor()));
    for (Value c : store.getCoordinates())
      instr.in.push_back(*use(c));
    into.body.push_back(std::move(instr));
    return true;
  }
  if (auto copy = llvm::dyn_cast<NVVM::CpAsyncOp>(op)) {
    // Operands: destination, source and, if given, the source size.
    Instr &instr = emit(from, into, op, Op::CpAsync);
    instr.imm = copy.getSize();
    return true;
  }
  if (llvm::isa<NVVM::CpAsyncCommitGroupOp>(op)) {
    emit(from, into, op, Op::CpAsyncCommit);
    return true;
  }
  if (auto wait = llvm::dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
    Instr &instr = emit(from, into, op, Op::CpAsyncWait);
    instr.imm = wait.getN();
    return true;
  }
  if (auto barrier = llvm::dyn_cast<NVVM::BarrierOp>(op)) {
    if (barrier.getReductionOp() || barrier.getRes())
      return fail(op, "a barrier with a reduction");
    if (!barrier.getBarrierId() && !barrier.getNumberOfThreads()) {
      emit(from, into, op, Op::Barrier);
      return true;
    }
    if (!barrier.getBarrierId() || !barrier.getNumberOfThreads())
      return fail(op, "a named barrier without both an id and a thread count");
    emit(from, into, op, Op::NamedBarrier);
    return true;
  }
  if (auto arrive = llvm::dyn_cast<NVVM::BarrierArriveOp>(op)) {
    if (!arrive.getBarrierId())
      return fail(op, "a bar.arrive of barrier 0");
    emit(from, into, op, Op::NamedBarrierArrive);
    return true;
  }
  if (llvm::isa<NVVM::CpAsyncBulkCommitGroupOp>(op)) {
    emit(from, into, op, Op::BulkCommit);
    return true;
  }
  if (auto wait = llvm::dyn_cast<NVVM::CpAsyncBulkWaitGroupOp>(op)) {
    Instr &instr = emit(from, into, op, Op::BulkWait);
    instr.imm = wait.getGroup();
    return true;
  }
  // A warpgroup runs in lockstep here: a warp's sync has nothing to do.
  // The simulator runs one grid at a time: griddepcontrol has no neighbour.
  if (llvm::isa<NVVM::FenceProxyOp, NVVM::FenceMbarrierInitOp, NVVM::SetMaxRegisterOp,
                NVVM::SyncWarpOp, NVVM::GriddepcontrolOp>(op)) {
    emit(from, into, op, Op::Nop);
    return true;
  }
  if (llvm::isa<LLVM::AddrSpaceCastOp>(op)) {
    emit(from, into, op, Op::PtrCast);
    return true;
  }
  if (std::optional<bool> decoded = decodeBlackwell(from, into, op))
    return *decoded;

  // Structured control flow.
  if (auto loop = llvm::dyn_cast<scf::ForOp>(op)) {
    // Results first: the body may not use them, but the slots must exist
    // before the body's instructions refer to its own values.
    Instr instr;
    instr.op = Op::For;
    instr.id = static_cast<uint32_t>(k.ops.size());
    k.ops.push_back(op);
    for (Value v : op->getOperands())
      instr.in.push_back(*use(v));
    instr.kind = classify(loop.getLowerBound().getType())->kind;
    instr.imm = loop.getUnsignedCmp() ? 1 : 0;
    std::optional<uint32_t> body = decodeRegion(op, loop.getRegion());
    if (!body)
      return false;
    instr.regions.push_back(*body);
    for (Value v : op->getResults())
      instr.out.push_back(define(v));
    k.blocks[blockId].body.push_back(std::move(instr));
    return true;
  }
  if (auto branch = llvm::dyn_cast<scf::IfOp>(op)) {
    Instr instr;
    instr.op = Op::If;
    instr.id = static_cast<uint32_t>(k.ops.size());
    k.ops.push_back(op);
    instr.in.push_back(*use(branch.getCondition()));
    std::optional<uint32_t> thenBlock = decodeRegion(op, branch.getThenRegion());
    if (!thenBlock)
      return false;
    instr.regions.push_back(*thenBlock);
    if (!branch.getElseRegion().empty()) {
      std::optional<uint32_t> elseBlock = decodeRegion(op, branch.getElseRegion());
      if (!elseBlock)
        return false;
      instr.regions.push_back(*elseBlock);
    }
    for (Value v : op->getResults())
      instr.out.push_back(define(v));
    k.blocks[blockId].body.push_back(std::move(instr));
    return true;
  }
  if (auto loop = llvm::dyn_cast<scf::WhileOp>(op)) {
    Instr instr;
    instr.op = Op::While;
    instr.id = static_cast<uint32_t>(k.ops.size());
    k.ops.push_back(op);
    for (Value v : op->getOperands())
      instr.in.push_back(*use(v));
    std::optional<uint32_t> before = decodeRegion(op, loop.getBefore());
    if (!before)
      return false;
    std::optional<uint32_t> after = decodeRegion(op, loop.getAfter());
    if (!after)
      return false;
    instr.regions = {*before, *after};
    for (Value v : op->getResults())
      instr.out.push_back(define(v));
    k.blocks[blockId].body.push_back(std::move(instr));
    return true;
  }
  if (auto region = llvm::dyn_cast<scf::ExecuteRegionOp>(op)) {
    Instr instr;
    instr.op = Op::ExecuteRegion;
    instr.id = static_cast<uint32_t>(k.ops.size());
    k.ops.push_back(op);
    std::optional<uint32_t> body = decodeRegion(op, region.getRegion());
    if (!body)
      return false;
    instr.regions.push_back(*body);
    for (Value v : op->getResults())
      instr.out.push_back(define(v));
    k.blocks[blockId].body.push_back(std::move(instr));
    return true;
  }
  return fail(op, "the simulator does not model '" + name.str() +
                      "'; add it to src/backends/cuda/sim (Decode.cpp and the executor)");
}

} // namespace

bool decodeKernel(::mlir::gpu::GPUFuncOp func, Kernel &kernel, std::string &error) {
  return Decoder(kernel, error).decodeFunc(func);
}

} // namespace pk::sim
