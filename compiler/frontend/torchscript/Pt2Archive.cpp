//===- Pt2Archive.cpp - a torch.export archive as a TorchScript graph -----===//
//
// A `.pt2` from torch.export.save is a zip: `models/model.json` (the graph in
// the export schema, version 8), `data/weights/` and `data/constants/` (raw
// storage bytes, described by `*_config.json`). This file turns it into the
// same thing a TorchScript archive becomes after freezing: a
// torch::jit::Graph whose nodes are ATen operators (so one converter table,
// keyed by schema name, serves both formats), parameters, buffers and
// lifted constants inserted as tensor constants, user inputs as graph
// inputs. Each node keeps its Python line: the export stack trace becomes
// the source text pythonSourceOf reads.
//
// Symbolic sizes are left to specialization (the example inputs run through
// the graph, as for TorchScript); each input's exported sizes and the
// ranges of their symbols are kept, so kiln-compile needs no --input for a
// static model and refuses sizes outside a dimension's range.
//
//===----------------------------------------------------------------------===//

#include "TorchScriptState.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

#include <limits>
#include <map>
#include <regex>
#include <sstream>

using namespace kiln::frontend;
namespace json = llvm::json;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

namespace {

/// The export schema's major version this reader knows (torch 2.11: 8.17).
constexpr int64_t kSchemaMajor = 8;

struct Pt2Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string &why) { throw Pt2Error(why); }

std::string record(caffe2::serialize::PyTorchStreamReader &reader, const std::string &name) {
  if (!reader.hasRecord(name))
    fail("it has no " + name);
  auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char *>(data.get()), size);
}

json::Value parseJson(const std::string &text, const std::string &what) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    fail(what + " is not valid JSON: " + llvm::toString(value.takeError()));
  return std::move(*value);
}

const json::Object &object(const json::Value *value, const std::string &what) {
  if (!value || !value->getAsObject())
    fail(what + " is missing or not an object");
  return *value->getAsObject();
}
const json::Array &array(const json::Value *value, const std::string &what) {
  if (!value || !value->getAsArray())
    fail(what + " is missing or not a list");
  return *value->getAsArray();
}
std::string string(const json::Value *value, const std::string &what) {
  if (!value || !value->getAsString())
    fail(what + " is missing or not a string");
  return value->getAsString()->str();
}
int64_t integer(const json::Value *value, const std::string &what) {
  if (!value || !value->getAsInteger())
    fail(what + " is missing or not an integer");
  return *value->getAsInteger();
}

/// A float argument: JSON has no infinities, so the export writes them (and
/// NaN) as the strings "Infinity", "-Infinity" and "NaN".
double floating(const json::Value &value, const std::string &what) {
  if (std::optional<double> number = value.getAsNumber())
    return *number;
  if (std::optional<llvm::StringRef> text = value.getAsString()) {
    if (*text == "Infinity")
      return std::numeric_limits<double>::infinity();
    if (*text == "-Infinity")
      return -std::numeric_limits<double>::infinity();
    if (*text == "NaN")
      return std::numeric_limits<double>::quiet_NaN();
  }
  fail(what + " is not a number");
}

bool boolean(const json::Value &value, const std::string &what) {
  if (std::optional<bool> b = value.getAsBoolean())
    return *b;
  fail(what + " is not a boolean");
}

/// The export schema's ScalarType numbering (torch/_export/serde/schema.py).
c10::ScalarType scalarType(int64_t code) {
  switch (code) {
  case 1: return c10::kByte;
  case 2: return c10::kChar;
  case 3: return c10::kShort;
  case 4: return c10::kInt;
  case 5: return c10::kLong;
  case 6: return c10::kHalf;
  case 7: return c10::kFloat;
  case 8: return c10::kDouble;
  case 12: return c10::kBool;
  case 13: return c10::kBFloat16;
  default: fail("a tensor of export dtype code " + std::to_string(code) +
                " (complex, float8 or unknown), which kiln does not read");
  }
}

/// One size of a tensor_meta: a number, or a symbol with its hint.
struct ExportedSize {
  int64_t value = 0; // the number, or the symbol's hint
  std::string symbol;
};

ExportedSize exportedSize(const json::Value &size, const std::string &what) {
  const json::Object &o = object(&size, what);
  if (const json::Value *v = o.get("as_int"))
    return {integer(v, what), ""};
  const json::Object &expr = object(o.get("as_expr"), what + " (a symbolic size)");
  std::string text = string(expr.get("expr_str"), what);
  // "Symbol('s77', positive=True, integer=True)" or a bare "s77"; a compound
  // expression (2*s77) has no range of its own.
  std::smatch match;
  std::string symbol;
  if (std::regex_match(text, match, std::regex(R"(Symbol\('([A-Za-z_][A-Za-z0-9_]*)'.*\))")) ||
      std::regex_match(text, match, std::regex(R"(([A-Za-z_][A-Za-z0-9_]*))")))
    symbol = match[1];
  const json::Object *hint = expr.getObject("hint");
  if (!hint || !hint->get("as_int"))
    fail(what + " is the symbolic size '" + text + "' without a hint");
  return {integer(hint->get("as_int"), what), symbol.empty() ? text : symbol};
}

/// A weight or constant: raw storage bytes viewed through its tensor_meta.
at::Tensor readTensor(caffe2::serialize::PyTorchStreamReader &reader, const std::string &file,
                      const json::Object &meta, const std::string &what) {
  c10::ScalarType dtype = scalarType(integer(meta.get("dtype"), what + " dtype"));
  std::vector<int64_t> sizes, strides;
  for (const json::Value &s : array(meta.get("sizes"), what + " sizes"))
    sizes.push_back(exportedSize(s, what + " size").value);
  for (const json::Value &s : array(meta.get("strides"), what + " strides"))
    strides.push_back(exportedSize(s, what + " stride").value);
  int64_t offset = 0;
  if (const json::Value *o = meta.get("storage_offset"))
    offset = exportedSize(*o, what + " storage offset").value;
  if (strides.size() != sizes.size())
    fail(what + " has " + std::to_string(sizes.size()) + " sizes but " +
         std::to_string(strides.size()) + " strides");
  std::string bytes = record(reader, file);
  const int64_t element = c10::elementSize(dtype);
  // The last element the view reaches must lie inside the stored bytes.
  int64_t last = offset;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0)
      fail(what + " has a negative size or stride");
    if (sizes[d] == 0)
      empty = true;
    else
      last += (sizes[d] - 1) * strides[d];
  }
  if (!empty && (last + 1) * element > static_cast<int64_t>(bytes.size()))
    fail(what + " needs " + std::to_string((last + 1) * element) + " bytes but '" + file +
         "' holds " + std::to_string(bytes.size()));
  at::Tensor storage =
      at::empty({static_cast<int64_t>(bytes.size()) / element}, at::TensorOptions(dtype));
  std::memcpy(storage.data_ptr(), bytes.data(), storage.nbytes());
  return storage.as_strided(sizes, strides, offset).clone();
}

/// `{name: tensor}` from a weights or constants config.
std::map<std::string, at::Tensor> readTensors(caffe2::serialize::PyTorchStreamReader &reader,
                                              const std::string &config,
                                              const std::string &folder) {
  std::map<std::string, at::Tensor> tensors;
  if (!reader.hasRecord(config))
    return tensors;
  json::Value root = parseJson(record(reader, config), config);
  const json::Object &entries = object(object(&root, config).get("config"), config + " config");
  for (const auto &[name, entry] : entries) {
    std::string what = "'" + name.str() + "' in " + config;
    const json::Object &e = object(&entry, what);
    if (e.getBoolean("use_pickle").value_or(false))
      fail(what + " is pickled (a tensor subclass or custom object), which kiln does not read");
    tensors[name.str()] = readTensor(reader, folder + string(e.get("path_name"), what),
                                     object(e.get("tensor_meta"), what), what);
  }
  return tensors;
}

/// The Python frames of an export stack trace ("File "f.py", line 8, in
/// forward" lines, outermost first) as the source text of a traced node
/// ("f.py(8): forward" lines, innermost first).
std::string tracedSourceText(const std::string &stackTrace) {
  static const std::regex frame(R"re(File "([^"]+)", line (\d+), in (\S+))re");
  std::vector<std::string> frames;
  for (auto it = std::sregex_iterator(stackTrace.begin(), stackTrace.end(), frame);
       it != std::sregex_iterator(); ++it)
    frames.push_back((*it)[1].str() + "(" + (*it)[2].str() + "): " + (*it)[3].str());
  std::string text;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    text += *it + "\n";
  return text;
}

/// Builds the graph node by node.
class GraphBuilder {
public:
  GraphBuilder(Graph &graph) : graph(graph) {}

  Graph &graph;
  std::map<std::string, Value *> values; // tensors and symbolic ints by name

  Value *named(const std::string &name, const std::string &what) {
    auto found = values.find(name);
    if (found == values.end())
      fail(what + " reads '" + name + "', which nothing before it defines");
    return found->second;
  }

  Value *constant(const c10::IValue &value) { return graph.insertConstant(value); }

  /// A symbolic or constant int ({"as_name": ...} or {"as_int": ...}).
  Value *symInt(const json::Value &v, const std::string &what) {
    const json::Object &o = object(&v, what);
    if (const json::Value *n = o.get("as_name"))
      return named(string(n, what), what);
    return constant(integer(o.get("as_int"), what));
  }

  /// One argument of the export schema, as the value the jit schema takes.
  Value *argument(const json::Object &arg, const c10::Argument &formal, const std::string &what) {
    const c10::TypePtr &type = formal.type();
    bool tensorFormal = type->kind() == c10::TypeKind::TensorType ||
                        (type->kind() == c10::TypeKind::OptionalType &&
                         type->expectRef<c10::OptionalType>().getElementType()->kind() ==
                             c10::TypeKind::TensorType);
    if (arg.size() != 1)
      fail(what + " has an argument of " + std::to_string(arg.size()) + " kinds");
    const auto &[kind, payload] = *arg.begin();
    std::string k = kind.str();
    if (k == "as_tensor")
      return named(string(object(&payload, what).get("name"), what), what);
    if (k == "as_none")
      return constant(c10::IValue());
    if (k == "as_int")
      // A Python number where the schema takes a tensor is a 0-dim tensor,
      // as tracing records it.
      return tensorFormal ? constant(at::scalar_tensor(integer(&payload, what), at::kLong))
                          : constant(integer(&payload, what));
    if (k == "as_float") {
      double value = floating(payload, what);
      return tensorFormal ? constant(at::scalar_tensor(value, at::kDouble)) : constant(value);
    }
    if (k == "as_bool")
      return constant(boolean(payload, what));
    if (k == "as_string")
      return constant(string(&payload, what));
    if (k == "as_ints") {
      std::vector<int64_t> ints;
      for (const json::Value &i : array(&payload, what))
        ints.push_back(integer(&i, what));
      return constant(ints);
    }
    if (k == "as_floats") {
      std::vector<double> floats;
      for (const json::Value &f : array(&payload, what))
        floats.push_back(floating(f, what));
      return constant(floats);
    }
    if (k == "as_bools") {
      c10::List<bool> bools;
      for (const json::Value &b : array(&payload, what))
        bools.push_back(boolean(b, what));
      return constant(bools);
    }
    if (k == "as_sym_int")
      return symInt(payload, what);
    if (k == "as_sym_ints") {
      std::vector<Value *> ints;
      for (const json::Value &i : array(&payload, what))
        ints.push_back(symInt(i, what));
      return graph.insertNode(graph.createList(c10::IntType::get(), ints))->output();
    }
    if (k == "as_tensors" || k == "as_optional_tensors") {
      std::vector<Value *> tensors;
      bool optional = k == "as_optional_tensors";
      // Tensor?[] given as plain tensors (index.Tensor's indices): the list
      // keeps the schema's element type, or the node would resolve to
      // another overload.
      auto listType = type->cast<c10::ListType>();
      bool optionalElements =
          optional || (listType && listType->getElementType()->kind() == c10::TypeKind::OptionalType);
      for (const json::Value &t : array(&payload, what)) {
        const json::Object &o = object(&t, what);
        if (optional && o.get("as_none"))
          tensors.push_back(constant(c10::IValue()));
        else
          tensors.push_back(named(
              string(object(optional ? o.get("as_tensor") : &t, what).get("name"), what), what));
      }
      c10::TypePtr element = optionalElements
                                 ? c10::OptionalType::create(c10::TensorType::get())
                                 : c10::TypePtr(c10::TensorType::get());
      return graph.insertNode(graph.createList(element, tensors))->output();
    }
    if (k == "as_scalar_type")
      return constant(static_cast<int64_t>(scalarType(integer(&payload, what))));
    if (k == "as_layout")
      return constant(static_cast<int64_t>(c10::kStrided));
    if (k == "as_memory_format") {
      int64_t code = integer(&payload, what);
      c10::MemoryFormat format = code == 2   ? c10::MemoryFormat::ChannelsLast
                                 : code == 3 ? c10::MemoryFormat::ChannelsLast3d
                                 : code == 4 ? c10::MemoryFormat::Preserve
                                             : c10::MemoryFormat::Contiguous;
      return constant(static_cast<int64_t>(format));
    }
    if (k == "as_device")
      // Devices are pinned to the CPU, as for TorchScript archives.
      return constant(c10::Device(c10::kCPU));
    fail(what + " has an argument of kind '" + k + "', which kiln does not read");
  }

  /// The jit operator `name` (`aten::add`) of `overload` ("" for default).
  static std::shared_ptr<torch::jit::Operator> jitOperator(const std::string &name,
                                                           const std::string &overload) {
    for (const auto &candidate : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name)))
      if (candidate->schema().overload_name() == overload)
        return candidate;
    return nullptr;
  }

  /// `torch.ops.aten.NAME.OVERLOAD` -> the jit operator and its schema.
  std::shared_ptr<torch::jit::Operator> op(const std::string &target, const std::string &what) {
    static const std::regex pattern(R"(torch\.ops\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+))");
    std::smatch match;
    if (!std::regex_match(target, match, pattern))
      fail(what + " calls '" + target + "', not an operator kiln can read");
    std::string name = match[1].str() + "::" + match[2].str();
    return jitOperator(name, match[3] == "default" ? "" : match[3].str());
  }

  /// Adds one export node; `unknown` collects operators LibTorch lacks.
  void node(const json::Object &n, std::map<std::string, std::pair<int, std::string>> &unknown) {
    std::string target = string(n.get("target"), "a node's target");
    std::string name = n.getString("name").value_or("").str();
    std::string what = "node '" + name + "' (" + target + ")";
    std::string source;
    if (const json::Object *metadata = n.getObject("metadata"))
      source = tracedSourceText(metadata->getString("stack_trace").value_or("").str());
    // Size arithmetic: the export graph's symbolic-int operators are
    // TorchScript's int operators (folded once the sizes are known).
    // Operators by another name in TorchScript's table.
    static const std::map<std::string, std::pair<std::string, std::string>> renamedOps = {
        {"_operator.add", {"aten::add", "int"}},
        {"_operator.sub", {"aten::sub", "int"}},
        {"_operator.mul", {"aten::mul", "int"}},
        {"_operator.floordiv", {"aten::floordiv", "int"}},
        {"_operator.neg", {"aten::neg", "int"}},
        {"torch.ops.aten.sym_size.int", {"aten::size", "int"}},
        {"torch.ops.aten.sym_numel.default", {"aten::numel", ""}},
        // In-place dropout that RemoveTensorMutation cannot undo (its input
        // is read again): in eval mode it is the identity either way, and
        // the functional converter refuses it in training mode.
        {"torch.ops.aten.dropout_.default", {"aten::dropout", ""}},
        {"torch.ops.aten.feature_dropout_.default", {"aten::feature_dropout", ""}}};
    std::shared_ptr<torch::jit::Operator> found;
    if (auto renamed = renamedOps.find(target); renamed != renamedOps.end())
      found = jitOperator(renamed->second.first, renamed->second.second);
    else
      found = op(target, what);
    const json::Array &inputs = array(n.get("inputs"), what + " inputs");
    const json::Array &outputs = array(n.get("outputs"), what + " outputs");
    if (!found) {
      auto &entry = unknown[target];
      if (entry.first++ == 0)
        entry.second = source;
      // Its outputs stay undefined: a later reader fails with the list.
      return;
    }
    const c10::FunctionSchema &schema = found->schema();
    std::vector<Value *> operands;
    for (size_t i = 0; i < schema.arguments().size(); ++i) {
      const c10::Argument &formal = schema.arguments()[i];
      const json::Object *given = nullptr;
      for (size_t j = 0; j < inputs.size(); ++j) {
        const json::Object &input = object(&inputs[j], what + " input");
        if (input.getString("name").value_or("") == formal.name())
          given = &object(input.get("arg"), what + " argument '" + formal.name() + "'");
      }
      // By position: operators on symbolic ints (_operator.*) pass their
      // operands unnamed, and a renamed operator (dropout_ -> dropout) may
      // name one differently.
      if (!given && i < inputs.size()) {
        const json::Object &input = object(&inputs[i], what + " input");
        std::string inputName = input.getString("name").value_or("").str();
        bool namesAnother = llvm::any_of(schema.arguments(), [&](const c10::Argument &a) {
          return a.name() == inputName;
        });
        if (!namesAnother)
          given = &object(input.get("arg"), what + " argument '" + formal.name() + "'");
      }
      if (given)
        operands.push_back(argument(*given, formal, what + " argument '" + formal.name() + "'"));
      else if (formal.default_value())
        operands.push_back(constant(*formal.default_value()));
      else
        fail(what + " gives no value for '" + formal.name() + "', which has no default");
    }
    Node *jit = graph.create(c10::Symbol::fromQualString(schema.name()), operands,
                             schema.returns().size());
    graph.insertNode(jit);
    if (!source.empty())
      jit->setSourceRange(torch::jit::SourceRange(std::make_shared<torch::jit::Source>(source), 0,
                                                  source.size()));
    for (size_t r = 0; r < schema.returns().size(); ++r)
      jit->output(r)->setType(schema.returns()[r].type());
    if (!jit->maybeSchema())
      fail(what + ": its arguments do not match the schema " + c10::toString(schema));
    // Outputs: one per return (a tensor, a symbolic int, a list of tensors
    // unpacked by name).
    for (size_t r = 0; r < outputs.size() && r < jit->outputs().size(); ++r) {
      const json::Object &out = object(&outputs[r], what + " output");
      if (const json::Object *t = out.getObject("as_tensor")) {
        std::string outName = string(t->get("name"), what + " output");
        jit->output(r)->setDebugName(outName);
        values[outName] = jit->output(r);
      } else if (const json::Object *s = out.getObject("as_sym_int")) {
        values[string(s->get("as_name"), what + " output")] = jit->output(r);
      } else if (const json::Array *list = out.getArray("as_tensors")) {
        Node *unpack = graph.insertNode(graph.createListUnpack(jit->output(r), list->size()));
        for (size_t e = 0; e < list->size(); ++e) {
          std::string element = string(object(&(*list)[e], what).get("name"), what + " output");
          unpack->output(e)->setType(c10::TensorType::get());
          unpack->output(e)->setDebugName(element);
          values[element] = unpack->output(e);
        }
      } else if (!out.get("as_none")) {
        fail(what + " has an output of a kind kiln does not read");
      }
    }
  }
};

} // namespace

bool kiln::frontend::isPt2Archive(const std::string &path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    return reader.hasRecord("archive_format") || reader.hasRecord("models/model.json");
  } catch (const std::exception &) {
    return false;
  }
}

bool kiln::frontend::loadPt2Archive(const std::string &path, TorchScriptModule::State &state,
                                    std::string &error) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    std::string format = reader.hasRecord("archive_format") ? record(reader, "archive_format") : "";
    if (format != "pt2")
      fail("its archive_format is '" + format + "', not 'pt2'");
    if (reader.hasRecord("archive_version") && record(reader, "archive_version") != "0")
      fail("archive version " + record(reader, "archive_version") +
           " (this kiln reads version 0, written by torch 2.11)");
    if (!reader.hasRecord("models/model.json")) {
      for (const std::string &name : reader.getAllRecords())
        if (name.rfind("data/aotinductor/", 0) == 0)
          fail("it is an AOTInductor package (compiled code, no graph); kiln compiles the "
               "exported program itself: save it with torch.export.save");
      fail("it has no models/model.json (the exported graph)");
    }
    json::Value root = parseJson(record(reader, "models/model.json"), "models/model.json");
    const json::Object &program = object(&root, "models/model.json");
    const json::Object &version = object(program.get("schema_version"), "schema_version");
    int64_t major = integer(version.get("major"), "schema_version.major");
    if (major != kSchemaMajor)
      fail("export schema version " + std::to_string(major) + "." +
           std::to_string(version.getInteger("minor").value_or(0)) + " (this kiln reads " +
           std::to_string(kSchemaMajor) + ".x, written by torch 2.11)");
    const json::Object &module = object(program.get("graph_module"), "graph_module");
    const json::Object &graphJson = object(module.get("graph"), "graph_module.graph");
    const json::Object &signature = object(module.get("signature"), "graph_module.signature");
    const json::Object &tensorValues = object(graphJson.get("tensor_values"), "tensor_values");

    std::map<std::string, std::pair<int64_t, int64_t>> ranges;
    if (const json::Object *constraints = program.getObject("range_constraints"))
      for (const auto &[symbol, range] : *constraints) {
        const json::Object &r = object(&range, "range of " + symbol.str());
        ranges[symbol.str()] = {r.getInteger("min_val").value_or(0),
                                r.getInteger("max_val").value_or(INT64_MAX)};
      }

    std::map<std::string, at::Tensor> weights =
        readTensors(reader, "data/weights/model_weights_config.json", "data/weights/");
    std::map<std::string, at::Tensor> constants =
        readTensors(reader, "data/constants/model_constants_config.json", "data/constants/");

    state.graph = std::make_shared<Graph>();
    Graph &graph = *state.graph;
    GraphBuilder builder(graph);
    auto weight = [&](const std::map<std::string, at::Tensor> &from, const std::string &key,
                      const std::string &argName, const std::string &kind) {
      auto found = from.find(key);
      if (found == from.end())
        fail("the " + kind + " '" + key + "' has no stored tensor (a missing weight file?)");
      Value *value = graph.insertConstant(found->second);
      value->setDebugName("self." + key);
      builder.values[argName] = value;
    };
    for (const json::Value &specValue : array(signature.get("input_specs"), "input_specs")) {
      const json::Object &spec = object(&specValue, "an input spec");
      if (const json::Object *p = spec.getObject("parameter")) {
        weight(weights, string(p->get("parameter_name"), "a parameter"),
               string(object(p->get("arg"), "a parameter").get("name"), "a parameter"),
               "parameter");
      } else if (const json::Object *b = spec.getObject("buffer")) {
        std::string buffer = string(b->get("buffer_name"), "a buffer");
        weight(weights.count(buffer) ? weights : constants, buffer,
               string(object(b->get("arg"), "a buffer").get("name"), "a buffer"), "buffer");
      } else if (const json::Object *c = spec.getObject("tensor_constant")) {
        weight(constants, string(c->get("tensor_constant_name"), "a constant"),
               string(object(c->get("arg"), "a constant").get("name"), "a constant"),
               "constant");
      } else if (const json::Object *u = spec.getObject("user_input")) {
        const json::Object *tensor = object(u->get("arg"), "a user input").getObject("as_tensor");
        if (!tensor)
          fail("a user input is not a tensor (a Python number or object argument); kiln "
               "compiles models whose inputs are tensors");
        std::string name = string(tensor->get("name"), "a user input");
        Value *input = graph.addInput(name);
        input->setType(c10::TensorType::get());
        builder.values[name] = input;
        state.tensorInputs.push_back(input);
        const json::Object &meta = object(tensorValues.get(name), "tensor_values of " + name);
        TorchScriptModule::State::ExportedInput exported;
        exported.name = name;
        exported.dtype = dtypeName(scalarType(integer(meta.get("dtype"), name + " dtype")));
        for (const json::Value &size : array(meta.get("sizes"), name + " sizes")) {
          ExportedSize s = exportedSize(size, "a size of input '" + name + "'");
          TorchScriptModule::State::ExportedDim dim{s.value, s.symbol, s.value, s.value};
          if (!s.symbol.empty()) {
            auto range = ranges.find(s.symbol);
            dim.min = range != ranges.end() ? range->second.first : 0;
            dim.max = range != ranges.end() ? range->second.second : INT64_MAX;
          }
          exported.dims.push_back(dim);
        }
        state.exportedInputs.push_back(exported);
      } else {
        fail("an input spec of a kind kiln does not read (a custom object or token)");
      }
    }

    std::map<std::string, std::pair<int, std::string>> unknown;
    for (const json::Value &n : array(graphJson.get("nodes"), "graph nodes"))
      builder.node(object(&n, "a graph node"), unknown);
    if (!unknown.empty()) {
      std::string list;
      for (const auto &[target, use] : unknown)
        list += "\n  " + target + " (x" + std::to_string(use.first) + ")" +
                (use.second.empty() ? "" : " at " + use.second.substr(0, use.second.find('\n')));
      fail("it calls operators this LibTorch does not know:" + list);
    }

    for (const json::Value &specValue : array(signature.get("output_specs"), "output_specs")) {
      const json::Object &spec = object(&specValue, "an output spec");
      const json::Object *user = spec.getObject("user_output");
      if (!user)
        fail("the exported program mutates a buffer or an input (an output spec other than "
             "a user output); export the model in eval mode without in-place updates");
      const json::Object *tensor = object(user->get("arg"), "a user output").getObject("as_tensor");
      if (!tensor)
        fail("an output is not a tensor");
      graph.registerOutput(builder.named(string(tensor->get("name"), "a user output"),
                                         "an output"));
      state.outputNames.push_back("output" + std::to_string(state.outputNames.size()));
    }
    state.exportedGraph = graph.copy();
    return true;
  } catch (const Pt2Error &e) {
    error = "'" + path + "' is a torch.export archive kiln cannot read: " + e.what();
  } catch (const c10::Error &e) {
    error = "LibTorch could not read '" + path + "': " + e.what_without_backtrace();
  } catch (const std::exception &e) {
    error = "LibTorch could not read '" + path + "': " + e.what();
  }
  return false;
}
