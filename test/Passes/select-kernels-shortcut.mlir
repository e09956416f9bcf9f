// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels))" | FileCheck %s
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{targets=sm_80}))" 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-select-kernels{conv-wgmma=false}))" 2>&1 | FileCheck %s --check-prefix=OFF

// A 1x1 convolution over a channel concat (a merged projection shortcut)
// runs as conv_wgmma however few its tiles: no other main loop reads the
// concat in place. The pixel boxes stay within TMA's 256 elements at the
// strided part's stride (here 2 x 8 x 8 pixels, 16 columns of x).
// CHECK: kiln.kernel = #kiln.kernel<variant = conv_wgmma, tile = [128, {{[0-9]+}}, 64], {{.*}}pixel_tile = [2, 8, 8]
// Elsewhere the selection names why it cannot be.
// SM80: error: 'kiln.fusion' op reads a channel concat in place, which only conv_wgmma does; not conv_wgmma: sm_80 has no wgmma
// OFF: error: 'kiln.fusion' op reads a channel concat in place, which only conv_wgmma does; not conv_wgmma: off (conv-wgmma=false)
func.func @shortcut(%h: tensor<2x8x8x64xf16>, %x: tensor<2x16x16x128xf16>, %w: tensor<256x1x1x192xf16>, %b: tensor<256xf16>) -> tensor<2x8x8x256xf16> {
  %0 = kiln.fusion conv_epilogue ins(%h, %x, %w, %b : tensor<2x8x8x64xf16>, tensor<2x16x16x128xf16>, tensor<256x1x1x192xf16>, tensor<256xf16>) -> tensor<2x8x8x256xf16> {
  ^bb0(%ah: tensor<2x8x8x64xf16>, %ax: tensor<2x16x16x128xf16>, %aw: tensor<256x1x1x192xf16>, %ab: tensor<256xf16>):
    %s = kiln.slice %ax offsets = [0, 0, 0, 0] strides = [1, 2, 2, 1] : tensor<2x16x16x128xf16> -> tensor<2x8x8x128xf16>
    %j = kiln.concat %ah, %s dim = 3 : (tensor<2x8x8x64xf16>, tensor<2x8x8x128xf16>) -> tensor<2x8x8x192xf16>
    %y = kiln.conv2d %j, %aw, %ab strides = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<2x8x8x192xf16>, tensor<256x1x1x192xf16>, tensor<256xf16>) -> tensor<2x8x8x256xf16>
    %r = kiln.relu %y : tensor<2x8x8x256xf16>
    kiln.yield %r : tensor<2x8x8x256xf16>
  }
  return %0 : tensor<2x8x8x256xf16>
}
