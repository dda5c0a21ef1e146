//===- KernelABI.cpp - serialization of the launch contract ---------------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Writes a KernelABI as the JSON object of one manifest entry (docs/abi.md).
// The conversion to GPU stores it on each kernel; attnc-compile adds the
// file names and writes the manifest.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/KernelABI.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace attnc;
namespace json = llvm::json;

static json::Value dimToJSON(const ABIDim &d) {
  if (auto *i = std::get_if<int64_t>(&d))
    return *i;
  return std::get<std::string>(d);
}

static json::Value paramToJSON(const ABIParam &p) {
  json::Object o{{"name", p.name}, {"dtype", p.dtype}};
  switch (p.kind) {
  case ABIParam::Kind::Tensor: {
    json::Array shape;
    for (const ABIDim &d : p.shape)
      shape.push_back(dimToJSON(d));
    o["kind"] = "tensor";
    o["shape"] = std::move(shape);
    o["role"] = p.role;
    o["align"] = p.align;
    o["contiguous_last"] = true;
    if (p.rowAlign > 0)
      o["row_align"] = p.rowAlign;
    break;
  }
  case ABIParam::Kind::Size:
    o["kind"] = "size";
    break;
  case ABIParam::Kind::Stride:
    o["kind"] = "stride";
    o["tensor"] = p.tensor;
    o["dim"] = p.dim;
    break;
  case ABIParam::Kind::Scalar:
    o["kind"] = "scalar";
    break;
  }
  return json::Value(std::move(o));
}

/// Manifest attrs are typed JSON: numbers and booleans stay what they are.
static json::Value attrToJSON(const std::string &text) {
  if (text == "true" || text == "false")
    return text == "true";
  if (llvm::Expected<json::Value> v = json::parse(text))
    return std::move(*v);
  else
    llvm::consumeError(v.takeError());
  return text;
}

std::string attnc::kernelABIToJSON(const KernelABI &abi) {
  json::Array params, grid;
  for (const ABIParam &p : abi.params)
    params.push_back(paramToJSON(p));
  for (const auto &dim : abi.grid) {
    json::Array factors;
    for (const GridFactor &f : dim) {
      if (f.sym.empty())
        factors.push_back(f.value);
      else if (f.ceilDiv == 1)
        factors.push_back(f.sym);
      else
        factors.push_back(
            json::Object{{"sym", f.sym}, {"ceil_div", f.ceilDiv}});
    }
    grid.push_back(std::move(factors));
  }
  json::Object attrs;
  for (const auto &[k, v] : abi.attrs)
    attrs[k] = attrToJSON(v);
  json::Object o{
      {"name", abi.name},
      {"kind", abi.kind},
      {"block", json::Array{abi.block[0], abi.block[1], abi.block[2]}},
      {"grid", std::move(grid)},
      {"dynamic_shared_memory_bytes", abi.dynamicSharedMemoryBytes},
      {"params", std::move(params)},
      {"attrs", std::move(attrs)}};
  std::string s;
  llvm::raw_string_ostream os(s);
  os << json::Value(std::move(o));
  return s;
}
