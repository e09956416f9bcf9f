// RUN: kiln-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// Every verifier error of the kiln dialect, one case each. Type constraints
// (element types, static shapes) are ODS-generated; the rest are ours.

// -----

func.func @unsupported_element_type(%x: tensor<4xi8>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values}}
  %0 = kiln.neg %x : tensor<4xi8>
  return
}

// -----

func.func @dynamic_shape(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %0 = kiln.relu %x : tensor<?x4xf32>
  return
}

// -----

func.func @float_only_op_on_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = kiln.exp %x : tensor<4xi32>
  return
}

// -----

func.func @constant_type_mismatch() {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %0 = "kiln.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

func.func @constant_sparse() {
  // expected-error @+1 {{value must be a dense or dense_resource elements attribute}}
  %0 = kiln.constant sparse<[[0, 0]], [1.0]> : tensor<2x2xf32>
  return
}

// -----

func.func @clamp_without_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs at least one of 'min' and 'max'}}
  %0 = kiln.clamp %x : tensor<4xf32>
  return
}

// -----

func.func @clamp_nan(%x: tensor<4xf32>) {
  // expected-error @+1 {{bounds must not be NaN}}
  %0 = kiln.clamp %x min = 0x7FF8000000000000 : tensor<4xf32>
  return
}

// -----

func.func @clamp_inverted(%x: tensor<4xf32>) {
  // expected-error @+1 {{min (6.000000e+00) is greater than max (0.000000e+00)}}
  %0 = kiln.clamp %x min = 6.0 max = 0.0 : tensor<4xf32>
  return
}

// -----

func.func @clamp_fractional_integer_bound(%x: tensor<4xi64>) {
  // expected-error @+1 {{an integer tensor needs integral bounds, got 5.000000e-01}}
  %0 = kiln.clamp %x min = 0.5 : tensor<4xi64>
  return
}

// -----

func.func @cast_changes_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape [8, 4] must equal the input shape [4, 8]}}
  %0 = kiln.cast %x : tensor<4x8xf32> to tensor<8x4xf16>
  return
}

// -----

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{operands and result must share one element type, got 'f32' and 'f16'}}
  %0 = kiln.add %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @binary_not_broadcastable(%a: tensor<4x8xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+1 {{operands are not broadcast-compatible: rhs [5, 4] has size 4 in dimension 1 where the other operands have 8}}
  %0 = kiln.mul %a, %b : tensor<4x8xf32>, tensor<5x4xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @binary_wrong_result_shape(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{result shape [8] does not match the expected shape [4, 8]}}
  %0 = kiln.sub %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @where_element_types(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{on_true, on_false and the result must share one element type, got 'f32', 'f16' and 'f32'}}
  %0 = kiln.where %m, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @where_not_broadcastable(%m: tensor<3xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operands are not broadcast-compatible: on_true [4] has size 4 in dimension 0 where the other operands have 3}}
  %0 = kiln.where %m, %a, %b : tensor<3xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @where_wrong_result(%m: tensor<2x1xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{result shape [4] does not match the expected shape [2, 4]}}
  %0 = kiln.where %m, %a, %b : tensor<2x1xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @where_condition_not_bool(%m: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = kiln.where %m, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<4x1xf32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %0 = kiln.linear %x, %w : (tensor<f32>, tensor<4x1xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{weight must be 2-D [out_features, in_features], got shape [8]}}
  %0 = kiln.linear %x, %w : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @linear_in_features(%x: tensor<2x8xf32>, %w: tensor<16x9xf32>) {
  // expected-error @+1 {{input's last dimension (8) does not match the weight's in_features (9)}}
  %0 = kiln.linear %x, %w : (tensor<2x8xf32>, tensor<16x9xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @linear_bias_shape(%x: tensor<2x8xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{bias must have shape [16] (out_features), got [8]}}
  %0 = kiln.linear %x, %w, %b : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @linear_result_shape(%x: tensor<3x2x8xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{result shape [6, 16] does not match the expected shape [3, 2, 16]}}
  %0 = kiln.linear %x, %w : (tensor<3x2x8xf32>, tensor<16x8xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @linear_mixed_types(%x: tensor<2x8xf16>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{operands must share one element type, got 'f16' and 'f32'}}
  %0 = kiln.linear %x, %w : (tensor<2x8xf16>, tensor<16x8xf32>) -> tensor<2x16xf16>
  return
}

// -----

// fp32 accumulators come unrounded from 16-bit operands only.
func.func @linear_narrowing_result(%x: tensor<2x8xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{result must have the operands' element type, or f32 for f16 or bf16 operands, got 'f32' and 'f16'}}
  %0 = kiln.linear %x, %w : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf16>
  return
}

// -----

func.func @row_moments_shape(%x: tensor<4x8xf16>) {
  // expected-error @+1 {{statistics must have shape [4, 1] (the input's with its last dimension 1), got [4, 8]}}
  %mean, %rstd = kiln.row_moments %x eps = 1.0e-05 : tensor<4x8xf16> -> tensor<4x8xf32>
  return
}

// -----

func.func @row_moments_eps(%x: tensor<4x8xf16>) {
  // expected-error @+1 {{eps must be positive, got 0}}
  %mean, %rstd = kiln.row_moments %x eps = 0.0 : tensor<4x8xf16> -> tensor<4x1xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{lhs must be 2-D, got shape [2, 4, 8] (batched products are kiln.batch_matmul)}}
  %0 = kiln.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) {
  // expected-error @+1 {{contracting dimensions differ: lhs has K = 8, rhs has K = 7}}
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{result shape [3, 4] does not match the expected shape [4, 3]}}
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @batch_matmul_rank(%a: tensor<8xf32>, %b: tensor<2x8x3xf32>) {
  // expected-error @+1 {{lhs must have rank >= 2, got shape [8]}}
  %0 = kiln.batch_matmul %a, %b : (tensor<8xf32>, tensor<2x8x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @batch_matmul_no_batch(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{needs a batch dimension on at least one operand (2-D products are kiln.matmul)}}
  %0 = kiln.batch_matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @batch_matmul_contraction(%a: tensor<2x4x8xf32>, %b: tensor<2x9x3xf32>) {
  // expected-error @+1 {{contracting dimensions differ: lhs has K = 8, rhs has K = 9}}
  %0 = kiln.batch_matmul %a, %b : (tensor<2x4x8xf32>, tensor<2x9x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @batch_matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x3xf32>) {
  // expected-error @+1 {{batch dimensions are not broadcast-compatible: lhs has 2 in dimension 0, rhs has 3 in dimension 0}}
  %0 = kiln.batch_matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @batch_matmul_result(%a: tensor<2x4x8xf32>, %b: tensor<1x8x3xf32>) {
  // expected-error @+1 {{result shape [1, 4, 3] does not match the expected shape [2, 4, 3]}}
  %0 = kiln.batch_matmul %a, %b : (tensor<2x4x8xf32>, tensor<1x8x3xf32>) -> tensor<1x4x3xf32>
  return
}

// -----

func.func @reduce_no_dims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{needs at least one dimension to reduce}}
  %0 = kiln.reduce_sum %x dims = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_dim_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for a rank-2 input}}
  %0 = kiln.reduce_max %x dims = [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_negative_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension -1 is out of range for a rank-2 input}}
  %0 = kiln.reduce_mean %x dims = [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_unsorted(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dims must be sorted and distinct, got [1, 0]}}
  %0 = kiln.reduce_sum %x dims = [1, 0] : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape [4] does not match the expected shape [4, 1]}}
  %0 = kiln.reduce_sum %x dims = [1] keepdim : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{operands and result must share one element type, got 'f32' and 'f16'}}
  %0 = kiln.reduce_sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf16>
  return
}

// -----

func.func @softmax_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dim 2 is out of range for a rank-2 input}}
  %0 = kiln.softmax %x dim = 2 : tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_types(%x: tensor<4x8xf32>, %w: tensor<8xf16>) {
  // expected-error @+1 {{operands and result must share one element type, got 'f32' and 'f16'}}
  %0 = kiln.layer_norm %x weight %w axis = 1 eps = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @rms_norm_bias(%x: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{rms normalization takes no bias}}
  %0 = kiln.layer_norm %x bias %b axis = 1 eps = 1.0e-05 rms : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<32xf32>' must equal the input type 'tensor<4x8xf32>'}}
  %0 = kiln.layer_norm %x axis = 1 eps = 1.0e-05 : (tensor<4x8xf32>) -> tensor<32xf32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 input}}
  %0 = kiln.layer_norm %x axis = 2 eps = 1.0e-05 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_weight(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{weight shape [4, 8] must equal the normalized shape [8]}}
  %0 = kiln.layer_norm %x weight %w axis = 1 eps = 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<4x8xf32>, %b: tensor<7xf32>) {
  // expected-error @+1 {{bias shape [7] must equal the normalized shape [4, 8]}}
  %0 = kiln.layer_norm %x bias %b axis = 0 eps = 1.0e-05 : (tensor<4x8xf32>, tensor<7xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_eps(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{eps must be positive, got 0.000000e+00}}
  %0 = kiln.layer_norm %x axis = 1 eps = 0.0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{operands and result must share one element type, got 'f32' and 'f16'}}
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<32xf16>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{element count changes from 32 to 33}}
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<3x11xf32>
  return
}

// -----

func.func @permute_length(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation has 3 entries for a rank-2 input}}
  %0 = kiln.permute %x [0, 1, 2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @permute_invalid(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation [1, 1] is not a permutation of 0..1}}
  %0 = kiln.permute %x [1, 1] : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @permute_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape [4, 8] does not match the expected shape [8, 4]}}
  %0 = kiln.permute %x [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{needs at least one input}}
  %0 = kiln.concat dim = 0 : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{operands and result must share one element type, got 'f32' and 'f16'}}
  %0 = kiln.concat %a, %b dim = 0 : (tensor<4xf32>, tensor<4xf16>) -> tensor<8xf32>
  return
}

// -----

func.func @concat_dim(%a: tensor<4xf32>) {
  // expected-error @+1 {{dim 1 is out of range for a rank-1 input}}
  %0 = kiln.concat %a, %a dim = 1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<4x2xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{input 1 has rank 1 where input 0 has rank 2}}
  %0 = kiln.concat %a, %b dim = 0 : (tensor<4x2xf32>, tensor<8xf32>) -> tensor<8x2xf32>
  return
}

// -----

func.func @concat_sizes(%a: tensor<4x2xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+1 {{input 1 has size 5 in dimension 0 where input 0 has 4}}
  %0 = kiln.concat %a, %b dim = 1 : (tensor<4x2xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{result shape [4, 6] does not match the expected shape [4, 5]}}
  %0 = kiln.concat %a, %b dim = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @slice_offsets_length(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{offsets has 1 entries for a rank-2 input}}
  %0 = kiln.slice %x offsets = [0] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_strides_length(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{strides has 3 entries for a rank-2 input}}
  %0 = kiln.slice %x offsets = [0, 0] strides = [1, 1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_result_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result rank 1 must equal the input rank 2}}
  %0 = kiln.slice %x offsets = [0, 0] strides = [1, 1] : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{stride in dimension 0 must be >= 1, got 0}}
  %0 = kiln.slice %x offsets = [0, 0] strides = [0, 1] : tensor<4x8xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @slice_negative_offset(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{offset in dimension 1 must be non-negative, got -1}}
  %0 = kiln.slice %x offsets = [0, -1] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%x: tensor<4x512xf32>) {
  // expected-error @+1 {{dimension 1: 300 elements from offset 256 with stride 1 run past the input size 512}}
  %0 = kiln.slice %x offsets = [0, 256] strides = [1, 1] : tensor<4x512xf32> -> tensor<4x300xf32>
  return
}

// -----

func.func @slice_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{operands and result must share one element type, got 'f32' and 'f16'}}
  %0 = kiln.slice %x offsets = [0, 0] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf16>
  return
}

// -----

func.func @fusion_argument_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{body has 2 arguments but the group has 1 inputs}}
  %0 = kiln.fusion elementwise ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_argument_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{body argument 0 has type 'tensor<4xf16>' but input 0 has type 'tensor<4xf32>'}}
  %0 = kiln.fusion elementwise ins(%a : tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: tensor<4xf16>):
    kiln.yield %x : tensor<4xf16>
  }
  return
}

// -----

func.func @fusion_no_results(%a: tensor<4xf32>) {
  // expected-error @+1 {{must produce at least one result}}
  "kiln.fusion"(%a) <{kind = #kiln<fusion_kind elementwise>}> ({
  ^bb0(%x: tensor<4xf32>):
    kiln.yield
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @fusion_foreign_terminator(%a: tensor<4xf32>) {
  // expected-error @+1 {{body must end in kiln.yield}}
  %0 = kiln.fusion elementwise ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    "test.terminator"(%x) : (tensor<4xf32>) -> ()
  }
  return
}

// -----

func.func @fusion_yield_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{yields 1 values but the group has 2 results}}
  %0:2 = kiln.fusion elementwise ins(%a : tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_yield_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{yielded value 0 has type 'tensor<4xf32>' but result 0 has type 'tensor<4xf16>'}}
  %0 = kiln.fusion elementwise ins(%a : tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_foreign_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{body may hold only kiln ops, found 'test.op'}}
  %0 = kiln.fusion elementwise ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %y = "test.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %y : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_nested(%a: tensor<4xf32>) {
  // expected-error @+1 {{fusion groups do not nest}}
  %0 = kiln.fusion reduction ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %y = kiln.fusion elementwise ins(%x : tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%z: tensor<4xf32>):
      kiln.yield %z : tensor<4xf32>
    }
    kiln.yield %y : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_elementwise_kind(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{an elementwise group cannot hold 'kiln.matmul'}}
  %0 = kiln.fusion elementwise ins(%a : tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %y = kiln.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    kiln.yield %y : tensor<4x4xf32>
  }
  return
}

// -----

func.func @fusion_captures_outside_value(%a: tensor<4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = kiln.fusion elementwise ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    %y = kiln.add %x, %a : tensor<4xf32>
    kiln.yield %y : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_outside_fusion(%a: tensor<4xf32>) {
  // expected-error @+1 {{expects parent op 'kiln.fusion'}}
  kiln.yield %a : tensor<4xf32>
}

// -----

func.func @unknown_fusion_kind(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::kiln::FusionKind to be one of: elementwise, reduction, normalization, gemm_epilogue, conv_epilogue, attention, pooling}}
  // expected-error @+1 {{failed to parse Kiln_FusionKindAttr parameter 'value' which is to be a `::kiln::FusionKind`}}
  %0 = kiln.fusion elementwize ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_gemm_without_gemm(%a: tensor<4xf32>) {
  // expected-error @+1 {{a gemm_epilogue group holds exactly one linear, matmul or batch_matmul, found 0}}
  %0 = kiln.fusion gemm_epilogue ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %y = kiln.relu %x : tensor<4xf32>
    kiln.yield %y : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_two_gemms(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{a gemm_epilogue group holds exactly one linear, matmul or batch_matmul, found 2}}
  %0 = kiln.fusion gemm_epilogue ins(%a : tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %y = kiln.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %z = kiln.matmul %y, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    kiln.yield %z : tensor<4x4xf32>
  }
  return
}

// -----

func.func @fusion_normalization_foreign(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{a normalization group cannot hold 'kiln.permute'}}
  %0 = kiln.fusion normalization ins(%a : tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %p = kiln.permute %x [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
    %y = kiln.softmax %p dim = 1 : tensor<4x4xf32>
    kiln.yield %y : tensor<4x4xf32>
  }
  return
}

// -----

func.func @fusion_normalization_without_anchor(%a: tensor<4xf32>) {
  // expected-error @+1 {{a normalization group holds exactly one layer_norm or softmax, found 0}}
  %0 = kiln.fusion normalization ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_reduction_without_reduction(%a: tensor<4xf32>) {
  // expected-error @+1 {{a reduction group holds at least one reduction}}
  %0 = kiln.fusion reduction ins(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %y = kiln.exp %x : tensor<4xf32>
    kiln.yield %y : tensor<4xf32>
  }
  return
}

// -----

func.func @conv_rank(%x: tensor<6x6x4xf32>, %w: tensor<8x3x3x4xf32>) {
  // expected-error @+1 {{input must be 4-D [N, H, W, C], got shape [6, 6, 4]}}
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x6x6x4xf32>, %w: tensor<6x3x3x2xf32>) {
  // expected-error @+1 {{groups (4) must divide the input channels (4) and the output channels (6)}}
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 4 : (tensor<1x6x6x4xf32>, tensor<6x3x3x2xf32>) -> tensor<1x4x4x6xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x6x6x4xf32>, %w: tensor<8x3x3x2xf32>) {
  // expected-error @+1 {{weight has 2 input channels per group; the input has 4 in 1 group}}
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x4xf32>, tensor<8x3x3x2xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<1x6x6x4xf32>, %w: tensor<8x3x3x4xf32>) {
  // expected-error @+1 {{strides entries must be >= 1, got [0, 1]}}
  %0 = kiln.conv2d %x, %w strides = [0, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @conv_padding(%x: tensor<1x6x6x4xf32>, %w: tensor<8x3x3x4xf32>) {
  // expected-error @+1 {{padding must have 4 entries, got 2}}
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : (tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

func.func @conv_window(%x: tensor<1x2x2x4xf32>, %w: tensor<8x3x3x4xf32>) {
  // expected-error @+1 {{the 3x3 window does not fit the padded 2x2 input}}
  %0 = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x2x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x1x1x8xf32>
  return
}

// -----

func.func @conv_result(%x: tensor<1x6x6x4xf32>, %w: tensor<8x3x3x4xf32>) {
  // expected-error @+1 {{result shape}}
  %0 = kiln.conv2d %x, %w strides = [2, 2] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x6x6x4xf32>, %w: tensor<8x3x3x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must have shape [8], got [4]}}
  %0 = kiln.conv2d %x, %w, %b strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>, tensor<4xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @pool_padding(%x: tensor<1x6x6x4xf32>) {
  // expected-error @+1 {{padding [2, 2, 2, 2] must be at most half the kernel [3, 3]}}
  %0 = kiln.pool2d %x max kernel = [3, 3] strides = [1, 1] padding = [2, 2, 2, 2] : tensor<1x6x6x4xf32> -> tensor<1x8x8x4xf32>
  return
}

// -----

func.func @pool_include_pad(%x: tensor<1x6x6x4xf32>) {
  // expected-error @+1 {{count_include_pad applies to average pooling only}}
  %0 = kiln.pool2d %x max kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] count_include_pad : tensor<1x6x6x4xf32> -> tensor<1x3x3x4xf32>
  return
}

// -----

func.func @pool_result(%x: tensor<1x7x7x4xf32>) {
  // expected-error @+1 {{result shape}}
  %0 = kiln.pool2d %x avg kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] : tensor<1x7x7x4xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @conv_group_anchor(%x: tensor<4xf32>) {
  // expected-error @+1 {{a conv_epilogue group holds exactly one conv2d, found 0}}
  %0 = kiln.fusion conv_epilogue ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = kiln.relu %a : tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @elementwise_group_moves_computed_value(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{an elementwise group holds 'kiln.permute' only on the group's inputs}}
  %0 = kiln.fusion elementwise ins(%x : tensor<4x8xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %r = kiln.relu %a : tensor<4x8xf32>
    %p = kiln.permute %r [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    kiln.yield %p : tensor<8x4xf32>
  }
  return
}

// -----

// A mean in a conv_epilogue group is its global average pool (over H and
// W, yielded as the group's result) or nothing.
func.func @conv_group_partial_pool(%x: tensor<1x7x7x8xf16>, %w: tensor<8x1x1x8xf16>) {
  // expected-error @+1 {{a conv_epilogue group holds 'kiln.reduce_mean' only as the mean over dims [1, 2] of a value it computes, yielded as its one result}}
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x7x7x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x7x1x8xf16> {
  ^bb0(%a: tensor<1x7x7x8xf16>, %k: tensor<8x1x1x8xf16>):
    %y = kiln.conv2d %a, %k strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x7x7x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x7x7x8xf16>
    %m = kiln.reduce_mean %y dims = [2] keepdim : tensor<1x7x7x8xf16> -> tensor<1x7x1x8xf16>
    kiln.yield %m : tensor<1x7x1x8xf16>
  }
  return
}

// -----

func.func @conv_group_pool_not_last(%x: tensor<1x7x7x8xf16>, %w: tensor<8x1x1x8xf16>) {
  // expected-error @+1 {{a conv_epilogue group holds 'kiln.reduce_mean' only as the mean over dims [1, 2] of a value it computes, yielded as its one result}}
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x7x7x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x1x1x8xf16> {
  ^bb0(%a: tensor<1x7x7x8xf16>, %k: tensor<8x1x1x8xf16>):
    %y = kiln.conv2d %a, %k strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x7x7x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x7x7x8xf16>
    %m = kiln.reduce_mean %y dims = [1, 2] keepdim : tensor<1x7x7x8xf16> -> tensor<1x1x1x8xf16>
    %r = kiln.relu %m : tensor<1x1x1x8xf16>
    kiln.yield %r : tensor<1x1x1x8xf16>
  }
  return
}

// -----

func.func @conv_group_other_permute(%x: tensor<1x6x3x6xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{a conv_epilogue group holds 'kiln.permute' only as the NCHW -> NHWC permute [0, 2, 3, 1] of an input that feeds the convolution's input alone}}
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x6x3x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x4x4x8xf32> {
  ^bb0(%a: tensor<1x6x3x6xf32>, %k: tensor<8x3x3x3xf32>):
    %n = kiln.permute %a [0, 1, 3, 2] : tensor<1x6x3x6xf32> -> tensor<1x6x6x3xf32>
    %c = kiln.conv2d %n, %k strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x4x4x8xf32>
    kiln.yield %c : tensor<1x4x4x8xf32>
  }
  return
}

// -----

func.func @conv_group_concat_for_a_3x3(%x: tensor<1x6x6x8xf16>, %y: tensor<1x6x6x8xf16>, %w: tensor<8x3x3x16xf16>) {
  // expected-error @+1 {{a conv_epilogue group holds 'kiln.concat' only as the channel concat of inputs (whole or strided slices from the origin) that a 1x1 convolution reads alone}}
  %0 = kiln.fusion conv_epilogue ins(%x, %y, %w : tensor<1x6x6x8xf16>, tensor<1x6x6x8xf16>, tensor<8x3x3x16xf16>) -> tensor<1x4x4x8xf16> {
  ^bb0(%a: tensor<1x6x6x8xf16>, %b: tensor<1x6x6x8xf16>, %k: tensor<8x3x3x16xf16>):
    %j = kiln.concat %a, %b dim = 3 : (tensor<1x6x6x8xf16>, tensor<1x6x6x8xf16>) -> tensor<1x6x6x16xf16>
    %c = kiln.conv2d %j, %k strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x6x6x16xf16>, tensor<8x3x3x16xf16>) -> tensor<1x4x4x8xf16>
    kiln.yield %c : tensor<1x4x4x8xf16>
  }
  return
}

// -----

func.func @conv_group_offset_slice(%x: tensor<1x4x4x8xf16>, %y: tensor<1x9x9x8xf16>, %w: tensor<8x1x1x16xf16>) {
  // expected-error @+1 {{a conv_epilogue group holds 'kiln.slice' only as the channel concat of inputs (whole or strided slices from the origin) that a 1x1 convolution reads alone}}
  %0 = kiln.fusion conv_epilogue ins(%x, %y, %w : tensor<1x4x4x8xf16>, tensor<1x9x9x8xf16>, tensor<8x1x1x16xf16>) -> tensor<1x4x4x8xf16> {
  ^bb0(%a: tensor<1x4x4x8xf16>, %b: tensor<1x9x9x8xf16>, %k: tensor<8x1x1x16xf16>):
    %s = kiln.slice %b offsets = [0, 1, 1, 0] strides = [1, 2, 2, 1] : tensor<1x9x9x8xf16> -> tensor<1x4x4x8xf16>
    %j = kiln.concat %a, %s dim = 3 : (tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>) -> tensor<1x4x4x16xf16>
    %c = kiln.conv2d %j, %k strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x4x16xf16>, tensor<8x1x1x16xf16>) -> tensor<1x4x4x8xf16>
    kiln.yield %c : tensor<1x4x4x8xf16>
  }
  return
}

// -----

func.func @attention_head_size(%q: tensor<2x7x64xf16>, %k: tensor<2x9x32xf16>, %v: tensor<2x9x32xf16>) {
  // expected-error @+1 {{query has head size 64 but key has 32}}
  %0 = kiln.attention %q, %k, %v scale = 0.125 : (tensor<2x7x64xf16>, tensor<2x9x32xf16>, tensor<2x9x32xf16>) -> tensor<2x7x32xf16>
  return
}

// -----

func.func @attention_positions(%q: tensor<2x7x64xf16>, %k: tensor<2x9x64xf16>, %v: tensor<2x8x64xf16>) {
  // expected-error @+1 {{key has 9 positions but value has 8}}
  %0 = kiln.attention %q, %k, %v scale = 0.125 : (tensor<2x7x64xf16>, tensor<2x9x64xf16>, tensor<2x8x64xf16>) -> tensor<2x7x64xf16>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x7x64xf16>, %k: tensor<3x9x64xf16>, %v: tensor<3x9x64xf16>) {
  // expected-error @+1 {{query, key and value must share their leading dimensions}}
  %0 = kiln.attention %q, %k, %v scale = 0.125 : (tensor<2x7x64xf16>, tensor<3x9x64xf16>, tensor<3x9x64xf16>) -> tensor<2x7x64xf16>
  return
}

// -----

func.func @attention_mask(%q: tensor<2x7x64xf16>, %m: tensor<2x7x8xf16>) {
  // expected-error @+1 {{mask [2, 7, 8] does not broadcast to the scores [2, 7, 7]}}
  %0 = kiln.attention %q, %q, %q mask %m scale = 0.125 : (tensor<2x7x64xf16>, tensor<2x7x64xf16>, tensor<2x7x64xf16>, tensor<2x7x8xf16>) -> tensor<2x7x64xf16>
  return
}

// -----

func.func @attention_mask_type(%q: tensor<2x7x64xf16>, %m: tensor<7x7xf32>) {
  // expected-error @+1 {{mask must be boolean or of the query's element type, got 'f32'}}
  %0 = kiln.attention %q, %q, %q mask %m scale = 0.125 : (tensor<2x7x64xf16>, tensor<2x7x64xf16>, tensor<2x7x64xf16>, tensor<7x7xf32>) -> tensor<2x7x64xf16>
  return
}

// -----

func.func @attention_scale(%q: tensor<2x7x64xf16>) {
  // expected-error @+1 {{scale must be positive}}
  %0 = kiln.attention %q, %q, %q scale = 0.0 : (tensor<2x7x64xf16>, tensor<2x7x64xf16>, tensor<2x7x64xf16>) -> tensor<2x7x64xf16>
  return
}

// -----

func.func @gather_shape(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{result shape [3, 5] does not match the expected shape [3, 4]}}
  %0 = kiln.gather %t, %i : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x5xf32>
  return
}

// -----

func.func @compare_types(%a: tensor<3xf32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{compares 'f32' with 'i64': operands must share one element type}}
  %0 = kiln.lt %a, %b : tensor<3xf32>, tensor<3xi64> -> tensor<3xi1>
  return
}

// -----

func.func @broadcast_shrinks(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape [1, 8] does not match the expected shape [4, 8]}}
  %0 = kiln.broadcast %a : tensor<4x8xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @attention_group(%x: tensor<4xf32>) {
  // expected-error @+1 {{an attention group holds exactly one attention, found 0}}
  %0 = kiln.fusion attention ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = kiln.relu %a : tensor<4xf32>
    kiln.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @attention_group_view(%x: tensor<2x8x64xf16>) {
  // expected-error @+1 {{an attention group holds 'kiln.permute' only as a view of an input that feeds the attention's query, key or value}}
  %0 = kiln.fusion attention ins(%x : tensor<2x8x64xf16>) -> tensor<2x64x8xf16> {
  ^bb0(%a: tensor<2x8x64xf16>):
    %o = kiln.attention %a, %a, %a scale = 0.125 : (tensor<2x8x64xf16>, tensor<2x8x64xf16>, tensor<2x8x64xf16>) -> tensor<2x8x64xf16>
    %r = kiln.relu %o : tensor<2x8x64xf16>
    %t = kiln.permute %r [0, 2, 1] : tensor<2x8x64xf16> -> tensor<2x64x8xf16>
    kiln.yield %t : tensor<2x64x8xf16>
  }
  return
}

// -----

func.func @cumsum_dim(%x: tensor<5x3xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = kiln.cumsum %x dim = 2 : tensor<5x3xf32> -> tensor<5x3xf32>
  return
}

// -----

func.func @cumsum_float_to_int(%x: tensor<5x3xf32>) {
  // expected-error @+1 {{running sums of floats stay floats}}
  %0 = kiln.cumsum %x dim = 0 : tensor<5x3xf32> -> tensor<5x3xi64>
  return
}

// -----

module {
  kiln.cuda_kernel @k elementwise source "extern \"C\" __global__ void k(float *y) {}"
  func.func @launch_without_images(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{has no launch configuration (one per target image)}}
    %0 = kiln.launch elementwise ins(%x : tensor<4xf32>) images [] -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module {
  kiln.cuda_kernel @k elementwise source "extern \"C\" __global__ void k(float *y) {}"
  func.func @launch_image_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{has two configurations for image 'sm_80'}}
    %0 = kiln.launch elementwise ins(%x : tensor<4xf32>) images [#kiln.launch<arch = "sm_80", kernel = @k, grid = [1, 1, 1], block = 32>, #kiln.launch<arch = "sm_80", kernel = @k, grid = [1, 1, 1], block = 32>] -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

func.func @launch_missing_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{names kernel @nowhere for image 'sm_80', which is no kiln.cuda_kernel of the module}}
  %0 = kiln.launch elementwise ins(%x : tensor<4xf32>) images [#kiln.launch<arch = "sm_80", kernel = @nowhere, grid = [1, 1, 1], block = 32>] -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

module {
  kiln.cuda_kernel @k reduction source "extern \"C\" __global__ void k(float *y) {}"
  func.func @launch_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{is a elementwise launch but kernel @k implements reduction}}
    %0 = kiln.launch elementwise ins(%x : tensor<4xf32>) images [#kiln.launch<arch = "sm_80", kernel = @k, grid = [1, 1, 1], block = 32>] -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module {
  kiln.cuda_kernel @k gemm_epilogue source "extern \"C\" __global__ void k(float *y) {}"
  func.func @launch_map_input(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
    // expected-error @+1 {{has a tensor map of input 1 but 1 inputs}}
    %0 = kiln.launch gemm_epilogue ins(%x : tensor<64x64xf16>) images [#kiln.launch<arch = "sm_90a", kernel = @k, grid = [1, 1, 1], block = 384, tensor_maps = [#kiln.tensor_map<input = 1, dims = [64, 64], box = [64, 64]>]>] -> tensor<64x64xf16>
    return %0 : tensor<64x64xf16>
  }
}

// -----

func.func @launch_block(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a block has 1 to 1024 threads, got 2048}}
  %0 = kiln.launch elementwise ins(%x : tensor<4xf32>) images [#kiln.launch<arch = "sm_80", kernel = @k, grid = [1, 1, 1], block = 2048>] -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @launch_grid(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a grid is [x, y, z] within CUDA's limits}}
  %0 = kiln.launch elementwise ins(%x : tensor<4xf32>) images [#kiln.launch<arch = "sm_80", kernel = @k, grid = [1, 65536, 1], block = 32>] -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @tensor_map_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{a tensor map has 2 to 5 dimensions, got 1}}
  // expected-error @+1 {{failed to parse Kiln_LaunchConfigAttr parameter 'tensor_maps'}}
  %0 = kiln.launch elementwise ins(%x : tensor<4xf32>) images [#kiln.launch<arch = "sm_80", kernel = @k, grid = [1, 1, 1], block = 32, tensor_maps = [#kiln.tensor_map<input = 0, dims = [64], box = [64]>]>] -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

module {
  // expected-error @+1 {{has no kernel function named 'k' in its source}}
  kiln.cuda_kernel @k elementwise source "extern \"C\" __global__ void other(float *y) {}"
}
// -----

// conv_stem runs 1, 2 or 4 blocks a multiprocessor.
func.func @stem_three_blocks(%x: tensor<1x64x64x3xf16>, %w: tensor<64x7x7x3xf16>) -> tensor<1x32x32x64xf16> {
  // expected-error @+1 {{conv_stem's blocks_per_sm must be 1, 2 or 4, got 3}}
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x64x64x3xf16>, tensor<64x7x7x3xf16>) {kiln.kernel = #kiln.kernel<variant = conv_stem, tile = [128, 64, 224], grid_limit = 396, blocks_per_sm = 3>} -> tensor<1x32x32x64xf16> {
  ^bb0(%a: tensor<1x64x64x3xf16>, %aw: tensor<64x7x7x3xf16>):
    %y = kiln.conv2d %a, %aw strides = [2, 2] padding = [3, 3, 3, 3] dilation = [1, 1] groups = 1 : (tensor<1x64x64x3xf16>, tensor<64x7x7x3xf16>) -> tensor<1x32x32x64xf16>
    kiln.yield %y : tensor<1x32x32x64xf16>
  }
  return %0 : tensor<1x32x32x64xf16>
}

// -----

// Other kernels than the Hopper GEMM, convolution, stem, streaming GEMM and
// depthwise convolution take one block.
func.func @conv_mma_blocks(%x: tensor<1x16x16x16xf16>, %w: tensor<16x3x3x16xf16>) -> tensor<1x16x16x16xf16> {
  // expected-error @+1 {{only gemm_wgmma, conv_wgmma, conv_stem, gemm_stream and conv_depthwise take blocks_per_sm}}
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x16x16x16xf16>, tensor<16x3x3x16xf16>) {kiln.kernel = #kiln.kernel<variant = conv_mma, tile = [128, 128, 32], blocks_per_sm = 2>} -> tensor<1x16x16x16xf16> {
  ^bb0(%a: tensor<1x16x16x16xf16>, %aw: tensor<16x3x3x16xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : (tensor<1x16x16x16xf16>, tensor<16x3x3x16xf16>) -> tensor<1x16x16x16xf16>
    kiln.yield %y : tensor<1x16x16x16xf16>
  }
  return %0 : tensor<1x16x16x16xf16>
}

// -----

// conv_depthwise: 1 to 8 blocks a multiprocessor (its launch bounds' minimum
// over 256 threads).

func.func @depthwise_blocks(%x: tensor<1x16x16x16xf16>, %w: tensor<16x3x3x1xf16>) -> tensor<1x16x16x16xf16> {
  // expected-error @+1 {{conv_depthwise's blocks_per_sm must be 1 to 8, got 9}}
  %0 = kiln.fusion conv_epilogue ins(%x, %w : tensor<1x16x16x16xf16>, tensor<16x3x3x1xf16>) {kiln.kernel = #kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 8, blocks_per_sm = 9>} -> tensor<1x16x16x16xf16> {
  ^bb0(%a: tensor<1x16x16x16xf16>, %aw: tensor<16x3x3x1xf16>):
    %y = kiln.conv2d %a, %aw strides = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 16 : (tensor<1x16x16x16xf16>, tensor<16x3x3x1xf16>) -> tensor<1x16x16x16xf16>
    kiln.yield %y : tensor<1x16x16x16xf16>
  }
  return %0 : tensor<1x16x16x16xf16>
}

// -----

// gemm_stream: 1 to 4 blocks a multiprocessor, 128-row tiles of 64-column
// chunks over K padded to 16, a ring of 2 to 4 stages.

func.func @stream_blocks(%x: tensor<1000x24xf16>, %w: tensor<24x24xf16>) -> tensor<1000x24xf16> {
  // expected-error @+1 {{gemm_stream's blocks_per_sm must be 1 to 4, got 5}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1000x24xf16>, tensor<24x24xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_stream, tile = [128, 64, 32], stages = 2, grid_limit = 8, blocks_per_sm = 5>} -> tensor<1000x24xf16> {
  ^bb0(%a: tensor<1000x24xf16>, %bw: tensor<24x24xf16>):
    %l = kiln.linear %a, %bw : (tensor<1000x24xf16>, tensor<24x24xf16>) -> tensor<1000x24xf16>
    kiln.yield %l : tensor<1000x24xf16>
  }
  return %0 : tensor<1000x24xf16>
}

// -----

func.func @stream_tile(%x: tensor<1000x24xf16>, %w: tensor<24x24xf16>) -> tensor<1000x24xf16> {
  // expected-error @+1 {{a gemm_stream tile is [128, 64, K padded to 16]}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1000x24xf16>, tensor<24x24xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_stream, tile = [128, 128, 32], stages = 2, grid_limit = 8, blocks_per_sm = 2>} -> tensor<1000x24xf16> {
  ^bb0(%a: tensor<1000x24xf16>, %bw: tensor<24x24xf16>):
    %l = kiln.linear %a, %bw : (tensor<1000x24xf16>, tensor<24x24xf16>) -> tensor<1000x24xf16>
    kiln.yield %l : tensor<1000x24xf16>
  }
  return %0 : tensor<1000x24xf16>
}

// -----

func.func @stream_stages(%x: tensor<1000x24xf16>, %w: tensor<24x24xf16>) -> tensor<1000x24xf16> {
  // expected-error @+1 {{gemm_stream's ring takes 2 to 4 stages, got 5}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<1000x24xf16>, tensor<24x24xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_stream, tile = [128, 64, 32], stages = 5, grid_limit = 8, blocks_per_sm = 2>} -> tensor<1000x24xf16> {
  ^bb0(%a: tensor<1000x24xf16>, %bw: tensor<24x24xf16>):
    %l = kiln.linear %a, %bw : (tensor<1000x24xf16>, tensor<24x24xf16>) -> tensor<1000x24xf16>
    kiln.yield %l : tensor<1000x24xf16>
  }
  return %0 : tensor<1000x24xf16>
}

// -----

// Sizes at run time are the Hopper and split-K GEMMs' and the
// normalizations' (their rows) alone.
func.func @runtime_sizes_mma(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  // expected-error @+1 {{runtime_sizes takes gemm_wgmma, gemm_split_k, normalization or normalization_warp}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x768xf16>, tensor<768x768xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_mma, tile = [128, 128, 32], runtime_sizes = true>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x768xf16>, %bw: tensor<768x768xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// gemm_wgmma_swap: 64 weight rows by 16, 32, 64, 96, 112 or 128 tokens,
// clusters of 1, 2, 4 or 8, none of the Hopper GEMM's other switches.

func.func @swap_tile(%x: tensor<128x256xf16>, %w: tensor<768x256xf16>) -> tensor<128x768xf16> {
  // expected-error @+1 {{a gemm_wgmma_swap tile is [64, TOKENS, 64], TOKENS 16, 32, 64, 96, 112 or 128}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x256xf16>, tensor<768x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 48, 64], stages = 4, multicast = 4>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x256xf16>, %bw: tensor<768x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x256xf16>, tensor<768x256xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

func.func @swap_cluster(%x: tensor<128x256xf16>, %w: tensor<768x256xf16>) -> tensor<128x768xf16> {
  // expected-error @+1 {{gemm_wgmma_swap's clusters are 1, 2, 4 or 8 blocks, got 3}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x256xf16>, tensor<768x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 4, multicast = 3>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x256xf16>, %bw: tensor<768x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x256xf16>, tensor<768x256xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

func.func @swap_split(%x: tensor<128x256xf16>, %w: tensor<768x256xf16>) -> tensor<128x768xf16> {
  // expected-error @+1 {{gemm_wgmma_swap takes no schedule, blocks_per_sm, split_k, stream_k, runtime_sizes or residual_ring}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x256xf16>, tensor<768x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 4, split_k = 2, multicast = 4>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x256xf16>, %bw: tensor<768x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x256xf16>, tensor<768x256xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

func.func @swap_stages(%x: tensor<128x256xf16>, %w: tensor<768x256xf16>) -> tensor<128x768xf16> {
  // expected-error @+1 {{gemm_wgmma_swap's ring takes at least 3 stages (two consumers each hold one), got 2}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x256xf16>, tensor<768x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 2, multicast = 4>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x256xf16>, %bw: tensor<768x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x256xf16>, tensor<768x256xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}

// -----

// Pairs sharing A: gemm_wgmma's clusters of two (a convolution's pixel
// boxes have no multicast A).

func.func @multicast_a_single(%x: tensor<300x256xf16>, %w: tensor<768x256xf16>) -> tensor<300x768xf16> {
  // expected-error @+1 {{multicast_a takes gemm_wgmma with multicast = 2}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<300x256xf16>, tensor<768x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 132, multicast_a = true>} -> tensor<300x768xf16> {
  ^bb0(%a: tensor<300x256xf16>, %bw: tensor<768x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<300x256xf16>, tensor<768x256xf16>) -> tensor<300x768xf16>
    kiln.yield %l : tensor<300x768xf16>
  }
  return %0 : tensor<300x768xf16>
}

// -----

func.func @multicast_a_swap(%x: tensor<128x256xf16>, %w: tensor<768x256xf16>) -> tensor<128x768xf16> {
  // expected-error @+1 {{multicast_a takes gemm_wgmma with multicast = 2}}
  %0 = kiln.fusion gemm_epilogue ins(%x, %w : tensor<128x256xf16>, tensor<768x256xf16>) {kiln.kernel = #kiln.kernel<variant = gemm_wgmma_swap, tile = [64, 16, 64], stages = 4, multicast = 2, multicast_a = true>} -> tensor<128x768xf16> {
  ^bb0(%a: tensor<128x256xf16>, %bw: tensor<768x256xf16>):
    %l = kiln.linear %a, %bw : (tensor<128x256xf16>, tensor<768x256xf16>) -> tensor<128x768xf16>
    kiln.yield %l : tensor<128x768xf16>
  }
  return %0 : tensor<128x768xf16>
}
