//===- TorchScriptModule.cpp - load, clean and specialize TorchScript -----===//
//
// load -> eval -> freeze -> (on a copy of forward's graph) mutation removal,
// tuple lowering, peephole, constant propagation and pooling, CSE, DCE. See
// shared/docs/TORCHSCRIPT.md for why these passes and not
// optimize_for_inference (MKLDNN ops) or FrozenLinearTranspose (splits
// linear).
//
// Shapes: a loaded archive has none. specialize() runs the graph once with
// every top-level intermediate registered as an extra output, on meta
// tensors of the declared specs (MetaShapes.cpp), or on random CPU inputs
// when the graph needs values; it writes the observed TensorTypes back and
// lets peephole + constant propagation fold the aten::size arithmetic.
//
//===----------------------------------------------------------------------===//

#include "TorchScriptState.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/passes/common_subexpression_elimination.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/peephole.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/version.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

using namespace kiln::frontend;

TorchScriptModule::TorchScriptModule(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
TorchScriptModule::~TorchScriptModule() = default;
const std::string &TorchScriptModule::path() const { return state_->path; }

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
/// c10::Error messages carry a C++ backtrace after the message; users need
/// only the message.
std::string firstLines(const std::string &message) {
  std::string text = message.substr(0, message.find("\nException raised from"));
  // miniz appends a paragraph of speculation to every zip error.
  text = text.substr(0, text.find(" This is an internal miniz error"));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

bool isTorchInternal(const std::string &file);


/// A model traced on a GPU records that device in its graph (arange, zeros
/// or full with device=cuda:0). kiln runs the graph on the CPU to learn its
/// shapes, and its kernels have no device of their own: every device
/// constant becomes the CPU, or the first op mixing such a tensor with an
/// input would fail.
void pinDevicesToCpu(torch::jit::Block *block) {
  for (torch::jit::Node *node : block->nodes()) {
    for (torch::jit::Block *inner : node->blocks())
      pinDevicesToCpu(inner);
    if (node->kind() != c10::prim::Constant ||
        node->output()->type()->kind() != c10::TypeKind::DeviceObjType ||
        node->output()->uses().empty())
      continue;
    torch::jit::WithInsertPoint guard(node);
    node->output()->replaceAllUsesWith(
        block->owningGraph()->insertConstant(c10::Device(c10::kCPU)));
  }
}

/// The largest tensor a kiln artifact may declare (kMaxTensorBytes in
/// runtime/include/kiln/runtime/ArtifactFormat.h): an input spec past it
/// could never run, so it fails here, before LibTorch allocates it.
constexpr int64_t kMaxInputBytes = int64_t(1) << 40;

bool looksLikeZip(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  char magic[4] = {};
  file.read(magic, 4);
  return file.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' &&
         magic[2] == 3 && magic[3] == 4;
}

/// Why the zip at `path` cannot be a TorchScript archive, or nothing when it
/// may be one (or is too damaged to tell: LibTorch's load then says how).
/// torch.jit.save puts every entry under one top folder, with data.pkl and
/// constants.pkl in it; LibTorch reports other zips by internal enforce
/// messages, so they are recognized here first.
std::string notTorchScript(const std::string &path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    if (!reader.hasRecord("data.pkl"))
      return "it has no data.pkl; export the model with torch.jit.trace or "
             "torch.jit.script and torch.jit.save";
    if (!reader.hasRecord("constants.pkl"))
      return "was it written by torch.save instead of torch.jit.save?";
  } catch (const c10::Error &e) {
    if (std::string(e.what()).find("not in a subdirectory") != std::string::npos)
      return "its files do not lie in one folder, as torch.jit.save writes them; export "
             "the model with torch.jit.trace or torch.jit.script and torch.jit.save";
    if (std::string(e.what()).find("hasRecord(\"version\")") != std::string::npos)
      return "it has no version record, as torch.jit.save and torch.export.save write; "
             "save the model with one of them";
  }
  return {};
}

/// aten::numel of a tensor whose sizes are known becomes their product,
/// anywhere in the graph.
void foldNumel(torch::jit::Graph &graph) {
  std::vector<torch::jit::Block *> blocks = {graph.block()};
  while (!blocks.empty()) {
    torch::jit::Block *block = blocks.back();
    blocks.pop_back();
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      torch::jit::Node *node = *it++;
      for (torch::jit::Block *nested : node->blocks())
        blocks.push_back(nested);
      if (node->kind() != c10::Symbol::fromQualString("aten::numel") ||
          node->inputs().size() != 1)
        continue;
      auto type = node->input(0)->type()->cast<c10::TensorType>();
      std::optional<std::vector<int64_t>> sizes =
          type ? type->sizes().concrete_sizes() : std::nullopt;
      if (!sizes)
        continue;
      int64_t count = 1;
      for (int64_t size : *sizes)
        count *= size;
      torch::jit::WithInsertPoint point(node);
      node->output()->replaceAllUsesWith(graph.insertConstant(count));
      node->destroy();
    }
  }
}

bool isTorchInternal(const std::string &file) {
  return file.find("/torch/nn/") != std::string::npos ||
         file.find("/torch/_") != std::string::npos ||
         file.find("site-packages/torch/") != std::string::npos;
}
} // namespace

std::string kiln::frontend::pythonSourceOf(const torch::jit::Node *node) {
  auto range = node->sourceRange();
  if (auto original = range.findSourceRangeThatGenerated())
    range = *original;
  std::string innermost;
  if (auto where = range.file_line_col()) {
    auto [file, line, column] = *where;
    (void)column;
    innermost = file + ":" + std::to_string(line);
    if (!isTorchInternal(file))
      return innermost;
  }
  // The innermost frame is torch's own code (nn.Linear.forward, say). Traced
  // nodes keep the Python stack as `file(line): function` lines, innermost
  // first: the first frame outside torch is the user's.
  if (!range.source())
    return innermost;
  std::istringstream lines(range.source()->text_str().str());
  for (std::string line; std::getline(lines, line);) {
    size_t open = line.rfind('('), close = line.rfind("):");
    if (open == std::string::npos || close == std::string::npos || close < open)
      continue;
    std::string file = line.substr(0, open);
    if (!isTorchInternal(file))
      return file + ":" + line.substr(open + 1, close - open - 1);
  }
  return innermost;
}

std::string kiln::frontend::dtypeName(c10::ScalarType type) {
  switch (type) {
  case c10::kFloat: return "f32";
  case c10::kHalf: return "f16";
  case c10::kBFloat16: return "bf16";
  case c10::kLong: return "i64";
  case c10::kInt: return "i32";
  case c10::kBool: return "i1";
  default: return {};
  }
}

std::optional<c10::ScalarType> kiln::frontend::scalarTypeOf(const std::string &dtype) {
  static const std::map<std::string, c10::ScalarType> types = {
      {"f32", c10::kFloat}, {"f16", c10::kHalf}, {"bf16", c10::kBFloat16},
      {"i64", c10::kLong},  {"i32", c10::kInt},  {"i1", c10::kBool}};
  auto it = types.find(dtype);
  if (it == types.end())
    return std::nullopt;
  return it->second;
}

std::string kiln::frontend::inputBaseName(const torch::jit::Value *value) {
  std::string name = value->debugName();
  // TorchScript renames `x` to `x.1` when it is reassigned.
  size_t dot = name.rfind('.');
  if (dot != std::string::npos && dot + 1 < name.size() &&
      std::all_of(name.begin() + dot + 1, name.end(), ::isdigit))
    name.resize(dot);
  return name;
}

bool kiln::frontend::parseInputSpec(const std::string &text, InputSpec &spec,
                                    std::string &error) {
  size_t first = text.find(':'), second = text.rfind(':');
  if (first == std::string::npos || first == second) {
    error = "input spec '" + text + "' is not NAME:SHAPE:DTYPE (e.g. x:64x256:f32)";
    return false;
  }
  spec.name = text.substr(0, first);
  spec.dtype = text.substr(second + 1);
  spec.range.reset();
  if (size_t open = spec.dtype.find('['); open != std::string::npos) {
    std::string range = spec.dtype.substr(open);
    spec.dtype = spec.dtype.substr(0, open);
    // [LO,HI): two integers that fit in 64 bits, LO < HI.
    auto integer = [](const std::string &text, long long &out) {
      if (text.empty())
        return false;
      char *end = nullptr;
      errno = 0;
      out = std::strtoll(text.c_str(), &end, 10);
      return errno != ERANGE && end == text.c_str() + text.size();
    };
    size_t comma = range.find(',');
    long long lo = 0, hi = 0;
    if (range.size() < 5 || range.back() != ')' || comma == std::string::npos ||
        !integer(range.substr(1, comma - 1), lo) ||
        !integer(range.substr(comma + 1, range.size() - comma - 2), hi) || lo >= hi) {
      error = "input spec '" + text + "': '" + range +
              "' is not a range of values [LO,HI) with LO < HI (e.g. i64[0,30522))";
      return false;
    }
    if (spec.dtype != "i64" && spec.dtype != "i32") {
      error = "input spec '" + text + "': a range of values is for i64 and i32 inputs";
      return false;
    }
    spec.range = std::pair<int64_t, int64_t>{lo, hi};
  }
  std::string shape = text.substr(first + 1, second - first - 1);
  if (spec.name.empty()) {
    error = "input spec '" + text + "' has no name";
    return false;
  }
  if (!scalarTypeOf(spec.dtype)) {
    error = "input spec '" + text + "': unknown dtype '" + spec.dtype +
            "' (use f32, f16, bf16, i64, i32 or i1)";
    return false;
  }
  // Split by hand: getline drops a trailing empty field, so `8x16x` would
  // read as 8x16.
  spec.shape.clear();
  int64_t elements = 1;
  for (size_t begin = 0; !shape.empty() && begin <= shape.size();) {
    size_t end = std::min(shape.find('x', begin), shape.size());
    std::string dim = shape.substr(begin, end - begin);
    begin = end + 1;
    char *last = nullptr;
    errno = 0;
    long long value = std::strtoll(dim.c_str(), &last, 10);
    if (dim.empty() || *last || !std::isdigit(static_cast<unsigned char>(dim[0]))) {
      error = "input spec '" + text + "': '" + dim +
              "' is not a dimension size (sizes are positive integers joined by 'x')";
      return false;
    }
    if (value == 0) {
      error = "input spec '" + text +
              "': a dimension of size 0 (kiln compiles tensors with at least one element)";
      return false;
    }
    if (errno == ERANGE || elements > kMaxInputBytes / value) {
      error = "input spec '" + text + "': the tensor has more elements than any GPU holds "
              "(a kiln artifact allows " + std::to_string(kMaxInputBytes) + " bytes per tensor)";
      return false;
    }
    elements *= value;
    spec.shape.push_back(value);
  }
  int64_t bytes = elements * c10::elementSize(*scalarTypeOf(spec.dtype));
  if (bytes > kMaxInputBytes) {
    error = "input spec '" + text + "': " + std::to_string(elements) + " elements take " +
            std::to_string(bytes) + " bytes (a kiln artifact allows " +
            std::to_string(kMaxInputBytes) + " bytes per tensor)";
    return false;
  }
  return true;
}

std::string kiln::frontend::formatInputSpec(const InputSpec &spec) {
  std::string shape;
  for (size_t i = 0; i < spec.shape.size(); ++i)
    shape += (i ? "x" : "") + std::to_string(spec.shape[i]);
  return spec.name + ":" + shape + ":" + spec.dtype +
         (spec.range ? "[" + std::to_string(spec.range->first) + "," +
                           std::to_string(spec.range->second) + ")"
                     : "");
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

std::unique_ptr<TorchScriptModule>
TorchScriptModule::load(const std::string &path, std::string &error) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    error = "cannot read '" + path + "': " +
            (std::filesystem::exists(path, ec) ? "not a regular file"
                                               : "no such file");
    return nullptr;
  }
  // TorchScript archives are zip files; anything else (an ONNX file, a
  // pickle) gets a precise message up front.
  if (!looksLikeZip(path)) {
    error = "'" + path + "' is not a TorchScript or torch.export archive (not a zip file); "
            "export the model with torch.export.export and torch.export.save, or "
            "torch.jit.trace (or script) and torch.jit.save";
    return nullptr;
  }
  if (isPt2Archive(path)) {
    auto state = std::make_unique<State>();
    state->path = path;
    if (!loadPt2Archive(path, *state, error))
      return nullptr;
    // The exported graph keeps in-place ops (relu_, add_): made functional
    // as for TorchScript archives.
    auto &graph = state->graph;
    torch::jit::RemoveListMutation(graph);
    torch::jit::RemoveTensorMutation(graph);
    torch::jit::ConstantPooling(graph);
    torch::jit::EliminateDeadCode(graph);
    return std::unique_ptr<TorchScriptModule>(new TorchScriptModule(std::move(state)));
  }
  if (std::string why = notTorchScript(path); !why.empty()) {
    error = "'" + path + "' is a zip but not a TorchScript archive (" + why + ")";
    return nullptr;
  }
  try {
    auto state = std::make_unique<State>();
    state->path = path;
    torch::jit::Module module = torch::jit::load(path, c10::Device(c10::kCPU));
    module.eval();
    state->frozen = torch::jit::freeze(module);
    if (!state->frozen.find_method("forward")) {
      error = "'" + path + "' has no forward method";
      return nullptr;
    }
    state->graph = state->frozen.get_method("forward").graph()->copy();
    auto &graph = state->graph;
    pinDevicesToCpu(graph->block());
    torch::jit::RemoveListMutation(graph);
    torch::jit::RemoveTensorMutation(graph);
    // Before tuples are lowered: a dict of tuples cannot be.
    state->outputNames = flattenGraphOutputs(*graph);
    torch::jit::LowerAllTuples(graph);
    torch::jit::PeepholeOptimize(graph);
    torch::jit::ConstantPropagation(graph);
    torch::jit::ConstantPooling(graph);
    torch::jit::EliminateCommonSubexpression(graph);
    torch::jit::EliminateDeadCode(graph);
    for (torch::jit::Value *input : graph->inputs())
      if (input->type()->kind() != c10::TypeKind::ClassType)
        state->tensorInputs.push_back(input);
    return std::unique_ptr<TorchScriptModule>(
        new TorchScriptModule(std::move(state)));
  } catch (const c10::Error &e) {
    std::string what = firstLines(e.what_without_backtrace());
    // torch::jit::load reports a zip without TorchScript code (a torch.save'd
    // state_dict) as a missing constants/code record.
    if (what.find("constants.pkl") != std::string::npos ||
        what.find("code/") != std::string::npos)
      error = "'" + path + "' is a zip but not a TorchScript archive (was it "
              "written by torch.save instead of torch.jit.save?): " + what;
    else
      error = "LibTorch could not load '" + path + "': " + what;
  } catch (const std::exception &e) {
    error = "LibTorch could not load '" + path + "': " + firstLines(e.what());
  }
  return nullptr;
}

std::string kiln::frontend::libtorchVersion() { return TORCH_VERSION; }

const std::string &TorchScriptModule::shapeRun() const { return state_->shapeRun; }

std::vector<std::string> TorchScriptModule::inputNames() const {
  std::vector<std::string> names;
  for (const torch::jit::Value *input : state_->tensorInputs)
    names.push_back(inputBaseName(input));
  return names;
}

std::vector<InputSpec> TorchScriptModule::tracedInputs() const {
  std::vector<InputSpec> specs;
  // An exported program records every input's sizes (symbols by their hint).
  if (state_->exportedGraph) {
    for (const State::ExportedInput &input : state_->exportedInputs) {
      if (input.dtype.empty())
        return {};
      InputSpec spec{input.name, {}, input.dtype, std::nullopt};
      for (const State::ExportedDim &dim : input.dims)
        spec.shape.push_back(dim.hint);
      specs.push_back(spec);
    }
    return specs;
  }
  try {
    caffe2::serialize::PyTorchStreamReader reader(state_->path);
    if (!reader.hasRecord("traced_inputs.pkl"))
      return specs;
    c10::IValue value = torch::jit::readArchiveAndTensors(
        "traced_inputs", "", "traced_inputs/", std::nullopt, std::nullopt,
        c10::Device(c10::kCPU), reader);
    // {method name: list (or tuple) of example inputs}
    if (!value.isGenericDict())
      return specs;
    for (const auto &entry : value.toGenericDict()) {
      if (!entry.key().isString() || entry.key().toStringRef() != "forward")
        continue;
      std::vector<c10::IValue> elements;
      if (entry.value().isList())
        elements = entry.value().toList().vec();
      else if (entry.value().isTuple())
        elements = entry.value().toTupleRef().elements().vec();
      std::vector<std::string> names = inputNames();
      for (size_t i = 0; i < elements.size() && i < names.size(); ++i) {
        if (!elements[i].isTensor())
          return {};
        at::Tensor tensor = elements[i].toTensor();
        InputSpec spec{names[i], tensor.sizes().vec(), dtypeName(tensor.scalar_type()),
                       std::nullopt};
        if (spec.dtype.empty())
          return {};
        specs.push_back(spec);
      }
    }
  } catch (const std::exception &) {
    // No readable example inputs: the user must give --input.
    return {};
  }
  return specs;
}

//===----------------------------------------------------------------------===//
// Specialization
//===----------------------------------------------------------------------===//

bool TorchScriptModule::specialize(const std::vector<InputSpec> &specs,
                                   std::string &error) {
  State &state = *state_;
  std::vector<std::string> names = inputNames();
  auto listNames = [&] {
    std::string list;
    for (const std::string &name : names)
      list += (list.empty() ? "" : ", ") + name;
    return list;
  };
  if (specs.size() != names.size()) {
    error = "the model takes " + std::to_string(names.size()) + " input(s) (" +
            listNames() + ") but " + std::to_string(specs.size()) +
            " were declared";
    return false;
  }
  // An exported program fixes each static size and bounds each symbolic
  // one: refuse what it was not exported for before running anything.
  for (const InputSpec &spec : specs)
    for (const State::ExportedInput &input : state.exportedInputs) {
      if (input.name != spec.name)
        continue;
      if (input.dims.size() != spec.shape.size()) {
        error = "input '" + spec.name + "' was exported with rank " +
                std::to_string(input.dims.size()) + ", declared with rank " +
                std::to_string(spec.shape.size());
        return false;
      }
      for (size_t d = 0; d < input.dims.size(); ++d) {
        const State::ExportedDim &dim = input.dims[d];
        int64_t size = spec.shape[d];
        if (dim.symbol.empty() && size != dim.hint) {
          error = "input '" + spec.name + "' has size " + std::to_string(size) +
                  " in dimension " + std::to_string(d) + ", but the model was exported with " +
                  "that dimension static at " + std::to_string(dim.hint) +
                  " (mark it dynamic with torch.export.Dim to vary it)";
          return false;
        }
        if (!dim.symbol.empty() && (size < dim.min || size > dim.max)) {
          error = "input '" + spec.name + "' has size " + std::to_string(size) +
                  " in dimension " + std::to_string(d) + ", outside [" +
                  std::to_string(dim.min) + ", " + std::to_string(dim.max) +
                  "], the range the model was exported with for it (" + dim.symbol + ")";
          return false;
        }
      }
    }
  // Inputs matched to graph inputs by name: meta tensors of the declared
  // shapes first (no values: drawing a batch-32 activation's random values
  // took longer than the FFN's whole import), random values only for a run
  // on the CPU.
  std::vector<at::Tensor> tensors(names.size());
  std::vector<const InputSpec *> specOf(names.size(), nullptr);
  int64_t exampleBytes = 0;
  for (const InputSpec &spec : specs) {
    auto it = std::find(names.begin(), names.end(), spec.name);
    if (it == names.end()) {
      error = "the model has no input named '" + spec.name + "'; its inputs are: " +
              listNames();
      return false;
    }
    c10::ScalarType type = *scalarTypeOf(spec.dtype);
    size_t index = it - names.begin();
    if (specOf[index]) {
      error = "input '" + spec.name + "' is declared twice";
      return false;
    }
    specOf[index] = &spec;
    // A run on the CPU holds every example input in host memory at once.
    exampleBytes += c10::multiply_integers(spec.shape) * c10::elementSize(type);
    long pages = ::sysconf(_SC_PHYS_PAGES), pageBytes = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && pageBytes > 0 && exampleBytes / pageBytes >= pages) {
      error = "random example inputs of the declared shapes take " +
              std::to_string(exampleBytes) + " bytes, more than this machine's memory (" +
              std::to_string(int64_t(pages) * pageBytes) +
              " bytes); kiln may run the model once on the CPU to learn its shapes";
      return false;
    }
    try {
      tensors[index] = at::empty(spec.shape, at::TensorOptions().dtype(type).device(c10::kMeta));
    } catch (const std::exception &e) {
      error = "cannot make an example of input '" + formatInputSpec(spec) +
              "' to learn the model's shapes: " + firstLines(e.what());
      return false;
    }
  }

  torch::jit::Graph &graph = *state.graph;
  size_t originalOutputs = graph.outputs().size();
  std::vector<torch::jit::Value *> observed;
  for (torch::jit::Node *node : graph.nodes())
    for (torch::jit::Value *output : node->outputs())
      if (output->type()->cast<c10::TensorType>()) {
        observed.push_back(output);
        graph.registerOutput(output);
      }

  const bool hasSelf = !graph.inputs().empty() &&
                       graph.inputs()[0]->type()->kind() == c10::TypeKind::ClassType;
  // Shapes first from meta tensors (no arithmetic: BERT-base at batch 32
  // took 8 s of CPU to run for real); a graph that needs values (item(),
  // data-dependent sizes, an op without a meta kernel) runs on the CPU.
  torch::jit::Stack stack;
  std::optional<c10::IValue> self;
  if (hasSelf)
    self = state.frozen._ivalue();
  std::string whyNotMeta, onCpu;
  bool ran = runOnMeta(state.graph, self, tensors, stack, whyNotMeta, onCpu);
  state.shapeRun = !ran ? "on the CPU (on meta tensors: " + whyNotMeta + ")"
                   : onCpu.empty() ? "on meta tensors"
                                   : "on meta tensors (on CPU tensors of ones: " + onCpu + ")";
  if (!ran) {
    std::vector<std::string> drawnIntegers;
    stack.clear();
    if (self)
      stack.push_back(*self);
    at::manual_seed(0);
    bool drawnAll = true;
    for (size_t i = 0; i < tensors.size() && drawnAll; ++i) {
      try {
        bool drawn = false;
        stack.emplace_back(exampleInput(*specOf[i], drawn));
        if (drawn)
          drawnIntegers.push_back(specOf[i]->name);
      } catch (const std::exception &e) {
        error = "cannot make a random example of input '" + formatInputSpec(*specOf[i]) +
                "' to learn the model's shapes: " + firstLines(e.what());
        drawnAll = false;
      }
    }
    if (drawnAll)
      try {
        torch::jit::Code code(state.graph, "forward");
        torch::jit::InterpreterState interpreter(code);
        interpreter.run(stack);
        ran = true;
      } catch (const std::exception &e) {
        std::string declared;
        for (const InputSpec &spec : specs)
          declared += (declared.empty() ? "" : ", ") + formatInputSpec(spec);
        error = "the model fails on inputs of the declared shapes (" + declared + ") " +
                summarizeInterpreterError(e.what()) + drawnIntegersHint(drawnIntegers);
      }
  }
  if (ran)
    for (size_t i = 0; i < observed.size(); ++i) {
      // An optional tensor result that is None at run time (the attention
      // weights of nn.MultiheadAttention with need_weights=False) keeps
      // its unshaped type: a converter that reads it reports the problem.
      const c10::IValue &value = stack[originalOutputs + i];
      if (value.isTensor() && value.toTensor().defined())
        observed[i]->setType(c10::TensorType::create(value.toTensor())
                                 ->withDevice(c10::Device(c10::kCPU)));
    }
  for (size_t i = graph.outputs().size(); i > originalOutputs; --i)
    graph.eraseOutput(i - 1);
  if (!ran)
    return false;
  for (size_t i = 0; i < tensors.size(); ++i)
    state.tensorInputs[i]->setType(
        c10::TensorType::create(tensors[i])->withDevice(c10::Device(c10::kCPU)));

  // Sizes are constants now: fold aten::size and the list arithmetic on it,
  // then masks built by writing into slices, and what is computed from them.
  // Peephole folds aten::size but not aten::numel (Swin V2 slices its qkv
  // bias at numel() // 3): that one is replaced here.
  foldNumel(*state.graph);
  torch::jit::PeepholeOptimize(state.graph);
  torch::jit::ConstantPropagation(state.graph);
  if (foldConstantWrites(*state.graph) > 0)
    torch::jit::ConstantPropagation(state.graph);
  torch::jit::EliminateDeadCode(state.graph);
  state.specialized = true;
  return true;
}

//===----------------------------------------------------------------------===//
// Inspection
//===----------------------------------------------------------------------===//

std::vector<OperatorUse> TorchScriptModule::operators() const {
  std::vector<OperatorUse> uses;
  std::map<std::string, size_t> index;
  // Nodes inside prim::If / prim::Loop blocks count too: an unsupported op
  // there must still be reported.
  std::vector<torch::jit::Block *> blocks = {state_->graph->block()};
  while (!blocks.empty()) {
    torch::jit::Block *block = blocks.back();
    blocks.pop_back();
    for (torch::jit::Node *node : block->nodes()) {
      std::string name = node->kind().toQualString();
      auto [it, inserted] = index.emplace(name, uses.size());
      if (inserted)
        uses.push_back({name, 0, pythonSourceOf(node)});
      ++uses[it->second].count;
      for (torch::jit::Block *nested : node->blocks())
        blocks.push_back(nested);
    }
  }
  return uses;
}

std::string TorchScriptModule::graphText() const {
  std::ostringstream out;
  out << *state_->graph;
  return out.str();
}

/// The interpreter's error carries two tracebacks before the message; keep
/// the message (its last line) and the user's innermost Python frame.
std::string kiln::frontend::summarizeInterpreterError(const std::string &what) {
  std::string text = firstLines(what);
  size_t lastLine = text.rfind('\n');
  std::string message = lastLine == std::string::npos ? text : text.substr(lastLine + 1);
  if (message.rfind("RuntimeError: ", 0) == 0)
    message = message.substr(14);
  std::string userFrame;
  size_t original = text.find("original code");
  std::istringstream lines(original == std::string::npos ? "" : text.substr(original));
  std::string header;
  std::getline(lines, header); // "original code (most recent call last):"
  for (std::string line; std::getline(lines, line);) {
    size_t open = line.rfind('('), close = line.rfind("):");
    if (open == std::string::npos || close == std::string::npos || close < open)
      continue;
    std::string file = line.substr(0, open);
    if (!isTorchInternal(file)) {
      userFrame = file + ":" + line.substr(open + 1, close - open - 1);
      break;
    }
  }
  return (userFrame.empty() ? "" : "at " + userFrame + ": ") + message;
}
