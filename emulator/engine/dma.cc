// NPU_OP_DMA_START: copies between regions, or from a region into the internal LUT memory.

#include <fmt/format.h>

#include <cstring>

#include "emulator/engine/executor.h"
#include "emulator/isa/error.h"

namespace ethosu {

void run_dma(const DecodedOp& op, ExecutionContext& ctx) {
    const Dma& d = op.dma;
    const ErrorLocation where{ctx.source, op.offset, "NPU_OP_DMA_START"};
    if (d.src.internal) throw Error(where, "DMA from internal memory is not supported");
    if (d.gather || d.scatter) throw Error(where, "DMA index (gather/scatter) mode is not supported yet");
    if (d.dimensions > 1 && ctx.config.generation == Generation::U65) {
        throw Error(where, "U65 2D/3D DMA (SKIP0/SKIP1) is not supported yet: the skip semantics are unconfirmed");
    }
    if (d.length == 0) return;
    const int rows = d.dimensions >= 2 ? d.size0 : 1;
    const int planes = d.dimensions >= 3 ? d.size1 : 1;
    const AccessContext src_who = ctx.access(op, "DMA source");
    const AccessContext dst_who = ctx.access(op, "DMA destination");
    for (int p = 0; p < planes; ++p) {
        for (int r = 0; r < rows; ++r) {
            const uint64_t src = d.src.address + static_cast<uint64_t>(p * d.src_stride1 + r * d.src_stride0);
            const uint64_t dst = d.dst.address + static_cast<uint64_t>(p * d.dst_stride1 + r * d.dst_stride0);
            const auto from = ctx.memory.read(d.src.region, src, d.length, src_who);
            if (d.dst.internal) {
                // Internal destination: an address in SHRAM (U55/U65) or LUT RAM (U85).
                auto shram = ctx.shram.bytes();
                if (dst > shram.size() || d.length > shram.size() - dst) {
                    throw Error(where, fmt::format("DMA writes internal memory [0x{:x}, 0x{:x}), which holds {} bytes",
                                                   dst, dst + d.length, shram.size()));
                }
                std::memcpy(shram.data() + dst, from.data(), d.length);
                ctx.shram.mark_written(dst, d.length);
            } else {
                auto to = ctx.memory.write(d.dst.region, dst, d.length, dst_who);
                std::memmove(to.data(), from.data(), d.length);
            }
        }
    }
}

}  // namespace ethosu
