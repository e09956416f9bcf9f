// RUN: kiln-opt %s --kiln-merge-shortcut-conv=min-bytes=1024 | FileCheck %s --check-prefix=MERGED
// RUN: kiln-opt %s --kiln-merge-shortcut-conv=min-bytes=1025 | FileCheck %s --check-prefix=KEPT
// RUN: kiln-opt %s --kiln-merge-shortcut-conv=min-bytes=-1 | FileCheck %s --check-prefix=KEPT
// RUN: kiln-opt %s "--kiln-merge-shortcut-conv=min-bytes=0 targets=sm_80" | FileCheck %s --check-prefix=KEPT
// RUN: kiln-opt %s "--kiln-merge-shortcut-conv=min-bytes=0 conv-wgmma=false" | FileCheck %s --check-prefix=KEPT
// RUN: kiln-opt %s "--kiln-merge-shortcut-conv=min-bytes=0 targets=sm_90a,sm_80" | FileCheck %s --check-prefix=MERGED

// The policy: a result of at least min-bytes (here 1024: 2 x 4 x 4 x 16
// fp16), and a primary target whose convolutions run as conv_wgmma, the
// one main loop that reads a channel concat in place (sm_80 has none;
// conv-wgmma=false turns it off). Other images run the concat's mma.sync
// fallback.
// MERGED: kiln.concat
// MERGED-NOT: kiln.add
// KEPT-NOT: kiln.concat
// KEPT: kiln.add
func.func @policy(%h: tensor<2x4x4x8xf16>, %x: tensor<2x4x4x8xf16>) -> tensor<2x4x4x16xf16> {
  %w = kiln.constant dense<1.0> : tensor<16x1x1x8xf16>
  %c = kiln.conv2d %h, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x4x4x8xf16>, tensor<16x1x1x8xf16>) -> tensor<2x4x4x16xf16>
  %d = kiln.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x4x4x8xf16>, tensor<16x1x1x8xf16>) -> tensor<2x4x4x16xf16>
  %s = kiln.add %c, %d : tensor<2x4x4x16xf16>
  return %s : tensor<2x4x4x16xf16>
}
