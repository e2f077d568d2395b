#pragma once
// Element addressing of a feature map as the NPU does it: up to four tiles, NHWC or NHCWB16
// (bricks of 16 channels). The constructor validates the whole accessed area against the
// address space once, so element access in kernels needs no further checks.
// A U85 OFM with a transpose or reverse is addressed in the op's computed coordinates: element
// (y, x, c) is stored at those coordinates reversed along one axis or permuted, and the tiles,
// strides and bounds apply to the stored coordinates.

#include <array>
#include <cstdint>
#include <cstring>
#include <span>

#include "emulator/isa/decoded_op.h"
#include "emulator/memory/address_space.h"

namespace ethosu {

class FeatureMapView {
public:
    enum class Kind : uint8_t { U8, S8, U16, S16, U32, S32, S64 };

    // The area [0, height) x [0, width) x [0, depth) of fm, in computed coordinates. Throws
    // ethosu::Error (naming who) if any tile's extent lies outside mapped memory, or, for an
    // output, in read-only memory. Only an output view may be stored to.
    FeatureMapView(const FeatureMap& fm, int height, int width, int depth, const AddressSpace& memory,
                   const AccessContext& who, bool is_output);

    // The same area densely packed in NHWC order in buffer (at least height x width x depth
    // elements): the U85 chaining buffer. fm's transpose and reverse do not apply.
    FeatureMapView(const FeatureMap& fm, int height, int width, int depth, std::span<uint8_t> buffer);

    int height() const { return height_; }
    int width() const { return width_; }
    int depth() const { return depth_; }
    const Precision& precision() const { return precision_; }
    // Whether different rows (y) of the area never share a byte, so that they may be written
    // concurrently: within a tile the row stride clears a row, and the tiles do not overlap.
    // A transposed or reversed map is written in order, one element at a time.
    bool rows_are_disjoint() const { return rows_disjoint_; }
    // Whether any byte of this area is also a byte of other's.
    bool shares_bytes_with(const FeatureMapView& other) const;
    // Whether every element (y, x, c) of both areas is the same bytes (an op working in place).
    bool same_elements_as(const FeatureMapView& other) const;

    uint8_t* element(int y, int x, int c) const {
        if (reordered_) to_stored(y, x, c);
        int t = 0;
        if (x >= width0_) {
            x -= width0_;
            t = 1;
            if (y >= height1_) {
                y -= height1_;
                t = 3;
            }
        } else if (y >= height0_) {
            y -= height0_;
            t = 2;
        }
        return tiles_[t] + y * stride_y_ + x * stride_x_ + (c >> 4) * stride_brick_ + (c & 15) * elem_;
    }

    // Whether a transpose or reverse applies (a U85 OFM), so that elements are not where NHWC or
    // NHCWB16 alone puts them.
    bool reordered() const { return reordered_; }

    // Channels c, c + 1, ... of pixels x, x + 1, ... of row y of a map that is not reordered, up to
    // the end of c's 16-channel brick: each pixel's are consecutive from `first` on (in both formats),
    // `pixel_step` bytes on from the previous pixel's, for the `pixels` pixels from x on that
    // share x's tile (at most `limit`); the pixel's next brick is `brick_step` bytes on.
    struct BrickRun {
        uint8_t* first;
        int64_t pixel_step;
        int pixels;
        int64_t brick_step;
    };
    BrickRun brick_run(int y, int x, int c, int limit) const {
        const int in_tile = x < width0_ ? width0_ - x : limit;
        return {element(y, x, c), stride_x_, in_tile < limit ? in_tile : limit, stride_brick_};
    }

    // Reads the element as a signed 64-bit value, by the map's precision and signedness.
    int64_t load(int y, int x, int c) const {
        const uint8_t* p = element(y, x, c);
        switch (kind_) {
            case Kind::U8: return *p;
            case Kind::S8: return static_cast<int8_t>(*p);
            case Kind::U16: return read_as<uint16_t>(p);
            case Kind::S16: return read_as<int16_t>(p);
            case Kind::U32: return read_as<uint32_t>(p);
            case Kind::S32: return read_as<int32_t>(p);
            case Kind::S64: return read_as<int64_t>(p);
        }
        return 0;
    }

    // Reads channels [0, count) of element (y, x) minus offset into out, a brick of 16
    // channels at a time (within a brick the channels are contiguous in both formats).
    template <typename T>
    void load_channels(int y, int x, int count, int64_t offset, T* out) const {
        switch (kind_) {
            case Kind::U8: return load_channels_as<uint8_t>(y, x, count, offset, out);
            case Kind::S8: return load_channels_as<int8_t>(y, x, count, offset, out);
            case Kind::U16: return load_channels_as<uint16_t>(y, x, count, offset, out);
            case Kind::S16: return load_channels_as<int16_t>(y, x, count, offset, out);
            case Kind::U32: return load_channels_as<uint32_t>(y, x, count, offset, out);
            case Kind::S32: return load_channels_as<int32_t>(y, x, count, offset, out);
            case Kind::S64: return load_channels_as<int64_t>(y, x, count, offset, out);
        }
    }

    // store() for channels [first, first + count) of element (y, x), a brick at a time.
    void store_channels(int y, int x, int count, const int64_t* values, int first = 0) const {
        switch (elem_) {
            case 1: return store_channels_as<uint8_t>(y, x, first, count, values);
            case 2: return store_channels_as<uint16_t>(y, x, first, count, values);
            case 4: return store_channels_as<uint32_t>(y, x, first, count, values);
            default: return store_channels_as<uint64_t>(y, x, first, count, values);
        }
    }

    // Writes the low bits of value (the caller has clamped it to the precision).
    void store(int y, int x, int c, int64_t value) const {
        uint8_t* p = element(y, x, c);
        std::memcpy(p, &value, elem_);  // little-endian host
    }

private:
    template <typename T>
    static int64_t read_as(const uint8_t* p) {
        T v;
        std::memcpy(&v, p, sizeof v);
        return static_cast<int64_t>(v);
    }

    // Computed coordinates to stored ones: the reversed axis counted from its far end, then
    // each stored axis taken from the computed axis the transpose puts there.
    void to_stored(int& y, int& x, int& c) const {
        int computed[3] = {y, x, c};
        if (reversed_axis_ >= 0) {
            const int extent[3] = {height_, width_, depth_};
            computed[reversed_axis_] = extent[reversed_axis_] - 1 - computed[reversed_axis_];
        }
        y = computed[stored_from_[0]];
        x = computed[stored_from_[1]];
        c = computed[stored_from_[2]];
    }

    template <typename Stored, typename T>
    void load_channels_as(int y, int x, int count, int64_t offset, T* out) const {
        if (reordered_) {
            for (int c = 0; c < count; ++c) out[c] = static_cast<T>(load(y, x, c) - offset);
            return;
        }
        for (int c0 = 0; c0 < count; c0 += 16) {
            const uint8_t* p = element(y, x, c0);
            const int n = count - c0 < 16 ? count - c0 : 16;
            for (int j = 0; j < n; ++j) {
                Stored v;
                std::memcpy(&v, p + j * sizeof(Stored), sizeof v);
                out[c0 + j] = static_cast<T>(static_cast<int64_t>(v) - offset);
            }
        }
    }

    template <typename Stored>
    void store_channels_as(int y, int x, int first, int count, const int64_t* values) const {
        if (reordered_) {
            for (int c = 0; c < count; ++c) store(y, x, first + c, values[c]);
            return;
        }
        // Channels are consecutive up to the end of their 16-channel brick.
        for (int c = 0; c < count;) {
            uint8_t* p = element(y, x, first + c);
            const int to_brick_end = 16 - ((first + c) & 15);
            const int n = count - c < to_brick_end ? count - c : to_brick_end;
            for (int j = 0; j < n; ++j) {
                const auto v = static_cast<Stored>(values[c + j]);
                std::memcpy(p + j * sizeof(Stored), &v, sizeof v);
            }
            c += n;
        }
    }

    int height_, width_, depth_;
    Precision precision_;
    Kind kind_;
    int width0_, height0_, height1_;
    int64_t stride_y_, stride_x_, stride_brick_;
    int elem_;
    std::array<uint8_t*, 4> tiles_{};
    std::array<int64_t, 4> extents_{};  // bytes from each tile's start to its area's end; 0: unused
    // Whether tile a of x and tile b of y share a byte.
    static bool tiles_overlap(const FeatureMapView& x, int a, const FeatureMapView& y, int b);
    bool rows_disjoint_ = true;
    bool reordered_ = false;               // a transpose or reverse applies
    int reversed_axis_ = -1;               // 0 y, 1 x, 2 c; -1 none
    std::array<int, 3> stored_from_{0, 1, 2};  // computed axis of stored y, x, c
};

}  // namespace ethosu
