#pragma once
// The IFM area a kernel op reads: the hardware derives it from the OFM size, the kernel,
// stride and padding (the IFM tile registers only say where the tiles split).

#include <string>

#include "emulator/isa/decoded_op.h"
#include "emulator/isa/error.h"

namespace ethosu {

struct IfmGeometry {
    int height = 0;
    int width = 0;
};

inline IfmGeometry ifm_geometry(const DecodedOp& op, const ErrorLocation& where) {
    const Kernel& k = op.kernel;
    if (k.upscale != UpscaleMode::None) throw Error(where, "IFM upscaling is not supported yet");
    const int64_t height = int64_t{op.ofm.height - 1} * k.stride_y + k.height - k.padding.top - k.padding.bottom;
    const int64_t width = int64_t{op.ofm.width - 1} * k.stride_x + k.width - k.padding.left - k.padding.right;
    if (height <= 0 || width <= 0) {
        throw Error(where, "padding larger than the IFM area the kernel reads (IFM would be empty)");
    }
    return {static_cast<int>(height), static_cast<int>(width)};
}

}  // namespace ethosu
