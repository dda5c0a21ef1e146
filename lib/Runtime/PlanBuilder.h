//===- PlanBuilder.h - From call arguments to a launch plan -----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The class behind attnc_plan_create, split by concern: Validate.cpp checks
// the call's arguments against the manifest (tensors, workspaces, the TMA
// rules of tensormapped tensors, overlaps, constraints), Plan.cpp computes
// what the launch needs (grid, workspace sizes, packed parameters, encoded
// tensormaps) and implements the plan half of the C API; SizeRule.cpp
// evaluates size rules from the symbols some of a call's tensors bind.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_PLANBUILDER_H
#define ATTNC_LIB_RUNTIME_PLANBUILDER_H

#include "RuntimeInternal.h"

namespace attnc::rt {

class PlanBuilder {
public:
  PlanBuilder(const attnc_kernel &k, attnc_plan &plan, int64_t numSMs)
      : k(k), plan(plan), numSMs(numSMs) {}

  attnc_status build(const attnc_tensor *tensors, size_t numTensors,
                     const attnc_scalar *scalars, size_t numScalars);
  /// The SM count the build used: the one given, or the driver's once it
  /// was asked (0 when no factor needed it).
  int64_t usedNumSMs() const { return numSMs; }
  /// The value of size rule R for the symbols that TENSORS bind, the first
  /// NUMTENSORS tensor and workspace arguments (SizeRule.cpp).
  attnc_status evaluateSizeRule(const SizeRule &r, const attnc_tensor *tensors,
                                size_t numTensors, int64_t &value);

  /// Binds the size symbols of the call's tensors and workspaces (all of
  /// them, in manifest order) as build does, checking nothing else.
  attnc_status bindSizes(const attnc_tensor *tensors, size_t numTensors);
  /// Binds the first COUNT tensor and workspace arguments' sizes (but
  /// UNBOUND, a size rule's own symbol), checking their shapes.
  attnc_status bindArguments(const attnc_tensor *tensors, size_t count,
                             const std::string &unbound);
  /// Whether the bound symbols meet every constraint of WHEN.
  bool meets(const std::vector<Constraint> &when) const;

private:
  const attnc_kernel &k;
  attnc_plan &plan;
  /// The SM count for num_sms factors; 0 until asked for (or given).
  int64_t numSMs;
  /// Symbol -> (value, where it was bound, e.g. "q.shape[0]").
  std::vector<std::pair<std::string, std::pair<int64_t, std::string>>> bound;
  /// Per parameter index: the tensor or workspace argument given for it.
  std::vector<const attnc_tensor *> argOf;
  /// Per parameter index of a workspace with a view: the view as a tensor
  /// (the workspace's pointer; the view's dtype, extents, packed strides),
  /// which its tensormaps describe. Sized once: tensors point into it.
  struct View {
    attnc_tensor t{};
    std::vector<int64_t> sizes, strides;
  };
  std::vector<View> views;
  /// What tensormap M describes: its tensor argument or workspace view.
  const attnc_tensor &mappedBy(const Param &m) const {
    return k.params[m.tensorIndex].kind == ATTNC_PARAM_WORKSPACE
               ? views[m.tensorIndex].t
               : *argOf[m.tensorIndex];
  }

  attnc_status refuse(const std::string &message) {
    return fail(ATTNC_ERROR_VALIDATION, k.name + ": " + message);
  }
  const std::pair<int64_t, std::string> *lookup(const std::string &sym) const {
    for (const auto &b : bound)
      if (b.first == sym)
        return &b.second;
    return nullptr;
  }

  // Validate.cpp.
  attnc_status checkCounts(size_t numTensors, size_t numScalars);
  attnc_status checkTensor(const Param &p, const attnc_tensor &t);
  attnc_status bindShape(const Param &p, const attnc_tensor &t,
                         const std::string &unbound);
  attnc_status checkWorkspaceShape(const Param &p, const attnc_tensor &t);
  attnc_status checkConstraints();
  /// Why the bound symbols break constraint C, or empty when they meet it
  /// (every symbol of C bound, as the manifest guarantees after binding).
  std::string violation(const Constraint &c) const;
  attnc_status checkWorkspaces();
  attnc_status checkWorkspaceViews();
  attnc_status checkExtents();
  attnc_status checkTensorMaps();

  // Plan.cpp.
  attnc_status resolveNumSMs(const std::string &what);
  attnc_status evaluate(const std::vector<Factor> &factors,
                        const std::string &what, uint64_t &value,
                        std::string &rule, bool &overflow);
  attnc_status computeGrid();
  attnc_status computeWorkspaceSizes();
  attnc_status layout();
  attnc_status pack(const attnc_scalar *scalars);
  attnc_status packInt(size_t index, const Param &p, int64_t v,
                       const std::string &what);
  attnc_status encodeTensorMap(size_t index, const Param &p);
};

/// The first variant of K (the manifest's `variants`) whose `when` the
/// sizes of the call's tensors meet, or null: none does, K has none, or the
/// tensors bind no sizes (K's own plan then refuses them).
const attnc_kernel *chooseVariant(const attnc_kernel &k,
                                  const attnc_tensor *tensors,
                                  size_t numTensors);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_PLANBUILDER_H
