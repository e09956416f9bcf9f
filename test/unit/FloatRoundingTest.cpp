//===- FloatRoundingTest.cpp - fp32 <-> fp16 / bf16 bits against APFloat ===//
//
// The fast fp32 -> fp16 / bf16 rounding must give APFloat's bits (round to
// nearest, ties to even) wherever it answers: on a stride through every bit
// pattern, and on the ties and near-ties of every exponent.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/FloatRounding.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

namespace {

uint16_t reference(uint32_t bits, bool toHalf) {
  llvm::APFloat value(llvm::APFloat::IEEEsingle(), llvm::APInt(32, bits));
  bool lossy;
  value.convert(toHalf ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat(),
                llvm::APFloat::rmNearestTiesToEven, &lossy);
  return static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
}

void expectSame(uint32_t bits, bool toHalf, int &answered) {
  std::optional<uint16_t> fast = kiln::roundFloatBits(bits, toHalf);
  if (!fast)
    return;
  ++answered;
  ASSERT_EQ(*fast, reference(bits, toHalf))
      << std::hex << "bits 0x" << bits << (toHalf ? " to fp16" : " to bf16");
}

TEST(FloatRounding, MatchesAPFloatOnAStrideThroughEveryPattern) {
  for (bool toHalf : {true, false}) {
    int answered = 0;
    for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 1021)
      expectSame(static_cast<uint32_t>(bits), toHalf, answered);
    // Most patterns take the fast path (fp16: below 2^16, half of them).
    EXPECT_GT(answered, toHalf ? 2000000 : 4000000);
  }
}

TEST(FloatRounding, MatchesAPFloatOnFp16SubnormalTies) {
  // Below 2^-14 the dropped bits are 126 - exponent of the 24-bit mantissa:
  // ties, near-ties and the carry into the smallest normal at each exponent.
  int answered = 0;
  for (uint32_t exponent = 95; exponent <= 113; ++exponent) {
    const uint32_t shift = exponent < 127 ? 126 - exponent : 0;
    for (uint32_t sign : {0u, 1u})
      for (uint32_t kept : {0u, 1u, 2u, 3u, 0x1ffu, 0x3ffu})
        for (int32_t delta : {-1, 0, 1}) {
          if (shift == 0 || shift > 24)
            continue;
          uint64_t mantissa = (uint64_t(kept) << shift) + (1ull << (shift - 1)) + delta;
          mantissa = (mantissa | 0x800000u) & 0xffffffu;
          uint32_t bits = (sign << 31) | (exponent << 23) | uint32_t(mantissa & 0x7fffffu);
          expectSame(bits, /*toHalf=*/true, answered);
        }
  }
  for (uint32_t bits : {0x00000001u, 0x007fffffu, 0x33000000u, 0x33000001u, 0x387fffffu,
                        0x387ff000u, 0x387fe000u, 0x38800000u, 0xb3000000u, 0xb3800000u})
    expectSame(bits, /*toHalf=*/true, answered);
  EXPECT_GT(answered, 200);
}

TEST(FloatRounding, MatchesAPFloatOnTiesAndNearTies) {
  int answered = 0;
  for (uint32_t exponent = 0; exponent < 256; ++exponent)
    for (uint32_t sign : {0u, 1u})
      for (uint32_t high : {0u, 1u, 2u, 0x3feu, 0x3ffu, 0x155u})
        for (uint32_t low : {0x0fffu, 0x1000u, 0x1001u, 0x1fffu, 0u}) {
          // fp16 keeps 10 mantissa bits: `high` above the 13 dropped ones.
          uint32_t bits = (sign << 31) | (exponent << 23) | (high << 13) | low;
          expectSame(bits, /*toHalf=*/true, answered);
          // bf16 keeps 7: ties at 0x8000 in the low 16 bits.
          uint32_t bf = (sign << 31) | (exponent << 23) | ((high & 0x7fu) << 16) |
                        (low == 0x1000u ? 0x8000u : low == 0x0fffu ? 0x7fffu : low << 3);
          expectSame(bf, /*toHalf=*/false, answered);
        }
  EXPECT_GT(answered, 10000);
}

} // namespace

// Widening is exact: every fp16 and bf16 pattern gives APFloat's fp32 bits
// (a NaN a NaN: APFloat may move its payload).
TEST(FloatRounding, WideningMatchesAPFloatOnEveryPattern) {
  for (bool fromHalf : {true, false})
    for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
      llvm::APFloat value(fromHalf ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat(),
                          llvm::APInt(16, bits));
      bool lossy;
      value.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lossy);
      const float fast = kiln::widenHalfBits(static_cast<uint16_t>(bits), fromHalf);
      if (value.isNaN()) {
        EXPECT_TRUE(fast != fast) << std::hex << "bits 0x" << bits;
        continue;
      }
      uint32_t fastBits;
      __builtin_memcpy(&fastBits, &fast, 4);
      ASSERT_EQ(fastBits, static_cast<uint32_t>(value.bitcastToAPInt().getZExtValue()))
          << std::hex << "bits 0x" << bits << (fromHalf ? " from fp16" : " from bf16");
    }
}
