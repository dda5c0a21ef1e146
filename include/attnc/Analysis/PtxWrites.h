//===- PtxWrites.h - which PTX instructions write global memory -*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Kernels may carry PTX as text (llvm.inline_asm, nvvm.inline_ptx). The
// no-S x S check must see the global writes in it, so this classifies each
// instruction of such text by its mnemonic and finds its destination
// address operand.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_PTXWRITES_H
#define ATTNC_ANALYSIS_PTXWRITES_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace attnc {

/// One PTX instruction that writes (or may write) global memory.
struct PtxGlobalWrite {
  /// The instruction's mnemonic, e.g. "st.global.v4.f32".
  std::string mnemonic;
  /// The asm operand number (`$N`) of its destination: the address of a
  /// store, reduction or atomic, or the tensor map of a TMA store. nullopt
  /// when the destination is not an operand (a register or symbol of the
  /// asm text itself) and so cannot be traced.
  std::optional<unsigned> operand;
  /// True when the destination is a tensor map (cp.async.bulk.tensor and
  /// cp.reduce.async.bulk.tensor to global memory).
  bool viaTensorMap = false;
};

/// The instructions of `ptx` that write global memory, in order. Writes are
/// (with `.global` or no state space, i.e. generic addressing, which may
/// reach global memory):
///  - st (not st.async / st.bulk, which write shared memory), red, atom;
///  - cp.async.bulk[.tensor] and cp.reduce.async.bulk[.tensor] whose
///    destination (the first state space) is .global, except prefetches;
///  - multimem.* except multimem.ld_reduce;
///  - tensormap.replace and tensormap.cp_fenceproxy into global memory.
/// Everything else (mov, ld, cvt, ex2, mma, wgmma, ldmatrix, stmatrix,
/// setmaxnreg, bar, fence, mbarrier, st.shared, ...) writes no global
/// memory. Directives (`.reg ...`), labels, predicates (`@p`), braces and
/// comments are skipped.
llvm::SmallVector<PtxGlobalWrite> findPtxGlobalWrites(llvm::StringRef ptx);

} // namespace attnc

#endif // ATTNC_ANALYSIS_PTXWRITES_H
