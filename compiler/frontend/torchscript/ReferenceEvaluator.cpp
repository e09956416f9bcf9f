//===- ReferenceEvaluator.cpp - run kiln IR on the CPU with ATen ----------===//

#include "ReferenceEvaluator.h"
#include "kiln/Dialect/Kiln/KilnAttributes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/Window.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace kiln;

std::optional<c10::ScalarType> kiln::frontend::scalarTypeOf(Type element) {
  if (element.isF32())
    return c10::kFloat;
  if (element.isF16())
    return c10::kHalf;
  if (element.isBF16())
    return c10::kBFloat16;
  if (element.isInteger(64))
    return c10::kLong;
  if (element.isInteger(32))
    return c10::kInt;
  if (element.isInteger(1))
    return c10::kBool;
  return std::nullopt;
}

namespace {
using frontend::scalarTypeOf;

std::vector<int64_t> shapeOf(Type type) {
  auto shape = cast<RankedTensorType>(type).getShape();
  return {shape.begin(), shape.end()};
}

c10::ScalarType dtypeOf(Type type) {
  return *scalarTypeOf(cast<RankedTensorType>(type).getElementType());
}

bool isReduced(const at::Tensor &t) {
  return t.scalar_type() == c10::kHalf || t.scalar_type() == c10::kBFloat16;
}

/// Runs `compute` in fp32 when `t` is fp16/bf16 and rounds the result back,
/// the way kiln's kernels accumulate.
template <typename Fn>
at::Tensor inFloat32(const at::Tensor &t, Fn compute,
                     std::optional<c10::ScalarType> resultType = std::nullopt) {
  if (!isReduced(t))
    return compute([](const at::Tensor &x) { return x; });
  return compute([](const at::Tensor &x) { return x.defined() ? x.to(c10::kFloat) : x; })
      .to(resultType.value_or(t.scalar_type()));
}

/// Rounds fp32 values to tf32 (10-bit mantissa, nearest even), as tensor
/// cores do with operands of a GEMM marked kiln.tf32.
at::Tensor roundToTf32(const at::Tensor &t) {
  if (t.scalar_type() != c10::kFloat)
    return t;
  at::Tensor bits = t.contiguous().view(c10::kInt);
  at::Tensor lsb = bits.bitwise_right_shift(13).bitwise_and(1);
  at::Tensor rounded = (bits + 0xFFF + lsb).bitwise_and(static_cast<int32_t>(0xFFFFE000));
  // Leave infinities and NaNs alone.
  at::Tensor special = bits.bitwise_and(0x7F800000).eq(0x7F800000);
  return at::where(special, bits, rounded).view(c10::kFloat);
}

/// kiln.conv2d: NHWC in and out; ATen's convolution runs on NCHW after an
/// explicit (possibly asymmetric) zero padding.
at::Tensor conv2d(const at::Tensor &x, const at::Tensor &w, const at::Tensor &bias,
                  Conv2dOp op) {
  ArrayRef<int64_t> p = op.getPadding();
  std::vector<int64_t> strides(op.getStrides().begin(), op.getStrides().end());
  std::vector<int64_t> dilation(op.getDilation().begin(), op.getDilation().end());
  // Symmetric padding goes to ATen as PyTorch's own convolution passes it,
  // on contiguous NCHW tensors: then ATen picks the algorithm (and summation
  // order) it picks for the original model, and fp32 results agree to the
  // last bits across ResNet-50's 53 convolutions. Asymmetric padding
  // ("same" with an even kernel) is padded explicitly.
  bool symmetric = p[0] == p[2] && p[1] == p[3];
  std::vector<int64_t> padding = symmetric ? std::vector<int64_t>{p[0], p[1]}
                                           : std::vector<int64_t>{0, 0};
  return inFloat32(x, [&](auto up) {
    at::Tensor input = up(x).permute({0, 3, 1, 2}).contiguous();
    if (!symmetric)
      input = at::constant_pad_nd(input, {p[1], p[3], p[0], p[2]}, 0);
    at::Tensor y = at::conv2d(input, up(w).permute({0, 3, 1, 2}).contiguous(),
                              bias.defined() ? std::optional<at::Tensor>(up(bias))
                                             : std::nullopt,
                              strides, c10::IntArrayRef(padding), dilation,
                              static_cast<int64_t>(op.getGroups()));
    return y.permute({0, 2, 3, 1}).contiguous();
  });
}

/// kiln.pool2d with PyTorch's semantics for any padding: the input padded
/// explicitly (-inf for max, 0 for sums), windows of the padded input
/// trimmed to the op's output size (ceil mode may add a window that starts
/// in the trailing padding, which PyTorch drops), and averages divided by
/// PyTorch's divisor: the window clipped to the padded input with
/// count_include_pad, else the input elements it covers.
at::Tensor pool2d(const at::Tensor &x, Pool2dOp op) {
  ArrayRef<int64_t> k = op.getKernel(), s = op.getStrides(), p = op.getPadding();
  std::vector<int64_t> kernel(k.begin(), k.end()), strides(s.begin(), s.end());
  std::vector<int64_t> zeros = {0, 0}, ones = {1, 1};
  const int64_t H = x.size(1), W = x.size(2);
  const int64_t OH = poolOutputSize(H, k[0], s[0], p[0], p[2], op.getCeilMode());
  const int64_t OW = poolOutputSize(W, k[1], s[1], p[1], p[3], op.getCeilMode());
  std::vector<int64_t> pads = {p[1], p[3], p[0], p[2]};
  if (op.getKind() == PoolKind::max) {
    at::Tensor padded = at::constant_pad_nd(x.permute({0, 3, 1, 2}), pads,
                                            -std::numeric_limits<double>::infinity());
    at::Tensor y = at::max_pool2d(padded, kernel, strides, zeros, ones, op.getCeilMode());
    return y.slice(2, 0, OH).slice(3, 0, OW).permute({0, 2, 3, 1}).contiguous();
  }
  return inFloat32(x, [&](auto up) {
    at::Tensor padded = at::constant_pad_nd(up(x).permute({0, 3, 1, 2}), pads, 0);
    at::Tensor sums = at::avg_pool2d(padded, kernel, strides, zeros, op.getCeilMode(),
                                     /*count_include_pad=*/true, /*divisor_override=*/1)
                          .slice(2, 0, OH)
                          .slice(3, 0, OW);
    at::Tensor divisor = at::empty({OH, OW}, at::TensorOptions().dtype(c10::kFloat));
    auto d = divisor.accessor<float, 2>();
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        int64_t h0 = i * s[0] - p[0], w0 = j * s[1] - p[1];
        int64_t h1 = std::min(h0 + k[0], H + p[2]), w1 = std::min(w0 + k[1], W + p[3]);
        int64_t windowSize = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, H), w1 = std::min(w1, W);
        d[i][j] = static_cast<float>(op.getCountIncludePad() ? windowSize
                                                             : (h1 - h0) * (w1 - w0));
      }
    return (sums / divisor).permute({0, 2, 3, 1}).contiguous();
  });
}

/// kiln.attention: softmax(q k^T * scale + mask) v over the last two
/// dimensions, fp16/bf16 computed in fp32 and rounded once. A boolean mask
/// keeps the scores where it is true; `causal` keeps keys j <= query i. A
/// query row whose every score is masked gets zeros, as PyTorch's
/// scaled_dot_product_attention gives (its math path's _safe_softmax).
at::Tensor attention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                     const at::Tensor &mask, AttentionOp op) {
  const double inf = std::numeric_limits<double>::infinity();
  return inFloat32(q, [&](auto up) {
    at::Tensor s = at::matmul(up(q), up(k).transpose(-2, -1)) * op.getScale().convertToDouble();
    if (mask.defined())
      s = mask.scalar_type() == c10::kBool ? s.masked_fill(mask.logical_not(), -inf)
                                           : s + up(mask);
    if (op.getCausal()) {
      int64_t sq = s.size(-2), sk = s.size(-1);
      at::Tensor above = at::ones({sq, sk}, at::TensorOptions().dtype(c10::kBool)).triu(1);
      s = s.masked_fill(above, -inf);
    }
    at::Tensor p = at::softmax(s, -1);
    at::Tensor allMasked = s.eq(-inf).all(-1, /*keepdim=*/true);
    return at::matmul(p.masked_fill(allMasked, 0.0), up(v));
  });
}

/// kiln.gather: table rows by index; indices outside [0, V) clamp, as the
/// kernel does (PyTorch would raise).
at::Tensor gather(const at::Tensor &table, const at::Tensor &indices,
                  const std::vector<int64_t> &resultShape) {
  at::Tensor rows = indices.reshape({-1}).to(c10::kLong).clamp(0, table.size(0) - 1);
  return table.index_select(0, rows).reshape(resultShape);
}

std::optional<at::Tensor> constantTensor(ConstantOp op, std::string &error) {
  auto type = cast<RankedTensorType>(op.getType());
  c10::ScalarType dtype = dtypeOf(type);
  std::vector<int64_t> shape = shapeOf(type);
  if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue())) {
    std::vector<double> values;
    if (isa<FloatType>(type.getElementType()))
      for (const APFloat &v : dense.getValues<APFloat>())
        values.push_back(v.convertToDouble());
    else
      for (const APInt &v : dense.getValues<APInt>())
        values.push_back(type.getElementType().isInteger(1)
                             ? static_cast<double>(v.getZExtValue())
                             : static_cast<double>(v.getSExtValue()));
    return at::tensor(values, at::TensorOptions().dtype(c10::kDouble))
        .reshape(shape)
        .to(dtype);
  }
  auto resource = cast<DenseResourceElementsAttr>(op.getValue());
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob) {
    error = "kiln.constant: the dense_resource blob '" +
            resource.getRawHandle().getKey().str() + "' has no data";
    return std::nullopt;
  }
  ArrayRef<char> bytes = blob->getData();
  at::Tensor tensor = at::empty(shape, at::TensorOptions().dtype(dtype));
  if (static_cast<size_t>(tensor.nbytes()) != bytes.size()) {
    error = "kiln.constant: blob '" + resource.getRawHandle().getKey().str() +
            "' holds " + std::to_string(bytes.size()) + " bytes, the type needs " +
            std::to_string(tensor.nbytes());
    return std::nullopt;
  }
  std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
  return tensor;
}

class Evaluator {
public:
  std::string error;

  std::optional<std::vector<at::Tensor>> run(Block &block,
                                              const std::vector<at::Tensor> &args) {
    for (auto [arg, tensor] : llvm::zip(block.getArguments(), args))
      values[arg] = tensor;
    for (Operation &op : block) {
      if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
        std::vector<at::Tensor> results;
        for (Value v : op.getOperands())
          results.push_back(values.lookup(v));
        return results;
      }
      if (!evaluate(op))
        return std::nullopt;
    }
    error = "block without terminator";
    return std::nullopt;
  }

private:
  llvm::DenseMap<Value, at::Tensor> values;

  at::Tensor in(Value v) { return values.lookup(v); }
  /// A GEMM operand, rounded to tf32 when the op allows tf32 math.
  at::Tensor gemmIn(Operation *op, Value v) {
    return op->hasAttr(attr::kTf32) ? roundToTf32(in(v)) : in(v);
  }

  bool fail(Operation &op, const std::string &why) {
    std::string location;
    llvm::raw_string_ostream os(location);
    op.getLoc().print(os);
    error = op.getName().getStringRef().str() + " at " + location + ": " + why;
    return false;
  }

  bool evaluate(Operation &op) {
    std::optional<std::vector<at::Tensor>> results = compute(op);
    if (!results)
      return error.empty() ? fail(op, "the reference evaluator does not know this op")
                           : false;
    for (auto [value, tensor] : llvm::zip(op.getResults(), *results)) {
      std::vector<int64_t> expected = shapeOf(value.getType());
      if (tensor.sizes().vec() != expected || tensor.scalar_type() != dtypeOf(value.getType()))
        return fail(op, "computed a " + std::string(c10::toString(tensor.scalar_type())) +
                            " tensor of shape " + c10::str(tensor.sizes()) +
                            " where the IR declares " + c10::str(c10::IntArrayRef(expected)));
      values[value] = tensor.contiguous();
    }
    return true;
  }

  std::optional<std::vector<at::Tensor>> compute(Operation &op) {
    using Result = std::optional<std::vector<at::Tensor>>;
    auto one = [](at::Tensor t) -> Result { return std::vector<at::Tensor>{t}; };
    return llvm::TypeSwitch<Operation *, Result>(&op)
        .Case([&](ConstantOp c) -> Result {
          auto t = constantTensor(c, error);
          return t ? one(*t) : Result();
        })
        .Case([&](NegOp o) { return one(at::neg(in(o.getInput()))); })
        .Case([&](AbsOp o) { return one(at::abs(in(o.getInput()))); })
        .Case([&](ReluOp o) { return one(at::relu(in(o.getInput()))); })
        .Case([&](ExpOp o) { return one(at::exp(in(o.getInput()))); })
        .Case([&](LogOp o) { return one(at::log(in(o.getInput()))); })
        .Case([&](SqrtOp o) { return one(at::sqrt(in(o.getInput()))); })
        .Case([&](RsqrtOp o) { return one(at::rsqrt(in(o.getInput()))); })
        .Case([&](TanhOp o) { return one(at::tanh(in(o.getInput()))); })
        .Case([&](SigmoidOp o) { return one(at::sigmoid(in(o.getInput()))); })
        .Case([&](ErfOp o) { return one(at::erf(in(o.getInput()))); })
        .Case([&](SiluOp o) { return one(at::silu(in(o.getInput()))); })
        .Case([&](GeluOp o) {
          return one(at::gelu(in(o.getInput()),
                              o.getApproximate() == GeluApproximation::tanh ? "tanh" : "none"));
        })
        .Case([&](ClampOp o) {
          std::optional<at::Scalar> lo, hi;
          if (auto min = o.getMinAttr())
            lo = min.getValueAsDouble();
          if (auto max = o.getMaxAttr())
            hi = max.getValueAsDouble();
          return one(at::clamp(in(o.getInput()), lo, hi));
        })
        .Case([&](CastOp o) { return one(in(o.getInput()).to(dtypeOf(o.getType()))); })
        .Case([&](AddOp o) { return one(at::add(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](SubOp o) { return one(at::sub(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](MulOp o) { return one(at::mul(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](DivOp o) {
          at::Tensor l = in(o.getLhs()), r = in(o.getRhs());
          return one(at::isFloatingType(l.scalar_type()) ? at::div(l, r)
                                                         : at::div(l, r, "trunc"));
        })
        .Case([&](MaxOp o) { return one(at::maximum(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](MinOp o) { return one(at::minimum(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](PowOp o) { return one(at::pow(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](EqOp o) { return one(at::eq(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](NeOp o) { return one(at::ne(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](LtOp o) { return one(at::lt(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](LeOp o) { return one(at::le(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](GtOp o) { return one(at::gt(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](GeOp o) { return one(at::ge(in(o.getLhs()), in(o.getRhs()))); })
        .Case([&](BroadcastOp o) {
          return one(in(o.getInput()).expand(shapeOf(o.getType())));
        })
        .Case([&](WhereOp o) {
          return one(at::where(in(o.getCondition()), in(o.getOnTrue()), in(o.getOnFalse())));
        })
        .Case([&](LinearOp o) {
          at::Tensor x = in(o.getInput());
          at::Tensor bias = o.getBias() ? in(o.getBias()) : at::Tensor();
          // An f32 result of 16-bit operands is the accumulators unrounded.
          return one(inFloat32(x, [&](auto up) {
                       return at::linear(up(gemmIn(o, o.getInput())),
                                         up(gemmIn(o, o.getWeight())),
                                         bias.defined() ? std::optional<at::Tensor>(up(bias))
                                                        : std::nullopt);
                     }, dtypeOf(o.getType())));
        })
        .Case([&](MatmulOp o) {
          at::Tensor l = in(o.getLhs());
          return one(inFloat32(l, [&](auto up) {
            return at::matmul(up(gemmIn(o, o.getLhs())), up(gemmIn(o, o.getRhs())));
          }));
        })
        .Case([&](BatchMatmulOp o) {
          at::Tensor l = in(o.getLhs());
          return one(inFloat32(l, [&](auto up) {
            return at::matmul(up(gemmIn(o, o.getLhs())), up(gemmIn(o, o.getRhs())));
          }));
        })
        .Case([&](AttentionOp o) {
          return one(attention(in(o.getQuery()), in(o.getKey()), in(o.getValue()),
                               o.getMask() ? in(o.getMask()) : at::Tensor(), o));
        })
        .Case([&](CumsumOp o) {
          // fp16 and bf16 sums run in fp32, as the kernel's (and ATen's
          // CUDA cumsum's) accumulator does, rounded once.
          c10::ScalarType type = dtypeOf(o.getType());
          at::Tensor x = in(o.getInput());
          if (type == c10::kHalf || type == c10::kBFloat16)
            return one(at::cumsum(x.to(c10::kFloat), o.getDim()).to(type));
          return one(at::cumsum(x, o.getDim(), type));
        })
        .Case([&](GatherOp o) {
          return one(gather(in(o.getTable()), in(o.getIndices()), shapeOf(o.getType())));
        })
        .Case([&](Conv2dOp o) {
          return one(conv2d(in(o.getInput()), in(o.getWeight()),
                            o.getBias() ? in(o.getBias()) : at::Tensor(), o));
        })
        .Case([&](Pool2dOp o) { return one(pool2d(in(o.getInput()), o)); })
        .Case([&](ReduceSumOp o) {
          at::Tensor x = in(o.getInput());
          return one(inFloat32(x, [&](auto up) {
            return at::sum(up(x), o.getDims(), o.getKeepdim());
          }).to(x.scalar_type()));
        })
        .Case([&](ReduceMeanOp o) {
          at::Tensor x = in(o.getInput());
          return one(inFloat32(x, [&](auto up) {
            return at::mean(up(x), o.getDims(), o.getKeepdim());
          }));
        })
        .Case([&](ReduceMaxOp o) {
          return one(at::amax(in(o.getInput()), o.getDims(), o.getKeepdim()));
        })
        .Case([&](SoftmaxOp o) {
          at::Tensor x = in(o.getInput());
          return one(inFloat32(x, [&](auto up) {
            return o.getLog() ? at::log_softmax(up(x), o.getDim()) : at::softmax(up(x), o.getDim());
          }));
        })
        .Case([&](RowMomentsOp o) -> Result {
          at::Tensor x = in(o.getInput()).to(c10::kFloat);
          auto [variance, mean] = at::var_mean(x, {-1}, /*correction=*/0, /*keepdim=*/true);
          at::Tensor spread = o.getRms() ? x.pow(2).mean({-1}, /*keepdim=*/true) : variance;
          return std::vector<at::Tensor>{mean,
                                         at::rsqrt(spread + o.getEps().convertToDouble())};
        })
        .Case([&](LayerNormOp o) {
          at::Tensor x = in(o.getInput());
          std::vector<int64_t> normalized(x.sizes().begin() + o.getAxis(), x.sizes().end());
          at::Tensor w = o.getWeight() ? in(o.getWeight()) : at::Tensor();
          at::Tensor b = o.getBias() ? in(o.getBias()) : at::Tensor();
          if (o.getRms()) {
            std::vector<int64_t> dims;
            for (int64_t d = o.getAxis(); d < x.dim(); ++d)
              dims.push_back(d);
            return one(inFloat32(x, [&](auto up) {
              at::Tensor y = up(x) * at::rsqrt(up(x).pow(2).mean(dims, /*keepdim=*/true) +
                                               o.getEps().convertToDouble());
              return w.defined() ? y * up(w) : y;
            }));
          }
          return one(inFloat32(x, [&](auto up) {
            return at::layer_norm(up(x), normalized,
                                  w.defined() ? std::optional<at::Tensor>(up(w)) : std::nullopt,
                                  b.defined() ? std::optional<at::Tensor>(up(b)) : std::nullopt,
                                  o.getEps().convertToDouble());
          }));
        })
        .Case([&](ReshapeOp o) { return one(in(o.getInput()).reshape(shapeOf(o.getType()))); })
        .Case([&](PermuteOp o) { return one(in(o.getInput()).permute(o.getPermutation())); })
        .Case([&](ConcatOp o) {
          std::vector<at::Tensor> parts;
          for (Value v : o.getInputs())
            parts.push_back(in(v));
          return one(at::cat(parts, o.getDim()));
        })
        .Case([&](SliceOp o) {
          at::Tensor x = in(o.getInput());
          std::vector<int64_t> sizes = shapeOf(o.getType());
          for (size_t d = 0; d < sizes.size(); ++d) {
            int64_t start = o.getOffsets()[d], stride = o.getStrides()[d];
            x = x.slice(d, start, start + std::max<int64_t>(sizes[d] - 1, 0) * stride +
                                      (sizes[d] > 0 ? 1 : 0), stride);
          }
          return one(x);
        })
        .Case([&](FusionOp o) -> Result {
          std::vector<at::Tensor> args;
          for (Value v : o.getInputs())
            args.push_back(in(v));
          Evaluator nested;
          auto results = nested.run(o.getBody().front(), args);
          if (!results)
            error = nested.error;
          return results;
        })
        .Default([](Operation *) { return Result(); });
  }
};
} // namespace

std::optional<std::vector<at::Tensor>>
kiln::frontend::evaluateReference(func::FuncOp function,
                                  const std::vector<at::Tensor> &inputs,
                                  std::string &error) {
  Block &entry = function.getBody().front();
  if (inputs.size() != entry.getNumArguments()) {
    error = "@" + function.getName().str() + " takes " +
            std::to_string(entry.getNumArguments()) + " inputs, got " +
            std::to_string(inputs.size());
    return std::nullopt;
  }
  Evaluator evaluator;
  auto results = evaluator.run(entry, inputs);
  if (!results)
    error = evaluator.error;
  return results;
}

std::optional<at::Tensor> kiln::frontend::constantValue(Operation *constant,
                                                        std::string &error) {
  auto op = dyn_cast<ConstantOp>(constant);
  if (!op) {
    error = "not a kiln.constant";
    return std::nullopt;
  }
  return constantTensor(op, error);
}
