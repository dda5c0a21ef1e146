//===- PtxWrites.cpp - which PTX instructions write global memory ---------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A small PTX statement scanner: enough to split inline asm into
// instructions, read each mnemonic's state spaces and find the destination
// operand. It does not validate PTX; ptxas does that later.
//
//===----------------------------------------------------------------------===//

#include "attnc/Analysis/PtxWrites.h"

#include "llvm/ADT/StringExtras.h"

using namespace attnc;
using llvm::StringRef;

/// The text without // and /* */ comments.
static std::string stripComments(StringRef ptx) {
  std::string out;
  for (size_t i = 0; i < ptx.size(); ++i) {
    if (ptx.substr(i).starts_with("//")) {
      i = ptx.find('\n', i);
      if (i == StringRef::npos)
        break;
    } else if (ptx.substr(i).starts_with("/*")) {
      i = ptx.find("*/", i);
      if (i == StringRef::npos)
        break;
      ++i;
      continue;
    }
    out.push_back(ptx[i]);
  }
  return out;
}

static bool isStateSpace(StringRef part) {
  return part == "global" || part == "shared" || part == "local" ||
         part == "param" || part == "const" || part.starts_with("shared::") ||
         part.starts_with("param::");
}

/// The first state space among the mnemonic's parts, "" when there is none
/// (generic addressing).
static StringRef firstStateSpace(llvm::ArrayRef<StringRef> parts) {
  for (StringRef p : parts.drop_front())
    if (isStateSpace(p))
      return p;
  return "";
}

namespace {
enum class Dest { None, Address, TensorMap };
} // namespace

/// Whether and how the instruction with these mnemonic parts writes global
/// memory (the rules listed in PtxWrites.h).
static Dest classify(llvm::ArrayRef<StringRef> parts) {
  StringRef base = parts.front();
  StringRef space = firstStateSpace(parts);
  auto has = [&](StringRef p) { return llvm::is_contained(parts, p); };
  bool globalOrGeneric = space.empty() || space == "global";
  if (base == "st")
    return !has("async") && !has("bulk") && globalOrGeneric ? Dest::Address
                                                            : Dest::None;
  if (base == "red" || base == "atom") {
    // red.async without a state space targets shared::cluster.
    if (has("async"))
      return space == "global" ? Dest::Address : Dest::None;
    return globalOrGeneric ? Dest::Address : Dest::None;
  }
  if (base == "multimem")
    return parts.size() > 1 && parts[1] == "ld_reduce" ? Dest::None
                                                       : Dest::Address;
  if (base == "cp") {
    bool bulk =
        parts.size() > 2 && ((parts[1] == "async" && parts[2] == "bulk") ||
                             (parts[1] == "reduce" && parts.size() > 3 &&
                              parts[2] == "async" && parts[3] == "bulk"));
    if (!bulk || has("prefetch") || space != "global")
      return Dest::None;
    return has("tensor") ? Dest::TensorMap : Dest::Address;
  }
  if (base == "tensormap") {
    if (parts.size() > 1 && parts[1] == "replace")
      return globalOrGeneric ? Dest::Address : Dest::None;
    return space == "global" ? Dest::Address : Dest::None;
  }
  return Dest::None;
}

/// The `$N` (or `${N}`, `${N:mod}`) at the start of `s`, if any.
static std::optional<unsigned> placeholder(StringRef s) {
  s = s.ltrim();
  if (!s.consume_front("$"))
    return std::nullopt;
  s.consume_front("{");
  unsigned n;
  StringRef digits = s.take_while(llvm::isDigit);
  if (digits.empty() || digits.getAsInteger(10, n))
    return std::nullopt;
  return n;
}

llvm::SmallVector<PtxGlobalWrite> attnc::findPtxGlobalWrites(StringRef ptx) {
  llvm::SmallVector<PtxGlobalWrite> writes;
  std::string text = stripComments(ptx);
  llvm::SmallVector<StringRef> statements;
  StringRef(text).split(statements, ';');
  for (StringRef st : statements) {
    // Scopes, labels and predicates in front of the instruction.
    for (bool changed = true; changed;) {
      StringRef before = st;
      st = st.ltrim().ltrim("{}").ltrim();
      if (st.starts_with("@"))
        st = st.drop_until(llvm::isSpace);
      size_t colon = st.find(':');
      StringRef head = st.take_until(llvm::isSpace);
      if (colon != StringRef::npos && head.ends_with(":") &&
          !head.contains("::"))
        st = st.drop_front(head.size());
      changed = st != before;
    }
    if (st.empty() || st.starts_with("."))
      continue;
    StringRef mnemonic = st.take_until(llvm::isSpace);
    llvm::SmallVector<StringRef> parts;
    mnemonic.split(parts, '.');
    Dest dest = classify(parts);
    if (dest == Dest::None)
      continue;
    PtxGlobalWrite w;
    w.mnemonic = mnemonic.str();
    w.viaTensorMap = dest == Dest::TensorMap;
    // The destination is the first bracketed operand: `[addr]`, or
    // `[tensorMap, {coords}]` for TMA.
    StringRef operands = st.drop_front(mnemonic.size());
    size_t open = operands.find('[');
    if (open != StringRef::npos)
      w.operand = placeholder(operands.drop_front(open + 1));
    writes.push_back(std::move(w));
  }
  return writes;
}
