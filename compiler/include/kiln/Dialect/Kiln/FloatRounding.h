//===- FloatRounding.h - fp32 to fp16 / bf16 without APFloat -----*- C++ -*-===//
//
// Lowering a model's precision rounds every weight; APFloat, one element at
// a time, took most of a BERT-base compile. This is the bit arithmetic for
// the common cases, checked against APFloat bit for bit
// (test/unit/FloatRoundingTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_FLOATROUNDING_H
#define KILN_DIALECT_KILN_FLOATROUNDING_H

#include <cstdint>
#include <optional>

namespace kiln {

/// fp32 bits rounded to nearest even into fp16 or bf16 bits, without
/// APFloat (a model's weights are 10^8 elements: APFloat took seconds), for
/// the values where the bit arithmetic is exact: every value but NaN for
/// bf16; for fp16 every value below 2^16 (fp16's subnormals included: small
/// weights are common, and APFloat on them was most of what was left of the
/// rounding's time). Nothing otherwise (infinities, NaN, 2^16 and above).
inline std::optional<uint16_t> roundFloatBits(uint32_t bits, bool toHalf) {
  uint32_t magnitude = bits & 0x7fffffffu;
  if (!toHalf) {
    if (magnitude > 0x7f800000u) // NaN: APFloat keeps its payload rules
      return std::nullopt;
    return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
  uint32_t sign = (bits >> 16) & 0x8000u;
  if (magnitude == 0)
    return static_cast<uint16_t>(sign);
  if (magnitude >= 0x47800000u)
    return std::nullopt;
  if (magnitude < 0x38800000u) {
    // Below 2^-14: multiples of fp16's 2^-24, that is the mantissa (with its
    // leading 1) shifted right by 126 - exponent, rounded to nearest even
    // (up to 2^-14 itself, whose bits follow on). Below 2^-25: zero.
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 102)
      return static_cast<uint16_t>(sign);
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent; // 14 to 24
    uint32_t units = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    units += static_cast<uint32_t>(rest > halfway) |
             (static_cast<uint32_t>(rest == halfway) & units & 1u);
    return static_cast<uint16_t>(sign | units);
  }
  // 2^-14 <= |x| < 2^16: a normal fp16 after rounding, or infinity.
  uint32_t half = (((magnitude >> 23) - 112u) << 10) | ((magnitude & 0x7fffffu) >> 13);
  uint32_t rest = magnitude & 0x1fffu;
  // Without a branch: the rounding direction of random weights is a coin
  // flip, and a mispredicted branch per element tripled the time. A carry
  // into the exponent is the right rounding, up to infinity.
  half += static_cast<uint32_t>(rest > 0x1000u) |
          (static_cast<uint32_t>(rest == 0x1000u) & half & 1u);
  return static_cast<uint16_t>(sign | half);
}

/// fp16 or bf16 bits as the fp32 value they hold (exactly: both widen
/// without rounding), for reading a weight's elements without APFloat.
inline float widenHalfBits(uint16_t bits, bool fromHalf) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16; // bf16: fp32's top half
  if (fromHalf) {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
    if (exponent - 1u < 30u) { // normal: nearly every weight
      wide = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    } else if (exponent == 0x1fu) { // infinity, NaN
      wide = sign | 0x7f800000u | (mantissa << 13);
    } else if (mantissa == 0) {
      wide = sign;
    } else {
      // A subnormal: normalize its mantissa into fp32's normal range.
      exponent = 113u;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        --exponent;
      }
      wide = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
  }
  float value;
  static_assert(sizeof(value) == sizeof(wide));
  __builtin_memcpy(&value, &wide, sizeof(value));
  return value;
}

} // namespace kiln

#endif // KILN_DIALECT_KILN_FLOATROUNDING_H
