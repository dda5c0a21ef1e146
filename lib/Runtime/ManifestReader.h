//===- ManifestReader.h - The manifest.json reader, shared ------*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The reader behind attnc_module_load and attnc_manifest_parse, split by
// concern: Manifest.cpp reads the module and its kernels (launch
// configuration, grid, constraints, size rules) and checks the
// cross-references, ManifestParams.cpp reads the parameters and factors. A host
// can hand the runtime any text, so the reader treats it as hostile: every
// integer is range-checked before it is stored, every index the manifest
// controls is checked against what it indexes, and the nesting depth and the
// size of the text are bounded before the (recursive) JSON parser sees them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_MANIFESTREADER_H
#define ATTNC_LIB_RUNTIME_MANIFESTREADER_H

#include "RuntimeInternal.h"

#include "llvm/Support/JSON.h"

#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>

namespace attnc::rt {

/// Larger manifests are refused unread: attnc-compile writes a few KiB per
/// kernel, and the parsed tree costs several times the text.
constexpr size_t kMaxManifestBytes = size_t(64) << 20;
/// llvm::json::parse recurses once per array or object level; a manifest
/// needs 6 (attrs may add a few), so 64 is generous and keeps the stack safe.
constexpr size_t kMaxManifestDepth = 64;
/// Bounds the per-call work over a tensor's dimensions and keeps the rank in
/// the int32_t of attnc_tensor.rank.
constexpr int64_t kMaxTensorRank = 64;
/// CUDA's blockDim limits on every GPU so far.
constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};
constexpr int64_t kMaxBlockThreads = 1024;
/// 227 KiB: the largest opt-in dynamic shared memory per block of any CUDA
/// GPU up to sm_90 and sm_100.
constexpr int64_t kMaxDynamicSharedMemoryBytes = 232448;

/// "a string", "an array", ... for error messages.
const char *describe(const llvm::json::Value &v);

/// The index of the parameter of KIND named NAME in K, or -1.
int64_t findParam(const attnc_kernel &k, const std::string &name,
                  attnc_param_kind kind);
/// The index of tensor parameter NAME in K, or -1.
inline int64_t findTensor(const attnc_kernel &k, const std::string &name) {
  return findParam(k, name, ATTNC_PARAM_TENSOR);
}

/// The index in M of the kernel named NAME, or M.kernels.size(); KNOWN
/// lists every kernel's name, for the message of a miss.
size_t findKernel(const attnc_module &m, const std::string &name,
                  std::string &known);

/// Walks the JSON tree, remembering the first error with its path.
class ManifestReader {
public:
  std::string error;

  bool failAt(const std::string &path, const std::string &message) {
    if (error.empty())
      error = path + ": " + message;
    return false;
  }

  // Scalar fields (Manifest.cpp).
  const llvm::json::Value *require(const llvm::json::Object &o,
                                   const std::string &path, const char *key);
  /// O[KEY] as an array, or null after a diagnostic at PATH.KEY.
  const llvm::json::Array *requireArray(const llvm::json::Object &o,
                                        const std::string &path,
                                        const char *key);
  bool getString(const llvm::json::Object &o, const std::string &path,
                 const char *key, std::string &out, bool required);
  /// An integer in [MIN, MAX]; callers that narrow it pass the narrow type's
  /// bound, or a tighter semantic one.
  bool getInt(const llvm::json::Value &v, const std::string &path, int64_t &out,
              int64_t min, int64_t max = std::numeric_limits<int64_t>::max());
  bool getOptInt(const llvm::json::Object &o, const std::string &path,
                 const char *key, int64_t &out, int64_t min,
                 int64_t max = std::numeric_limits<int64_t>::max());
  bool getOptBool(const llvm::json::Object &o, const std::string &path,
                  const char *key, bool &out);
  bool getDType(const llvm::json::Object &o, const std::string &path,
                std::initializer_list<attnc_dtype> allowed, attnc_dtype dflt,
                attnc_dtype &out);
  bool getSymbol(const llvm::json::Object &o, const std::string &path,
                 const char *key, std::string &out);

  // Parameters and factors (ManifestParams.cpp).
  bool parseParam(const llvm::json::Value &v, const std::string &path,
                  Param &p);
  bool parseTensor(const llvm::json::Object &o, const std::string &path,
                   Param &p);
  bool parseTensorMap(const llvm::json::Object &o, const std::string &path,
                      Param &p);
  bool parseWorkspace(const llvm::json::Object &o, const std::string &path,
                      Param &p);
  /// The "shape" array of `o` (a tensor's, a workspace view's).
  bool parseShape(const llvm::json::Object &o, const std::string &path,
                  std::vector<Dim> &shape);
  bool parseFactor(const llvm::json::Value &v, const std::string &path,
                   Factor &f);
  bool checkStride(const std::string &path, const attnc_kernel &k, Param &p);
  bool checkTensorMap(const std::string &path, const attnc_kernel &k, Param &p);
  /// F, the fallback (or, with ROLE "variant", a variant) of K, takes the
  /// arguments K takes (PATH is K's `fallback` or `variants` key).
  bool checkFallbackParams(const std::string &path, const attnc_kernel &k,
                           const attnc_kernel &f,
                           const char *role = "fallback");
  /// The product of FACTORS' constants must not exceed MAX (what a plan
  /// could ever reach, whatever the symbols are bound to).
  bool checkConstantProduct(const std::vector<Factor> &factors,
                            const std::string &path, int64_t max,
                            const std::string &what);

  // Kernels and the module (Manifest.cpp).
  bool parseBlock(const llvm::json::Object &o, const std::string &path,
                  attnc_kernel &k);
  bool parseGrid(const llvm::json::Value &v, const std::string &path,
                 attnc_kernel &k);
  bool parseConstraint(const llvm::json::Value &v, const std::string &path,
                       Constraint &c);
  /// Each constraint of CS (at PATH[i]) appended to OUT.
  bool parseConstraints(const llvm::json::Array &cs, const std::string &path,
                        std::vector<Constraint> &out);
  bool parseSizeRule(const llvm::json::Value &v, const std::string &path,
                     SizeRule &r);
  bool checkSymbols(const std::string &path, const attnc_kernel &k,
                    const std::set<std::string> &symbols);
  bool parseKernel(const llvm::json::Value &v, const std::string &path,
                   attnc_kernel &k);
  bool checkKernel(const std::string &path, attnc_kernel &k);
  /// The index in M of the kernel NAME that K names as its ROLE
  /// ("fallback", "variant") at PATH: another kernel of M; none after
  /// failing ("names itself", "is not a kernel of this module").
  std::optional<size_t> namedKernel(const attnc_module &m,
                                    const attnc_kernel &k,
                                    const std::string &name,
                                    const std::string &path, const char *role);
  bool resolveFallbacks(attnc_module &m);
  bool resolveUnsplit(attnc_module &m);

  // Size variants (ManifestVariants.cpp).
  bool parseVariants(const llvm::json::Value &v, const std::string &path,
                     attnc_kernel &k);
  bool resolveVariants(attnc_module &m);
  bool parseModule(const llvm::json::Value &v, attnc_module &m);
};

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_MANIFESTREADER_H
