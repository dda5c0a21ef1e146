//===- attnc_opt_fuzzer.cpp - libFuzzer target over the attnc compiler ----===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// One input is MLIR text. It is parsed and verified with every dialect the
// tools know; when it verifies, the intensity report and the whole attnc
// pipeline (fusion, online softmax, the no-S x S check, the GPU conversion
// and the lowering to NVVM; with ATTNC_FUZZ_BINARY=isa also the NVPTX
// back-end to PTX) run on it. Diagnostics are expected and swallowed: the
// property checked is that nothing crashes, aborts, trips a sanitizer or
// hangs (libFuzzer's -timeout) on any input. docs/fuzzing.md says how to
// run it.
//
// With ATTNC_FUZZ_STATS set, the counts of inputs that parsed, verified,
// reached the GPU conversion and produced kernels are printed at exit: the
// campaign's evidence that the deep layers were exercised.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attnc/Transforms/Passes.h"
#include "attnc/InitAll/InitAll.h"
#include "attnc/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/xxhash.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace mlir;

namespace {
struct Stats {
  uint64_t inputs = 0, excluded = 0, parsed = 0, verified = 0, converted = 0,
           kernels = 0;
  ~Stats() {
    if (std::getenv("ATTNC_FUZZ_STATS"))
      std::fprintf(stderr,
                   "attnc_opt_fuzzer: %llu inputs, %llu parsed, %llu "
                   "verified, %llu reached the GPU conversion, %llu gave "
                   "kernels, %llu skipped (upstream crash signatures)\n",
                   (unsigned long long)inputs, (unsigned long long)parsed,
                   (unsigned long long)verified, (unsigned long long)converted,
                   (unsigned long long)kernels, (unsigned long long)excluded);
  }
};
Stats stats;

/// Counts the runs that get as far as the GPU conversion.
struct ConversionCounter : public PassInstrumentation {
  void runBeforePass(Pass *pass, Operation *) override {
    if (pass->getArgument() == "attnc-convert-to-gpu")
      ++stats.converted;
  }
};

DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    attnc::registerAllDialects(*reg);
    return reg;
  }();
  return *r;
}
} // namespace

/// Valid graphs to restart mutation chains from: every file of the
/// directory ATTNC_FUZZ_BASES names (scripts/fuzz.sh fills it with the
/// structured generator's output).
static const std::vector<std::string> &validBases() {
  static std::vector<std::string> *bases = [] {
    auto *list = new std::vector<std::string>();
    const char *dir = std::getenv("ATTNC_FUZZ_BASES");
    if (!dir)
      return list;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      if (auto buffer = llvm::MemoryBuffer::getFile(it->path()))
        list->push_back((*buffer)->getBuffer().str());
    return list;
  }();
  return *bases;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The intensity report prints its table on stdout; libFuzzer reports on
  // stderr.
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0)
    dup2(null, STDOUT_FILENO);
  registry();
  validBases();
  return 0;
}

//===----------------------------------------------------------------------===//
// Token-level mutations
//===----------------------------------------------------------------------===//
//
// Byte-level mutations of MLIR text almost never parse (about 1 input in 70
// in a first campaign), so the deep layers would rarely run. Half of the
// mutations are made on tokens instead: a number becomes an interesting
// extent or value, an element type or a comparison becomes another, an
// attnc op another of the same kind, a line is duplicated, dropped or
// swapped with another. Most such mutants still parse and many still
// verify; the byte-level half finds what the parser and verifiers miss.

namespace {
const char *const kNumbers[] = {"0",
                                "1",
                                "2",
                                "7",
                                "8",
                                "16",
                                "37",
                                "63",
                                "64",
                                "65",
                                "100",
                                "127",
                                "128",
                                "255",
                                "256",
                                "1024",
                                "1031",
                                "4096",
                                "8248",
                                "65535",
                                "65536",
                                "2147483647",
                                "2147483648",
                                "4294967296",
                                "-1",
                                "1000000007",
                                "9223372036854775807",
                                "0.0",
                                "-0.0",
                                "1.0e+300",
                                "1.0e-300",
                                "0x7FF8000000000000",
                                "0x7FF0000000000000"};
const char *const kTypes[] = {"bf16", "f16", "f32", "f64",  "i1",
                              "i8",   "i32", "i64", "index"};
const char *const kUnary[] = {"exp", "neg", "tanh", "log", "rsqrt"};
const char *const kBinary[] = {"add", "sub", "mul", "div", "max"};
const char *const kPredicates[] = {"eq", "ne", "lt", "le", "gt", "ge"};

template <size_t N> const char *pick(const char *const (&list)[N], unsigned r) {
  return list[r % N];
}

bool isIdent(char c) { return std::isalnum((unsigned char)c) || c == '_'; }

/// Token spans [begin, end) of the text: identifiers, numbers, punctuation.
std::vector<std::pair<size_t, size_t>> tokenize(const std::string &t) {
  std::vector<std::pair<size_t, size_t>> tokens;
  for (size_t i = 0; i < t.size();) {
    if (std::isspace((unsigned char)t[i])) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    if (isIdent(t[i]) || t[i] == '.' || t[i] == '-')
      while (j < t.size() && (isIdent(t[j]) || t[j] == '.' ||
                              ((t[j] == '+' || t[j] == '-') &&
                               (t[j - 1] == 'e' || t[j - 1] == 'E'))))
        ++j;
    tokens.push_back({i, j});
    i = j;
  }
  return tokens;
}

bool isWordChar(char c) {
  return std::isalnum((unsigned char)c) || c == '_' || c == '%' || c == '#' ||
         c == '.';
}

/// The [begin, end) spans of the standalone decimal integers of the text,
/// extents inside shapes (`4x64xbf16`) included, SSA names (`%c64`) not.
std::vector<std::pair<size_t, size_t>> integers(const std::string &t) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < t.size();) {
    if (!std::isdigit((unsigned char)t[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < t.size() && std::isdigit((unsigned char)t[j]))
      ++j;
    // `x` separates extents: a digit or `?` before it, a digit, `?` or an
    // element type after it.
    bool shapeBefore =
        i >= 2 && t[i - 1] == 'x' &&
        (std::isdigit((unsigned char)t[i - 2]) || t[i - 2] == '?');
    bool shapeAfter = j < t.size() && t[j] == 'x';
    bool before =
        i == 0 || shapeBefore || (!isWordChar(t[i - 1]) && t[i - 1] != '-');
    bool after = j == t.size() || shapeAfter ||
                 (!isWordChar(t[j]) && t[j] != 'e' && t[j] != 'E');
    if (before && after)
      spans.push_back({i, j});
    i = j;
  }
  return spans;
}

/// Every occurrence of one integer becomes another: an extent changes in
/// every type that has it, so most mutants stay well typed and verify.
std::string replaceInteger(const std::string &text, std::mt19937 &rng) {
  auto spans = integers(text);
  if (spans.empty())
    return text;
  auto [b, e] = spans[rng() % spans.size()];
  std::string from = text.substr(b, e - b);
  static const char *const kExtents[] = {
      "1",  "2",   "3",   "5",   "8",   "16",  "17",  "32",   "48",   "64",
      "96", "100", "128", "192", "256", "257", "512", "1000", "4096", "8192"};
  std::string to = pick(kExtents, rng());
  std::string out;
  size_t at = 0;
  for (auto [sb, se] : spans) {
    if (text.compare(sb, se - sb, from) != 0)
      continue;
    out += text.substr(at, sb - at) + to;
    at = se;
  }
  return out + text.substr(at);
}

std::string mutateTokens(std::string text, unsigned seed) {
  std::mt19937 rng(seed);
  auto tokens = tokenize(text);
  if (tokens.empty())
    return text;
  unsigned kind = rng() % 10;
  if (kind >= 8)
    return replaceInteger(text, rng);
  if (kind >= 5) {
    // Line edits: duplicate, drop or swap lines of the body.
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); ++i)
      if (i == text.size() || text[i] == '\n') {
        lines.push_back(text.substr(start, i - start));
        start = i + 1;
      }
    if (lines.size() < 3)
      return text;
    size_t a = 1 + rng() % (lines.size() - 2),
           b = 1 + rng() % (lines.size() - 2);
    if (kind == 5)
      lines.insert(lines.begin() + a, lines[b]);
    else if (kind == 6)
      lines.erase(lines.begin() + a);
    else
      std::swap(lines[a], lines[b]);
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i)
      out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
    return out;
  }
  // Token edits: try a few random tokens for one of the kind chosen.
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto [b, e] = tokens[rng() % tokens.size()];
    std::string tok = text.substr(b, e - b);
    std::string repl;
    bool isNumber = std::isdigit((unsigned char)tok[0]) ||
                    (tok.size() > 1 && tok[0] == '-' &&
                     std::isdigit((unsigned char)tok[1]));
    if (kind == 0 && isNumber) {
      repl = pick(kNumbers, rng());
    } else if (kind == 1 && !isNumber) {
      // Element types, also inside shapes such as 4x8xbf16.
      for (const char *t : kTypes) {
        size_t at = tok.rfind(t);
        if (at != std::string::npos && at + strlen(t) == tok.size() &&
            (at == 0 || tok[at - 1] == 'x')) {
          repl = tok.substr(0, at) + pick(kTypes, rng());
          break;
        }
      }
    } else if (kind == 2 && tok.rfind("attnc.", 0) == 0) {
      std::string op = tok.substr(6);
      for (const char *u : kUnary)
        if (op == u)
          repl = std::string("attnc.") + pick(kUnary, rng());
      for (const char *u : kBinary)
        if (op == u)
          repl = std::string("attnc.") + pick(kBinary, rng());
    } else if (kind == 3) {
      for (const char *p : kPredicates)
        if (tok == p)
          repl = pick(kPredicates, rng());
    } else if (kind == 4 && tok.find('x') != std::string::npos &&
               std::isdigit((unsigned char)tok[0])) {
      // One extent of a shape becomes dynamic or another number.
      size_t x = tok.find('x');
      repl =
          (rng() % 2 ? std::string("?") : std::string(pick(kNumbers, rng()))) +
          tok.substr(x);
    }
    if (!repl.empty())
      return text.substr(0, b) + repl + text.substr(e);
  }
  return text;
}
} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  // Half byte-level (what the parser and verifiers must survive), one in
  // eight one to three token edits of a valid graph of the generator
  // (what the deep layers must survive: coverage-guided corpora drift
  // towards inputs that fail early), the rest token edits of the input.
  const std::vector<std::string> &bases = validBases();
  unsigned mode = seed % 16;
  bool restart = mode == 8 || mode == 9;
  if (mode < 8 || (restart && bases.empty()))
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string out;
  if (restart) {
    out = bases[(seed / 16) % bases.size()];
    for (unsigned i = 0, n = 1 + (seed / 16) % 3; i < n; ++i)
      out = mutateTokens(out, seed * 2654435761u + i);
  } else {
    out = mutateTokens(std::string(reinterpret_cast<const char *>(data), size),
                       seed / 16);
  }
  if (out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  memcpy(data, out.data(), out.size());
  return out.size();
}

/// Inputs that reach a crash known to be in upstream MLIR alone, listed with
/// their reproducers in docs/fuzzing.md: they are skipped, not run.
///  - `tensor.from_elements` whose result type has more elements than a
///    SmallVector can hold: its parser builds one operand type per element
///    and aborts ("SmallVector unable to grow") before any verifier runs.
///  - a use of result number N (`%r#N`) of a value defined later: the parser
///    makes N placeholder results (out of memory near 2^31, a crash at
///    2^32 - 1). Result numbers above 2^16 are skipped.
static bool hasHugeResultNumber(llvm::StringRef text) {
  for (size_t at = text.find('#'); at != llvm::StringRef::npos;
       at = text.find('#', at + 1)) {
    // `%name#digits`: the name runs back to a '%'.
    size_t start = at;
    while (start > 0 && (std::isalnum((unsigned char)text[start - 1]) ||
                         text[start - 1] == '_' || text[start - 1] == '$' ||
                         text[start - 1] == '.' || text[start - 1] == '-'))
      --start;
    if (start == 0 || text[start - 1] != '%')
      continue;
    llvm::StringRef digits = text.drop_front(at + 1);
    digits = digits.take_while(
        [](char c) { return std::isdigit((unsigned char)c); });
    if (digits.size() > 5 ||
        (!digits.empty() && std::stoul(digits.str()) > 65536))
      return true;
  }
  return false;
}

/// `addr_space = <not a plain integer>` on an op: upstream MLIR's
/// llvm.mlir.addressof verifies its symbol's address space by reading the
/// attribute as an IntegerAttr before the global's own verifier rejects a
/// float (null dereference; fuzz/upstream/global-addr-space-float.mlir).
static bool hasNonIntegerAddressSpace(llvm::StringRef text) {
  for (size_t at = text.find("addr_space"); at != llvm::StringRef::npos;
       at = text.find("addr_space", at + 1)) {
    llvm::StringRef rest = text.drop_front(at + 10).ltrim();
    if (!rest.consume_front("="))
      continue;
    rest = rest.ltrim();
    if (rest.empty() || !std::isdigit((unsigned char)rest.front()))
      return true;
    rest =
        rest.drop_while([](char c) { return std::isdigit((unsigned char)c); });
    if (!rest.empty() && (rest.front() == '.' || rest.front() == 'e' ||
                          rest.front() == 'E' || rest.front() == 'x'))
      return true;
  }
  return false;
}

static bool hasUpstreamCrashSignature(llvm::StringRef text) {
  if (hasHugeResultNumber(text) || hasNonIntegerAddressSpace(text))
    return true;
  constexpr uint64_t kMaxFromElements = uint64_t(1) << 24;
  for (size_t at = text.find("from_elements"); at != llvm::StringRef::npos;
       at = text.find("from_elements", at + 1)) {
    size_t type = text.find("tensor<", at);
    if (type == llvm::StringRef::npos)
      return false;
    uint64_t elements = 1;
    llvm::StringRef rest = text.drop_front(type + 7);
    while (!rest.empty() && std::isdigit((unsigned char)rest.front())) {
      uint64_t extent = 0;
      if (rest.consumeInteger(10, extent) || !rest.consume_front("x"))
        return true; // an extent beyond 64 bits, or malformed: skip it too
      if (extent != 0 && elements > kMaxFromElements / extent)
        return true;
      elements *= extent;
    }
    if (elements > kMaxFromElements)
      return true;
  }
  return false;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ++stats.inputs;
  if (hasUpstreamCrashSignature(
          llvm::StringRef(reinterpret_cast<const char *>(data), size))) {
    ++stats.excluded;
    return 0;
  }
  // A fresh context per input: nothing one input interns or registers can
  // change how the next one behaves (a crash reproduces from its file).
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz-input"),
      llvm::SMLoc());
  // Parsed without the parser's own verification, so that the counts tell
  // the two apart.
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, config);
  if (!module)
    return 0;
  ++stats.parsed;
  if (failed(verify(*module)))
    return 0;
  ++stats.verified;

  {
    OwningOpRef<ModuleOp> copy = module->clone();
    PassManager report(&context);
    report.addPass(attnc::createAttncReportIntensity());
    (void)report.run(*copy);
  }

  attnc::AttncPipelineOptions options;
  if (const char *binary = std::getenv("ATTNC_FUZZ_BINARY");
      binary && llvm::StringRef(binary) == "isa")
    options.binary = attnc::KernelBinary::Isa;
  // The upstream lowering to NVVM costs ten times attnc's own passes on an
  // attention kernel; a long campaign may run it on one input in N, chosen
  // by the input's hash so that a crash reproduces from its file.
  if (const char *every = std::getenv("ATTNC_FUZZ_NVVM_EVERY"))
    if (unsigned n = std::strtoul(every, nullptr, 10); n > 1)
      options.toNVVM =
          llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(data, size)) % n == 0;
  // Half the inputs (by hash, so that a crash reproduces) also derive and
  // compile the backward of their attention functions, down to the GPU
  // kernels and both no-S x S checks; the upstream NVVM lowering of those
  // inputs is skipped, which keeps the CI pass's time (with it, the seed
  // corpus took 449 s instead of minutes under ASan). pipeline-backward.mlir
  // lowers a backward to PTX.
  uint64_t hash = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(data, size));
  options.backward = hash % 2 == 1;
  // A quarter compile their forward attention for decoding instead: GQA
  // packing, the split-KV partial and combine forms and their kernels
  // (pipeline-split-kv.mlir lowers them to PTX).
  if (hash % 4 == 2)
    options.splitKV = 8;
  // Half of them (another bit) visit an interval mask's masked tiles in
  // one loop.
  options.oneMaskedLoop = (hash >> 8) % 2 == 1;
  if ((options.backward || options.splitKV > 0) &&
      options.binary == attnc::KernelBinary::None)
    options.toNVVM = false;
  PassManager pm(&context);
  pm.addInstrumentation(std::make_unique<ConversionCounter>());
  attnc::buildAttncPipeline(pm, options);
  if (succeeded(pm.run(*module)) && !module->getOps<gpu::GPUModuleOp>().empty())
    ++stats.kernels;
  return 0;
}
