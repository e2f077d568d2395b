// NPU_OP_DMA_START: copies between regions, or from a region into the internal LUT memory.
// A transfer is LEN-byte rows: one row (1D), SIZE0 rows (2D) or SIZE1 planes of SIZE0 rows (3D),
// each side walking its own row and plane strides. In U85 index mode one side (the source for
// gather, the destination for scatter) steps to the row an int32 index names instead.

#include <fmt/format.h>

#include <cstring>

#include "emulator/engine/kernel_context.h"
#include "emulator/isa/error.h"

namespace ethosu {

void run_dma(const DecodedOp& op, ExecutionContext& ctx) {
    const Dma& d = op.dma();
    const LazyLocation where{&ctx.source, op.offset, "NPU_OP_DMA_START"};
    // validate() has refused internal sources, both sides indexed, and 2D/3D without rows or planes.
    if (d.length == 0) return;
    const int rows = d.dimensions >= 2 ? d.size0 : 1;
    const int planes = d.dimensions >= 3 ? d.size1 : 1;
    const AccessContext src_who{&ctx.source, op.offset, where.field, "DMA source"};
    const AccessContext dst_who{&ctx.source, op.offset, where.field, "DMA destination"};
    // Modular address arithmetic, as the hardware's: negative strides step backwards.
    auto step = [](uint64_t base, uint64_t p, int64_t stride1, uint64_t r, int64_t stride0) {
        return base + p * static_cast<uint64_t>(stride1) + r * static_cast<uint64_t>(stride0);
    };
    const AccessContext index_who{&ctx.source, op.offset, where.field, "DMA index"};
    // Index of row r in plane p: int32 little-endian, checked against IDX_MAX before any use.
    auto index_of = [&](uint64_t p, uint64_t r) -> uint64_t {
        const uint64_t at = d.index.base + p * (static_cast<uint64_t>(rows) * kDmaIndexBytes + d.index_skip1) +
                            r * kDmaIndexBytes;
        const auto bytes = ctx.memory.read(d.index.region, at, kDmaIndexBytes, index_who);
        const int32_t index = static_cast<int32_t>(uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 |
                                                   uint32_t{bytes[2]} << 16 | uint32_t{bytes[3]} << 24);
        if (index < 0 || static_cast<uint32_t>(index) > d.index_max) {
            throw Error(where, fmt::format("{} index {} (plane {}, row {}, read at 0x{:x} in region {}) is outside "
                                           "0..{} (NPU_SET_DMA0_IDX_MAX)",
                                           d.gather ? "gather" : "scatter", index, p, r, at, d.index.region,
                                           d.index_max));
        }
        return static_cast<uint64_t>(index);
    };
    for (uint64_t p = 0; p < static_cast<uint64_t>(planes); ++p) {
        for (uint64_t r = 0; r < static_cast<uint64_t>(rows); ++r) {
            const uint64_t src = step(d.src.address, p, d.src_stride1, d.gather ? index_of(p, r) : r, d.src_stride0);
            const uint64_t dst = step(d.dst.address, p, d.dst_stride1, d.scatter ? index_of(p, r) : r, d.dst_stride0);
            const auto from = ctx.memory.read(d.src.region, src, d.length, src_who);
            if (d.dst.internal) {
                // Internal destination: each selected core's SHRAM (U55/U65) or the LUT RAM (U85).
                const uint32_t core_mask = ctx.shram.load(d);
                ctx.shram.write(core_mask, dst, from.first(d.length));
            } else {
                auto to = ctx.memory.write(d.dst.region, dst, d.length, dst_who);
                std::memmove(to.data(), from.data(), d.length);
            }
            // A single-row copy (how Vela stages weights and LUTs from flash) is done with its
            // source; strided rows may share pages with the rows that follow.
            if (rows == 1 && planes == 1) ctx.done_reading(from);
        }
    }
}

}  // namespace ethosu
