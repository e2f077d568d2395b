#pragma once
// Sizes rounded to the hardware's granules (bricks, lanes, blocks, bursts), in the wider type of
// the two operands; both positive.

#include <concepts>
#include <type_traits>

namespace ethosu {

template <std::integral A, std::integral B>
constexpr std::common_type_t<A, B> div_round_up(A value, B granule) {
    return (value + granule - 1) / granule;
}

template <std::integral A, std::integral B>
constexpr std::common_type_t<A, B> round_up(A value, B granule) {
    return div_round_up(value, granule) * granule;
}

}  // namespace ethosu
