//===- SymbolicShapes.h - sizes as products of argument dims ----*- C++ -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// A small shape inference over attnc graphs and the upstream ops around them
// (tensor, memref, scf, arith, gpu) in which every extent is a monomial: a
// constant times a product of symbols, one symbol per dynamic dimension of
// a function argument (or per index argument). It answers "how does the
// size of this value grow with the sizes of the inputs", which is what the
// no-S x S check and the intensity report both need: the (B, H, S_q, S_kv)
// score matrix is the product dim0(Q) dim1(Q) dim2(Q) dim2(K), and no input
// or output has that product in its size.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_ANALYSIS_SYMBOLICSHAPES_H
#define ATTNC_ANALYSIS_SYMBOLICSHAPES_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <string>

namespace attnc {

/// What a symbol stands for.
struct SymbolInfo {
  enum class Kind {
    /// A dynamic dimension of a shaped function argument.
    ArgumentDim,
    /// An index or integer function argument used as a size.
    IndexArgument,
    /// A size the analysis cannot express in the arguments (a loop
    /// induction variable, an affine.min, the result of an unknown op).
    Opaque,
  };
  Kind kind;
  /// Argument number (ArgumentDim, IndexArgument).
  unsigned argument = 0;
  /// Dimension of the argument (ArgumentDim).
  unsigned dim = 0;
  /// Rank of the argument (ArgumentDim): the size bindings of the report go
  /// by position within the rank.
  unsigned rank = 0;
  /// How diagnostics name it: "dim 2 of %arg0".
  std::string name;
};

/// `coeff` times the product of symbols raised to their powers. Extents of
/// the IR are monomials; so are element counts.
class Monomial {
public:
  Monomial() = default;
  static Monomial constant(int64_t c) {
    Monomial m;
    m.coeff = c;
    return m;
  }
  static Monomial symbol(unsigned id) {
    Monomial m;
    m.powers[id] = 1;
    return m;
  }

  Monomial operator*(const Monomial &other) const;
  bool operator==(const Monomial &other) const {
    return coeff == other.coeff && powers == other.powers;
  }

  int64_t getCoefficient() const { return coeff; }
  const std::map<unsigned, unsigned> &getPowers() const { return powers; }
  bool isConstant() const { return powers.empty(); }
  bool isConstant(int64_t c) const { return isConstant() && coeff == c; }

  /// True when every symbol of this monomial appears in `other` with at
  /// least the same power: this grows no faster than `other` (constants
  /// aside).
  bool symbolsDivide(const Monomial &other) const;

private:
  int64_t coeff = 1;
  std::map<unsigned, unsigned> powers;
};

/// One monomial per dimension.
using SymbolicShape = llvm::SmallVector<Monomial, 4>;

/// The product of the extents of `shape`.
Monomial getNumElements(llvm::ArrayRef<Monomial> shape);

/// Symbolic shapes of every shaped value (and symbolic values of index
/// values) of one function, computed once on construction.
///
/// Inference rules, in short: arguments get one symbol per dynamic
/// dimension; elementwise ops broadcast (the non-1 extent wins); casts,
/// unary ops, dropout, softmax and norms keep the input's shape; row
/// reductions set the last extent to 1; matmul takes batch dims and M from
/// lhs and N from rhs (honouring transposes); repeat_interleave multiplies
/// one extent; attention is [B, H, S_q, d_v] of Q and V; fusion bodies see
/// their inputs' shapes; tensor.empty / memref.alloc / gpu.alloc take their
/// SSA sizes; tensor.dim / memref.dim give the source's extent; arith.muli
/// multiplies; divisions and ceildivs by a positive constant are taken as
/// the dividend (an upper bound that grows at the same rate: ceildiv(S, 64)
/// tiles grow as S); scf.for / scf.forall results are their inits. Anything
/// else gets a fresh Opaque symbol, which callers treat as "unknown".
class ShapeAnalysis {
public:
  explicit ShapeAnalysis(mlir::FunctionOpInterface func);

  /// The shape of a ranked tensor or memref value.
  const SymbolicShape *getShape(mlir::Value value) const;
  /// The value of an index or integer value used as a size.
  std::optional<Monomial> getIndexValue(mlir::Value value) const;
  /// Element count of a shaped value.
  std::optional<Monomial> getNumElements(mlir::Value value) const;

  const SymbolInfo &getSymbol(unsigned id) const { return symbols[id]; }
  unsigned getNumSymbols() const { return symbols.size(); }
  /// True when `m` involves an Opaque symbol.
  bool isOpaque(const Monomial &m) const;

  /// "dim 0 of %arg0 x dim 2 of %arg1", or the integer when constant.
  std::string render(const Monomial &m) const;
  /// "[dim 0 of %arg0, 128, ...]".
  std::string render(llvm::ArrayRef<Monomial> shape) const;

  /// Shapes of what the function returns (first return-like terminator).
  llvm::ArrayRef<SymbolicShape> getResultShapes() const { return resultShapes; }
  mlir::FunctionOpInterface getFunction() const { return func; }

private:
  void visitBlock(mlir::Block &block);
  void visitOp(mlir::Operation *op);
  bool visitAttncOp(mlir::Operation *op);
  bool visitUpstreamOp(mlir::Operation *op);
  void setShape(mlir::Value value, SymbolicShape shape);
  /// Shape from the type, with fresh Opaque symbols for dynamic extents.
  SymbolicShape opaqueShape(mlir::Value value);
  /// Shape from a type's static extents and SSA sizes for the dynamic ones.
  SymbolicShape shapeFromSizes(mlir::Value value, mlir::ValueRange sizes);
  Monomial indexOrOpaque(mlir::Value value);
  unsigned newSymbol(SymbolInfo info);

  mlir::FunctionOpInterface func;
  llvm::SmallVector<SymbolInfo> symbols;
  llvm::DenseMap<mlir::Value, SymbolicShape> shapes;
  llvm::DenseMap<mlir::Value, Monomial> indexValues;
  llvm::SmallVector<SymbolicShape> resultShapes;
};

} // namespace attnc

#endif // ATTNC_ANALYSIS_SYMBOLICSHAPES_H
