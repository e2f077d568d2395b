#pragma once
// The IFM area a kernel op reads: the hardware derives it from the OFM size, the kernel,
// stride and padding (the IFM tile registers only say where the tiles split).
//
// IFM_UPSCALE doubles the IFM in height and width before the kernel sees it, padding applying
// to the upscaled map (Vela 5.1 computes padding "in upscaled space" and starts stripes on even
// upscaled rows): NEAREST repeats each element over a 2x2 square; ZEROS keeps it at the square's
// top left and fills the other three with the IFM zero point, which contributes nothing (Vela's
// TRANSPOSE_CONV lowering: the IFM's element i lands at upscaled 2i, under a reversed kernel).
// Also the step of a RESIZE axis, which validate() and the kernel both read.

#include <array>
#include <cstdint>
#include <string>

#include "emulator/isa/decoded_op.h"
#include "emulator/isa/error.h"

namespace ethosu {

struct IfmGeometry {
    int height = 0;  // the area the kernel reads (upscaled when the IFM is)
    int width = 0;
    int stored_height = 0;  // the IFM elements in memory behind it
    int stored_width = 0;
};

// Where the window of OFM element (oy, ox) starts in the IFM area: its top-left tap, negative
// inside the top or left padding.
struct WindowOrigin {
    int y = 0;
    int x = 0;
};
inline WindowOrigin window_origin(const Kernel& k, int oy, int ox) {
    return {oy * k.stride_y - k.padding.top, ox * k.stride_x - k.padding.left};
}

// a / b rounded towards minus infinity (b > 0).
inline int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// A RESIZE axis's step in 1/n of an IFM element, from its registers (one_step_int, blk_step_int,
// one_step_mod, blk_step_mod).
inline int64_t resize_step(int scale_n, const std::array<int, 4>& step) { return int64_t{step[0]} * scale_n + step[2]; }

// The IFM area the kernel reads; throws ethosu::Error (`where`) when the padding leaves none.
// validate() calls it for every CONV, DEPTHWISE and windowed POOL, so the kernels' calls do not throw.
inline IfmGeometry ifm_geometry(const DecodedOp& op, const LazyLocation& where) {
    const Kernel& k = op.kernel().kernel;
    const int64_t height = int64_t{op.kernel().ofm.height - 1} * k.stride_y + k.height - k.padding.top - k.padding.bottom;
    const int64_t width = int64_t{op.kernel().ofm.width - 1} * k.stride_x + k.width - k.padding.left - k.padding.right;
    if (height <= 0 || width <= 0) {
        throw Error(where, "padding larger than the IFM area the kernel reads (IFM would be empty)");
    }
    IfmGeometry geo{static_cast<int>(height), static_cast<int>(width), static_cast<int>(height),
                    static_cast<int>(width)};
    if (k.upscale != UpscaleMode::None) {
        geo.stored_height = (geo.height + 1) / 2;
        geo.stored_width = (geo.width + 1) / 2;
    }
    return geo;
}

}  // namespace ethosu
