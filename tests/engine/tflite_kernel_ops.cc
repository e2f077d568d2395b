#include "tests/engine/tflite_kernel_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "frontend/loaders/vela_tflite_generated.h"

namespace ethosu::tflite_reference {
namespace {

namespace tfl = ethosu::tflite;

// TFLite schema enum values (BuiltinOperator, TensorType).
constexpr int kConv2d = 3;
constexpr int kDepthwiseConv2d = 4;
constexpr int kFullyConnected = 9;
constexpr int kUnidirectionalSequenceLstm = 44;
constexpr int kTypeInt32 = 2;
constexpr int kTypeUInt8 = 3;
constexpr int kTypeInt64 = 4;
constexpr int kTypeInt16 = 7;
constexpr int kTypeInt8 = 9;

struct Model {
    std::vector<uint8_t> file;
    const tfl::Model* root = nullptr;
    const tfl::SubGraph* graph = nullptr;
};

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

const tfl::Tensor& tensor(const Model& m, int index) {
    if (index < 0 || !m.graph->tensors() || index >= static_cast<int>(m.graph->tensors()->size())) {
        fail(fmt::format("tensor index {} out of range", index));
    }
    return *m.graph->tensors()->Get(static_cast<flatbuffers::uoffset_t>(index));
}

std::vector<int> shape_of(const tfl::Tensor& t) {
    if (!t.shape()) return {};
    return {t.shape()->begin(), t.shape()->end()};
}

template <typename T>
std::vector<int64_t> constant_values(const Model& m, const tfl::Tensor& t) {
    const auto* buffer = m.root->buffers()->Get(t.buffer());
    if (!buffer || !buffer->data()) fail(fmt::format("tensor {} has no constant data", t.name()->str()));
    std::vector<int64_t> out(buffer->data()->size() / sizeof(T));
    for (size_t i = 0; i < out.size(); ++i) {
        T v;
        std::memcpy(&v, buffer->data()->data() + i * sizeof(T), sizeof(T));
        out[i] = v;
    }
    return out;
}

std::vector<int64_t> integer_constant(const Model& m, const tfl::Tensor& t) {
    switch (t.type()) {
        case kTypeInt8: return constant_values<int8_t>(m, t);
        case kTypeUInt8: return constant_values<uint8_t>(m, t);
        case kTypeInt16: return constant_values<int16_t>(m, t);
        case kTypeInt32: return constant_values<int32_t>(m, t);
        case kTypeInt64: return constant_values<int64_t>(m, t);
        default: fail(fmt::format("tensor {} has type {}, not an integer constant", t.name()->str(), t.type()));
    }
}

float scale_at(const tfl::Tensor& t, size_t i) {
    const auto* q = t.quantization();
    if (!q || !q->scale() || q->scale()->size() == 0) fail(fmt::format("tensor {} is not quantized", t.name()->str()));
    return q->scale()->Get(static_cast<flatbuffers::uoffset_t>(q->scale()->size() == 1 ? 0 : i));
}

int64_t zero_point_at(const tfl::Tensor& t, size_t i) {
    const auto* q = t.quantization();
    if (!q || !q->zero_point() || q->zero_point()->size() == 0) return 0;
    return q->zero_point()->Get(static_cast<flatbuffers::uoffset_t>(q->zero_point()->size() == 1 ? 0 : i));
}

Model open_model(const std::string& path) {
    Model m;
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot open " + path);
    m.file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    flatbuffers::Verifier verifier(m.file.data(), m.file.size());
    if (!tfl::VerifyModelBuffer(verifier)) fail(path + " is not a valid TFLite flatbuffer");
    m.root = tfl::GetModel(m.file.data());
    if (!m.root->subgraphs() || m.root->subgraphs()->size() == 0 || !m.root->buffers()) fail(path + ": no subgraph");
    m.graph = m.root->subgraphs()->Get(0);
    return m;
}

int builtin_code(const Model& m, const tfl::Operator& op) {
    const auto* code = m.root->operator_codes()->Get(op.opcode_index());
    return std::max<int>(code->deprecated_builtin_code(), code->builtin_code());
}

// Lays the TFLite weight tensor out as the NPU's OHWI.
void read_weights(const Model& m, const tfl::Tensor& t, KernelOpKind kind, ReferenceKernelOp& op) {
    const std::vector<int> s = shape_of(t);
    const std::vector<int64_t> raw = integer_constant(m, t);
    if (kind == KernelOpKind::Conv && s.size() == 4) {
        op.ofm_depth = s[0], op.kernel_height = s[1], op.kernel_width = s[2], op.ifm_depth = s[3];
    } else if (kind == KernelOpKind::Depthwise && s.size() == 4 && s[0] == 1) {
        op.ofm_depth = s[3], op.kernel_height = s[1], op.kernel_width = s[2], op.ifm_depth = 1;
    } else if ((kind == KernelOpKind::FullyConnected || kind == KernelOpKind::LstmGate) && s.size() == 2) {
        op.ofm_depth = s[0], op.kernel_height = 1, op.kernel_width = 1, op.ifm_depth = s[1];
    } else {
        fail(fmt::format("unexpected weight shape of {}", t.name()->str()));
    }
    op.weights.resize(raw.size());
    const size_t taps = static_cast<size_t>(op.kernel_height) * op.kernel_width;
    for (size_t index = 0; index < raw.size(); ++index) {
        // Depthwise: TFLite index ((y * W + x) * C + c) becomes NPU index ((c * H + y) * W + x).
        const size_t channel = kind == KernelOpKind::Depthwise ? index % op.ofm_depth : index / (taps * op.ifm_depth);
        const size_t target = kind == KernelOpKind::Depthwise ? channel * taps + index / op.ofm_depth : index;
        op.weights[target] = static_cast<int16_t>(raw[index] - zero_point_at(t, channel));
    }
}

ReferenceKernelOp read_kernel_op(const Model& m, const tfl::Operator& o, int index, KernelOpKind kind) {
    ReferenceKernelOp op;
    op.operator_index = index;
    op.kind = kind;
    if (!o.inputs() || o.inputs()->size() < 2 || !o.outputs() || o.outputs()->size() < 1) fail("operator without I/O");
    const tfl::Tensor& ifm = tensor(m, o.inputs()->Get(0));
    const tfl::Tensor& weights = tensor(m, o.inputs()->Get(1));
    const tfl::Tensor& ofm = tensor(m, o.outputs()->Get(0));
    op.output_name = ofm.name() ? ofm.name()->str() : "";
    op.ifm_bits = ifm.type() == kTypeInt16 ? 16 : 8;
    read_weights(m, weights, kind, op);

    const bool has_bias = o.inputs()->size() > 2 && o.inputs()->Get(2) >= 0;
    bool bias64 = op.ifm_bits == 16;  // Vela gives a missing 16-bit bias 64 bits
    op.bias.assign(static_cast<size_t>(op.ofm_depth), 0);
    if (has_bias) {
        const tfl::Tensor& bias = tensor(m, o.inputs()->Get(2));
        bias64 = bias.type() == kTypeInt64;
        const auto values = integer_constant(m, bias);
        if (values.size() != op.bias.size()) fail("bias length differs from the OFM depth");
        op.bias = values;
    }

    // Vela 5.1 regor/tflite/tflite_scaling.cpp RescalePerChannelToExplicit: the float scales are
    // multiplied in double, except for uint8 IFMs and per-tensor fully connected (float product).
    const bool per_tensor = weights.quantization()->scale()->size() == 1;
    const bool float_product = ifm.type() == kTypeUInt8 || (kind == KernelOpKind::FullyConnected && per_tensor);
    for (int c = 0; c < op.ofm_depth; ++c) {
        const float si = scale_at(ifm, 0), sw = scale_at(weights, static_cast<size_t>(c)), so = scale_at(ofm, 0);
        const double v = float_product ? double(si * sw) / double(so) : double(si) * double(sw) / double(so);
        op.scales.push_back(quantize_scale(v, bias64 && op.ifm_bits == 16));
    }
    return op;
}

// Inputs 1..4 (input-to-gate) and 5..8 (recurrent-to-gate) of the LSTM; optional ones are -1.
void read_lstm_gates(const Model& m, const tfl::Operator& o, int index, std::vector<ReferenceKernelOp>& ops) {
    for (flatbuffers::uoffset_t input = 1; input <= 8 && o.inputs() && input < o.inputs()->size(); ++input) {
        if (o.inputs()->Get(input) < 0) continue;
        ReferenceKernelOp gate;
        gate.operator_index = index;
        gate.kind = KernelOpKind::LstmGate;
        read_weights(m, tensor(m, o.inputs()->Get(input)), KernelOpKind::LstmGate, gate);
        ops.push_back(std::move(gate));
    }
}

}  // namespace

QuantizedScale quantize_scale(double value, bool reduced) {
    int exponent = 0;
    const double significand = std::frexp(value, &exponent);
    int64_t scale = static_cast<int64_t>(std::round(significand * 2147483648.0));
    int shift = 31 - exponent;
    if (reduced) {
        scale = std::min<int64_t>((scale >> 16) + ((scale >> 15) & 1), 0x7FFF);
        shift -= 16;
    }
    if (shift > 63) {
        const bool representable = scale > std::exp2(shift - 63);
        scale = representable ? scale >> (shift - 63) : 0;
        shift = representable ? 63 : 0;
    } else if (shift < 0 && scale < std::exp2(shift + 32)) {
        scale <<= -shift;
        shift = 0;
    }
    return {static_cast<uint32_t>(scale), shift};
}

std::vector<ReferenceKernelOp> read_reference_kernel_ops(const std::string& path) {
    const Model m = open_model(path);
    std::vector<ReferenceKernelOp> ops;
    if (!m.graph->operators()) return ops;
    for (flatbuffers::uoffset_t i = 0; i < m.graph->operators()->size(); ++i) {
        const tfl::Operator& o = *m.graph->operators()->Get(i);
        const int code = builtin_code(m, o);
        if (code == kConv2d) ops.push_back(read_kernel_op(m, o, static_cast<int>(i), KernelOpKind::Conv));
        if (code == kDepthwiseConv2d) ops.push_back(read_kernel_op(m, o, static_cast<int>(i), KernelOpKind::Depthwise));
        if (code == kFullyConnected) {
            ops.push_back(read_kernel_op(m, o, static_cast<int>(i), KernelOpKind::FullyConnected));
        }
        if (code == kUnidirectionalSequenceLstm) read_lstm_gates(m, o, static_cast<int>(i), ops);
    }
    return ops;
}

}  // namespace ethosu::tflite_reference
