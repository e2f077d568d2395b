#pragma once
// Test-only: the CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED operators of an original
// (pre-Vela) TFLite model with their weights, biases and the per-channel scales Vela derives
// from the tensors' quantization. The weight decoder's corpus test compares against these.

#include <cstdint>
#include <string>
#include <vector>

namespace ethosu::tflite_reference {

// LstmGate: one of the eight gate weight matrices of UNIDIRECTIONAL_SEQUENCE_LSTM, which Vela
// lowers to fully connected ops with scales and biases of its own (so only weights compare).
enum class KernelOpKind { Conv, Depthwise, FullyConnected, LstmGate };

struct QuantizedScale {
    uint32_t scale = 0;
    int shift = 0;
    bool operator==(const QuantizedScale&) const = default;
};

struct ReferenceKernelOp {
    int operator_index = 0;
    KernelOpKind kind = KernelOpKind::Conv;
    std::string output_name;
    int ifm_bits = 8;
    // OHWI as the NPU sees them: depthwise 1HWC becomes CHW1, fully connected OI becomes O11I.
    // Weight zero points already subtracted.
    int ofm_depth = 0, kernel_height = 0, kernel_width = 0, ifm_depth = 0;
    std::vector<int16_t> weights;
    std::vector<int64_t> bias;           // per OFM channel; zeros when the op has no bias; empty for LstmGate
    std::vector<QuantizedScale> scales;  // per OFM channel; empty for LstmGate

    int16_t at(int o, int y, int x, int i) const {
        return weights[((static_cast<size_t>(o) * kernel_height + y) * kernel_width + x) * ifm_depth + i];
    }
};

// Reads path; throws std::runtime_error when the file is not a TFLite model this reader follows.
std::vector<ReferenceKernelOp> read_reference_kernel_ops(const std::string& path);

// The scale Vela 5.1 programs for ifm_scale * weight_scale / ofm_scale: the 32-bit significand
// of frexp rounded to nearest, shift = 31 - exponent, brought into 0..63; "reduced" (16-bit IFM
// with a 64-bit bias) keeps 16 bits (regor common/scaling.cpp QuantizedScale).
QuantizedScale quantize_scale(double scale, bool reduced);

}  // namespace ethosu::tflite_reference
