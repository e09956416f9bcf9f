//===- KernelTuning.cpp - tuning keys and tuning files --------------------===//

#include "kiln/Passes/KernelTuning.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace kiln;

std::string kiln::kernelTuningKey(FusionOp group) {
  // A copy without the discardable attributes (kiln.kernel, kiln.offsets,
  // ...), printed generically without locations: what the group computes,
  // not where it sits or what was chosen for it. Its operands print as
  // unknown values; their types are in the printed signature.
  mlir::Operation *copy = group->clone();
  copy->setDiscardableAttrs(mlir::DictionaryAttr::get(group->getContext()));
  std::string text;
  llvm::raw_string_ostream os(text);
  copy->print(os, mlir::OpPrintingFlags()
                      .printGenericOpForm()
                      .useLocalScope()
                      .enableDebugInfo(false)
                      .assumeVerified());
  copy->destroy();
  return llvm::formatv("{0:x-16}", llvm::xxh3_64bits(llvm::StringRef(text))).str();
}

std::optional<KernelTuning> kiln::readKernelTuning(const std::string &path,
                                                   mlir::MLIRContext *context,
                                                   std::string &error) {
  auto fail = [&](const llvm::Twine &what) -> std::optional<KernelTuning> {
    error = ("kernel tuning file " + path + ": " + what).str();
    return std::nullopt;
  };
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return fail("cannot be read: " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return fail("not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return fail("not a JSON object");
  std::optional<llvm::StringRef> format = root->getString("format");
  if (!format || *format != kKernelTuningFormat)
    return fail("\"format\" is not \"" + kKernelTuningFormat + "\"");
  KernelTuning tuning;
  std::optional<llvm::StringRef> arch = root->getString("arch");
  std::optional<int64_t> multiprocessors = root->getInteger("multiprocessors");
  if (!arch || arch->empty())
    return fail("no \"arch\" (the architecture it was measured on)");
  if (!multiprocessors || *multiprocessors <= 0)
    return fail("no positive \"multiprocessors\" (the GPU it was measured on)");
  tuning.arch = arch->str();
  tuning.multiprocessors = *multiprocessors;
  const llvm::json::Array *groups = root->getArray("groups");
  if (!groups)
    return fail("no \"groups\" array");
  for (auto [index, value] : llvm::enumerate(*groups)) {
    const std::string entry = "group " + std::to_string(index);
    const llvm::json::Object *group = value.getAsObject();
    if (!group)
      return fail(entry + " is not an object");
    std::optional<llvm::StringRef> key = group->getString("key");
    std::optional<llvm::StringRef> kernel = group->getString("kernel");
    if (!key || key->size() != 16 ||
        !llvm::all_of(*key, [](char c) { return llvm::isHexDigit(c); }))
      return fail(entry + " has no \"key\" of 16 hex digits");
    if (!kernel)
      return fail(entry + " (" + *key + ") has no \"kernel\"");
    // Parsed quietly: the error below names the entry, where the parser's
    // own diagnostic would point into a string that is no file.
    mlir::ScopedDiagnosticHandler quiet(context, [](mlir::Diagnostic &) {
      return mlir::success();
    });
    auto config =
        llvm::dyn_cast_or_null<KernelConfigAttr>(mlir::parseAttribute(*kernel, context));
    if (!config)
      return fail(entry + " (" + *key + "): \"" + *kernel +
                  "\" is not a #kiln.kernel<...> configuration");
    if (!tuning.kernels.try_emplace(*key, config).second)
      return fail(entry + " repeats key " + *key);
  }
  return tuning;
}
