#include "emulator/memory/feature_map.h"

#include <algorithm>
#include <cstdint>

namespace ethosu {

namespace {

FeatureMapView::Kind element_kind(const Precision& p) {
    switch (p.bits) {
        case 8: return p.is_signed ? FeatureMapView::Kind::S8 : FeatureMapView::Kind::U8;
        case 16: return p.is_signed ? FeatureMapView::Kind::S16 : FeatureMapView::Kind::U16;
        case 32: return p.is_signed ? FeatureMapView::Kind::S32 : FeatureMapView::Kind::U32;
        default: return FeatureMapView::Kind::S64;
    }
}

}  // namespace

FeatureMapView::FeatureMapView(const FeatureMap& fm, int height, int width, int depth, std::span<uint8_t> buffer)
    : height_(height), width_(width), depth_(depth), precision_(fm.precision), kind_(element_kind(fm.precision)),
      width0_(width), height0_(height), height1_(height), elem_(fm.precision.bytes()) {
    // One tile; x steps over a pixel's channels, channel bricks are 16 consecutive elements.
    stride_x_ = int64_t{depth} * elem_;
    stride_y_ = stride_x_ * width;
    stride_brick_ = 16 * elem_;
    tiles_[0] = buffer.data();
    extents_[0] = stride_y_ * height;
}

FeatureMapView::FeatureMapView(const FeatureMap& fm, int height, int width, int depth, const AddressSpace& memory,
                               const AccessContext& who, bool is_output)
    : height_(height), width_(width), depth_(depth), precision_(fm.precision), kind_(element_kind(fm.precision)),
      width0_(fm.width0), height0_(fm.height0), height1_(fm.height1), elem_(fm.precision.bytes()) {
    // Vela's addressing: NHWC steps x by STRIDE_X and channel bricks by 16 elements;
    // NHCWB16 steps x by one brick row (16 elements) and bricks by STRIDE_C.
    const bool brick = fm.format == DataFormat::NHCWB16;
    stride_y_ = fm.stride_y;
    stride_x_ = brick ? 16 * elem_ : fm.stride_x;
    stride_brick_ = brick ? fm.stride_c : 16 * elem_;

    stored_from_ = stored_axes(fm.transpose);
    reversed_axis_ = static_cast<int>(fm.reverse) - 1;
    reordered_ = fm.transpose != OfmTranspose::HWC || fm.reverse != OfmReverse::None;
    if (reordered_) rows_disjoint_ = false;
    // The stored area: the computed one with its axes permuted.
    const int computed[3] = {height, width, depth};
    height = computed[stored_from_[0]];
    width = computed[stored_from_[1]];
    depth = computed[stored_from_[2]];

    // Each tile's area, in tile-local coordinates: rows and columns it holds.
    const int w0 = std::min(width, width0_);
    const int w1 = std::max(0, width - width0_);
    const int rows[4] = {std::min(height, height0_), std::min(height, height1_), std::max(0, height - height0_),
                         std::max(0, height - height1_)};
    const int cols[4] = {w0, w1, w0, w1};
    // The farthest channel of a pixel: the last one, or the last of the brick before it when the
    // brick stride is shorter than a brick (bricks that overlap, which NHCWB16's STRIDE_C allows).
    const int64_t last_brick = depth > 0 ? (depth - 1) >> 4 : 0;
    int64_t last_channel = last_brick * stride_brick_ + ((depth - 1) & 15) * elem_;
    if (last_brick > 0) last_channel = std::max(last_channel, (last_brick - 1) * stride_brick_ + 15 * elem_);
    for (int t = 0; t < 4; ++t) {
        if (rows[t] <= 0 || cols[t] <= 0 || depth <= 0) continue;
        const int64_t row_extent = (cols[t] - 1) * stride_x_ + last_channel + elem_;
        extents_[t] = (rows[t] - 1) * stride_y_ + row_extent;
        if (rows[t] > 1 && stride_y_ < row_extent) rows_disjoint_ = false;
        AccessContext tile = who;
        const uint64_t extent = static_cast<uint64_t>(extents_[t]);
        // An input view is never stored to, so it may sit in read-only memory.
        tiles_[t] = is_output ? memory.write(fm.region, fm.tile_base[t], extent, tile).data()
                              : const_cast<uint8_t*>(memory.read(fm.region, fm.tile_base[t], extent, tile).data());
    }
    for (int a = 0; a < 4; ++a)
        for (int b = a + 1; b < 4; ++b)
            if (tiles_overlap(*this, a, *this, b)) rows_disjoint_ = false;
}

bool FeatureMapView::tiles_overlap(const FeatureMapView& x, int a, const FeatureMapView& y, int b) {
    if (!x.extents_[a] || !y.extents_[b]) return false;
    const auto x_start = reinterpret_cast<uintptr_t>(x.tiles_[a]);
    const auto y_start = reinterpret_cast<uintptr_t>(y.tiles_[b]);
    return x_start < y_start + static_cast<uint64_t>(y.extents_[b]) &&
           y_start < x_start + static_cast<uint64_t>(x.extents_[a]);
}

bool FeatureMapView::shares_bytes_with(const FeatureMapView& other) const {
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
            if (tiles_overlap(*this, a, other, b)) return true;
    return false;
}

bool FeatureMapView::same_elements_as(const FeatureMapView& other) const {
    return !reordered_ && !other.reordered_ && height_ == other.height_ && width_ == other.width_ &&
           depth_ == other.depth_ && elem_ == other.elem_ && width0_ == other.width0_ && height0_ == other.height0_ &&
           height1_ == other.height1_ && stride_y_ == other.stride_y_ && stride_x_ == other.stride_x_ &&
           stride_brick_ == other.stride_brick_ && tiles_ == other.tiles_;
}

}  // namespace ethosu
