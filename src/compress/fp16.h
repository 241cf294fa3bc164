// IEEE 754 half precision, by hand (no F16C needed): round to nearest even, infinities and
// NaNs kept, subnormals exact.
//
//   float_to_half(1.0f) == 0x3c00;  half_to_float(0x3c00) == 1.0f
#pragma once

#include <cstdint>

namespace dynacomm::compress {

std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);

}  // namespace dynacomm::compress
