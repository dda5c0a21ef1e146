//===- KernelABI.cpp - the launch contract: struct, attribute, JSON -------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Builds the typed #attnc.launch_contract from the KernelABI a kernel
// builder filled, and writes a contract as the JSON object of one manifest
// entry (version 2). The IR carries only the attribute; JSON is produced
// once, when attnc-compile writes the manifest.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/KernelABI.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace attnc;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// KernelABI -> LaunchContractAttr
//===----------------------------------------------------------------------===//

namespace {
/// Builds the parts with getChecked, so a malformed KernelABI is reported
/// through the caller's diagnostic instead of asserting.
struct ContractBuilder {
  MLIRContext *ctx;
  function_ref<InFlightDiagnostic()> emitError;
  Builder b{ctx};

  GridFactorAttr factor(const GridFactor &f) {
    if (f.device == GridFactor::Device::NumSMs)
      return GridFactorAttr::getChecked(emitError, ctx, FactorKind::device,
                                        StringRef(), int64_t(1),
                                        DeviceValue::num_sms, StringRef());
    if (f.sym.empty())
      return GridFactorAttr::getChecked(emitError, ctx, FactorKind::constant,
                                        StringRef(), f.value,
                                        DeviceValue::num_sms, StringRef());
    if (f.ceilDiv == 1 && f.plus.empty())
      return GridFactorAttr::getChecked(emitError, ctx, FactorKind::symbol,
                                        StringRef(f.sym), int64_t(1),
                                        DeviceValue::num_sms, StringRef());
    return GridFactorAttr::getChecked(emitError, ctx, FactorKind::ceil_div,
                                      StringRef(f.sym), f.ceilDiv,
                                      DeviceValue::num_sms, StringRef(f.plus));
  }

  FailureOr<SmallVector<GridFactorAttr>>
  factors(const std::vector<GridFactor> &fs) {
    SmallVector<GridFactorAttr> out;
    for (const GridFactor &f : fs) {
      GridFactorAttr a = factor(f);
      if (!a)
        return failure();
      out.push_back(a);
    }
    return out;
  }

  /// A dtype name the contract does not know becomes a null type, which
  /// the parameter's verifier reports with the parameter's name.
  Type dtype(const std::string &name) { return parseContractDType(ctx, name); }

  SmallVector<Attribute> shapeAttrs(const std::vector<ABIDim> &dims) {
    SmallVector<Attribute> shape;
    for (const ABIDim &d : dims)
      shape.push_back(std::holds_alternative<int64_t>(d)
                          ? Attribute(b.getI64IntegerAttr(std::get<0>(d)))
                          : Attribute(b.getStringAttr(std::get<1>(d))));
    return shape;
  }

  Attribute param(const ABIParam &p) {
    switch (p.kind) {
    case ABIParam::Kind::Tensor: {
      SmallVector<Attribute> shape = shapeAttrs(p.shape);
      if (p.role != "input" && p.role != "output") {
        emitError() << "tensor parameter '" << p.name << "' has role '"
                    << p.role << "'; it must be input or output";
        return {};
      }
      return TensorParamAttr::getChecked(
          emitError, ctx, StringRef(p.name), dtype(p.dtype),
          ArrayRef<Attribute>(shape),
          p.role == "output" ? TensorRole::output : TensorRole::input, p.align,
          p.rowAlign);
    }
    case ABIParam::Kind::Size:
      return SizeParamAttr::getChecked(emitError, ctx, StringRef(p.name),
                                       dtype(p.dtype));
    case ABIParam::Kind::Stride:
      return StrideParamAttr::getChecked(emitError, ctx, StringRef(p.name),
                                         dtype(p.dtype), StringRef(p.tensor),
                                         p.dim);
    case ABIParam::Kind::Scalar:
      return ScalarParamAttr::getChecked(emitError, ctx, StringRef(p.name),
                                         dtype(p.dtype));
    case ABIParam::Kind::TensorMap: {
      std::optional<OOBFill> fill = symbolizeOOBFill(p.oobFill);
      if (!fill) {
        emitError() << "tensormap parameter '" << p.name << "' has oob_fill '"
                    << p.oobFill << "'; it must be zero or nan";
        return {};
      }
      return TensorMapParamAttr::getChecked(
          emitError, ctx, StringRef(p.name), StringRef(p.tensor),
          ArrayRef<int64_t>(p.box), p.swizzle, *fill);
    }
    case ABIParam::Kind::Workspace: {
      FailureOr<SmallVector<GridFactorAttr>> bytes = factors(p.bytes);
      if (failed(bytes))
        return {};
      SmallVector<Attribute> view = shapeAttrs(p.viewShape);
      return WorkspaceParamAttr::getChecked(
          emitError, ctx, StringRef(p.name), ArrayRef<GridFactorAttr>(*bytes),
          p.zeroInit, p.viewDtype.empty() ? Type() : dtype(p.viewDtype),
          ArrayRef<Attribute>(view));
    }
    }
    return {};
  }

  ConstraintAttr constraint(const ABIConstraint &c) {
    ConstraintKind kind =
        c.kind == ABIConstraint::Kind::Divisible ? ConstraintKind::divisible
        : c.kind == ABIConstraint::Kind::Equal   ? ConstraintKind::equal
        : c.kind == ABIConstraint::Kind::Min     ? ConstraintKind::min
        : c.kind == ABIConstraint::Kind::Max     ? ConstraintKind::max
        : c.kind == ABIConstraint::Kind::Ratio   ? ConstraintKind::ratio
                                                 : ConstraintKind::at_most;
    return ConstraintAttr::getChecked(emitError, ctx, kind, StringRef(c.lhs),
                                      StringRef(c.rhs), c.value);
  }

  SizeRuleAttr sizeRule(const ABISizeRule &r) {
    FailureOr<SmallVector<GridFactorAttr>> tiles = factors(r.kvTiles);
    if (failed(tiles))
      return {};
    return SizeRuleAttr::getChecked(
        emitError, ctx, SizeRuleKind::kv_splits, StringRef(r.symbol),
        ArrayRef<GridFactorAttr>(*tiles), r.max, r.ctasPerSM);
  }

  /// "true"/"false", integers and floats keep their JSON type.
  Attribute attrValue(StringRef text) {
    if (text == "true" || text == "false")
      return b.getBoolAttr(text == "true");
    int64_t i;
    if (!text.getAsInteger(10, i))
      return b.getI64IntegerAttr(i);
    double d;
    if (!text.getAsDouble(d))
      return b.getF64FloatAttr(d);
    return b.getStringAttr(text);
  }
};
} // namespace

LaunchContractAttr
attnc::buildLaunchContract(MLIRContext *ctx, const KernelABI &abi,
                           function_ref<InFlightDiagnostic()> emitError) {
  auto fallback = [ctx] { return mlir::emitError(UnknownLoc::get(ctx)); };
  if (!emitError)
    emitError = fallback;
  ContractBuilder cb{ctx, emitError};
  SmallVector<Attribute> params;
  for (const ABIParam &p : abi.params) {
    Attribute a = cb.param(p);
    if (!a)
      return {};
    params.push_back(a);
  }
  SmallVector<GridFactorAttr> grid[3];
  for (int d = 0; d < 3; ++d) {
    FailureOr<SmallVector<GridFactorAttr>> fs = cb.factors(abi.grid[d]);
    if (failed(fs))
      return {};
    grid[d] = std::move(*fs);
  }
  SmallVector<ConstraintAttr> constraints;
  for (const ABIConstraint &c : abi.constraints) {
    ConstraintAttr a = cb.constraint(c);
    if (!a)
      return {};
    constraints.push_back(a);
  }
  SmallVector<SizeRuleAttr> sizeRules;
  for (const ABISizeRule &r : abi.sizeRules) {
    SizeRuleAttr a = cb.sizeRule(r);
    if (!a)
      return {};
    sizeRules.push_back(a);
  }
  SmallVector<KernelVariantAttr> variants;
  for (const ABIVariant &v : abi.variants) {
    SmallVector<ConstraintAttr> when;
    for (const ABIConstraint &c : v.when) {
      ConstraintAttr a = cb.constraint(c);
      if (!a)
        return {};
      when.push_back(a);
    }
    KernelVariantAttr a = KernelVariantAttr::getChecked(
        emitError, ctx, StringRef(v.kernel), ArrayRef<ConstraintAttr>(when));
    if (!a)
      return {};
    variants.push_back(a);
  }
  SmallVector<NamedAttribute> attrs;
  for (const auto &[k, v] : abi.attrs)
    attrs.push_back(cb.b.getNamedAttr(k, cb.attrValue(v)));
  return LaunchContractAttr::getChecked(
      emitError, ctx, StringRef(abi.name), StringRef(abi.kind),
      ArrayRef<Attribute>(params), ArrayRef<GridFactorAttr>(grid[0]),
      ArrayRef<GridFactorAttr>(grid[1]), ArrayRef<GridFactorAttr>(grid[2]),
      ArrayRef<int64_t>(abi.block), abi.dynamicSharedMemoryBytes,
      ArrayRef<ConstraintAttr>(constraints), ArrayRef<SizeRuleAttr>(sizeRules),
      cb.b.getDictionaryAttr(attrs), StringRef(abi.fallback),
      StringRef(abi.unsplit), ArrayRef<KernelVariantAttr>(variants),
      abi.programmaticLaunch);
}

//===----------------------------------------------------------------------===//
// LaunchContractAttr -> JSON
//===----------------------------------------------------------------------===//

static json::Value dtypeToJSON(Type t) {
  return contractDTypeName(t).value_or("?").str();
}

static json::Value factorToJSON(GridFactorAttr f) {
  switch (f.getKind()) {
  case FactorKind::constant:
    return f.getValue();
  case FactorKind::symbol:
    return f.getSymbol().str();
  case FactorKind::ceil_div: {
    json::Object o{{"sym", f.getSymbol().str()}, {"ceil_div", f.getValue()}};
    if (!f.getPlus().empty())
      o["plus"] = f.getPlus().str();
    return o;
  }
  case FactorKind::device:
    return json::Object{{"device", stringifyDeviceValue(f.getDevice()).str()}};
  }
  return nullptr;
}

static json::Array factorsToJSON(ArrayRef<GridFactorAttr> fs) {
  json::Array out;
  for (GridFactorAttr f : fs)
    out.push_back(factorToJSON(f));
  return out;
}

static json::Array shapeToJSON(ArrayRef<Attribute> dims) {
  json::Array shape;
  for (Attribute d : dims) {
    if (auto i = dyn_cast<IntegerAttr>(d))
      shape.push_back(i.getInt());
    else
      shape.push_back(cast<StringAttr>(d).getValue().str());
  }
  return shape;
}

static json::Value paramToJSON(Attribute a) {
  auto p = cast<KernelParamAttrInterface>(a);
  json::Object o{{"name", p.getName().str()}, {"kind", p.getKindName().str()}};
  llvm::TypeSwitch<Attribute>(a)
      .Case([&](TensorParamAttr t) {
        o["dtype"] = dtypeToJSON(t.getDtype());
        o["shape"] = shapeToJSON(t.getShape());
        o["role"] = stringifyTensorRole(t.getRole()).str();
        o["align"] = t.getAlign();
        o["contiguous_last"] = true;
        if (t.getRowAlign() > 0)
          o["row_align"] = t.getRowAlign();
      })
      .Case([&](SizeParamAttr s) { o["dtype"] = dtypeToJSON(s.getDtype()); })
      .Case([&](StrideParamAttr s) {
        o["dtype"] = dtypeToJSON(s.getDtype());
        o["tensor"] = s.getTensor().str();
        o["dim"] = s.getDim();
      })
      .Case([&](ScalarParamAttr s) { o["dtype"] = dtypeToJSON(s.getDtype()); })
      .Case([&](TensorMapParamAttr m) {
        o["tensor"] = m.getTensor().str();
        o["box"] = json::Array(m.getBox());
        o["swizzle"] = m.getSwizzle();
        o["oob_fill"] = stringifyOOBFill(m.getOobFill()).str();
      })
      .Case([&](WorkspaceParamAttr w) {
        o["bytes"] = factorsToJSON(w.getBytes());
        o["zero_init"] = w.getZeroInit();
        if (w.getViewType())
          o["view"] = json::Object{{"dtype", dtypeToJSON(w.getViewType())},
                                   {"shape", shapeToJSON(w.getViewShape())}};
      });
  return json::Value(std::move(o));
}

static json::Value constraintToJSON(ConstraintAttr c) {
  std::string kind = stringifyConstraintKind(c.getKind()).str();
  if (c.getKind() == ConstraintKind::min || c.getKind() == ConstraintKind::max)
    return json::Object{
        {"kind", kind}, {"sym", c.getLhs().str()}, {"value", c.getValue()}};
  json::Object o{
      {"kind", kind}, {"lhs", c.getLhs().str()}, {"rhs", c.getRhs().str()}};
  if (c.getKind() == ConstraintKind::ratio ||
      c.getKind() == ConstraintKind::at_most)
    o["value"] = c.getValue();
  return o;
}

static json::Value sizeRuleToJSON(SizeRuleAttr r) {
  return json::Object{{"kind", stringifySizeRuleKind(r.getKind()).str()},
                      {"symbol", r.getSymbol().str()},
                      {"kv_tiles", factorsToJSON(r.getKvTiles())},
                      {"max", r.getMaxValue()},
                      {"ctas_per_sm", r.getCtasPerSM()}};
}

static json::Value attrToJSON(Attribute a) {
  if (auto b = dyn_cast<BoolAttr>(a))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(a))
    return s.getValue().str();
  return nullptr;
}

json::Object attnc::launchContractToJSONObject(LaunchContractAttr c) {
  json::Array params, grid, constraints;
  for (Attribute p : c.getParams())
    params.push_back(paramToJSON(p));
  for (unsigned d = 0; d < 3; ++d)
    grid.push_back(factorsToJSON(c.getGrid(d)));
  for (ConstraintAttr k : c.getConstraints())
    constraints.push_back(constraintToJSON(k));
  json::Object attrs;
  if (c.getAttrs())
    for (NamedAttribute n : c.getAttrs())
      attrs[n.getName().getValue()] = attrToJSON(n.getValue());
  json::Object entry{{"name", c.getKernel().str()},
                     {"kind", c.getKind().str()},
                     {"block", json::Array(c.getBlock())},
                     {"grid", std::move(grid)},
                     {"dynamic_shared_memory_bytes", c.getSharedMemory()},
                     {"params", std::move(params)},
                     {"constraints", std::move(constraints)},
                     {"attrs", std::move(attrs)}};
  if (!c.getSizeRules().empty()) {
    json::Array rules;
    for (SizeRuleAttr r : c.getSizeRules())
      rules.push_back(sizeRuleToJSON(r));
    entry["size_rules"] = std::move(rules);
  }
  if (!c.getFallback().empty())
    entry["fallback"] = c.getFallback().str();
  if (!c.getUnsplit().empty())
    entry["unsplit"] = c.getUnsplit().str();
  if (!c.getVariants().empty()) {
    json::Array variants;
    for (KernelVariantAttr v : c.getVariants()) {
      json::Array when;
      for (ConstraintAttr k : v.getWhen())
        when.push_back(constraintToJSON(k));
      variants.push_back(json::Object{{"kernel", v.getKernel().str()},
                                      {"when", std::move(when)}});
    }
    entry["variants"] = std::move(variants);
  }
  if (c.getProgrammaticLaunch())
    entry["programmatic_launch"] = true;
  return entry;
}

std::string attnc::launchContractToJSON(LaunchContractAttr c) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << json::Value(launchContractToJSONObject(c));
  return s;
}
