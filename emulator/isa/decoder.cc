#include "emulator/isa/decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "emulator/isa/description.h"
#include "emulator/isa/error.h"

namespace ethosu {

using isa::Cmd;
using isa::Field;

namespace {

constexpr uint32_t kControlShift = 14;
// U55/U65 activation_function TABLE_n is TABLE_0 + n (the same code on U65).
constexpr auto kU55Table0 = static_cast<uint64_t>(isa::u55::activation_function::TABLE_0);

// The engine enumerator a defined value of `e` means; E must be the engine enum its [meaning] names.
template <class E> E engine_meaning(const isa::EnumDesc& e, uint64_t value) {
    if (e.meaning_type != EngineEnum<E>::name) throw std::logic_error("enum read as another engine enum");
    return static_cast<E>(e.meaning_of(value));
}

int64_t sign_extend(uint64_t value, int bits) {
    const uint64_t sign = 1ull << (bits - 1);
    return static_cast<int64_t>((value ^ sign) - sign);
}

}  // namespace

std::string_view op_kind_name(OpKind k) {
    static constexpr std::string_view names[] = {"conv", "depthwise", "pool", "elementwise", "resize", "dma_start",
                                                 "dma_wait", "kernel_wait", "pmu_mask", "stop", "irq", "branch"};
    static_assert(std::size(names) == kOpKindCount, "one name per op kind");
    return names[static_cast<size_t>(k)];
}

bool is_kernel_op(OpKind k) { return k <= OpKind::Resize; }

void for_each_command(const isa::GenerationDesc& gen, std::span<const uint32_t> words, const std::string& source,
                      const std::function<void(const RawCommand&)>& visit) {
    size_t i = 0;
    while (i < words.size()) {
        const uint32_t word = words[i];
        const uint32_t offset = static_cast<uint32_t>(i * 4);
        const auto kind = (word >> kControlShift) & 3 ? isa::CmdKind::Cmd1 : isa::CmdKind::Cmd0;
        const uint16_t opcode = word & 0x3FF;
        const isa::CommandDesc* desc = gen.find(kind, opcode);
        if (!desc) {
            throw Error({source, offset, "opcode", OffsetKind::Command},
                        fmt::format("unknown {} opcode 0x{:03x} for {} (word 0x{:08x})",
                                    kind == isa::CmdKind::Cmd0 ? "cmd0" : "cmd1", opcode, gen.name, word));
        }
        RawCommand command{offset, desc, word};
        if (desc->kind == isa::CmdKind::Cmd1) {
            if (i + 1 >= words.size()) {
                throw Error({source, offset, std::string(desc->name), OffsetKind::Command},
                            "command is cut off: its 32-bit payload word is past the end of the stream");
            }
            command.value |= static_cast<uint64_t>(words[i + 1]) << 32;
        }
        visit(command);
        i += desc->words();
    }
}

namespace {

Precision precision(uint64_t type, uint64_t bits_code) { return {type == 1, 8 << bits_code}; }

// The registers that describe one feature map (IFM, IFM2 or OFM).
struct FeatureMapFields {
    Field format, type, precision, zero_point, storage;
    std::optional<Field> broadcast;  // IFM2 only: its broadcast mode decides if a tensor exists
    Field region;
    std::array<Field, 4> base;
    Field width0, height0, height1, stride_x, stride_y, stride_c;
};

const FeatureMapFields kIfmFields{
    Field::SET_IFM_PRECISION__activation_format, Field::SET_IFM_PRECISION__activation_type,
    Field::SET_IFM_PRECISION__activation_precision, Field::SET_IFM_ZERO_POINT__zero_point,
    Field::SET_IFM_PRECISION__activation_storage, std::nullopt, Field::SET_IFM_REGION__region,
    {Field::SET_IFM_BASE0__addr, Field::SET_IFM_BASE1__addr, Field::SET_IFM_BASE2__addr, Field::SET_IFM_BASE3__addr},
    Field::SET_IFM_WIDTH0_M1__width_m1, Field::SET_IFM_HEIGHT0_M1__height_m1, Field::SET_IFM_HEIGHT1_M1__height_m1,
    Field::SET_IFM_STRIDE_X__addr, Field::SET_IFM_STRIDE_Y__addr, Field::SET_IFM_STRIDE_C__addr};

const FeatureMapFields kIfm2Fields{
    Field::SET_IFM2_PRECISION__activation_format, Field::SET_IFM2_PRECISION__activation_type,
    Field::SET_IFM2_PRECISION__activation_precision, Field::SET_IFM2_ZERO_POINT__zero_point,
    Field::SET_IFM2_PRECISION__activation_storage, Field::SET_IFM2_BROADCAST__broadcast_mode,
    Field::SET_IFM2_REGION__region,
    {Field::SET_IFM2_BASE0__addr, Field::SET_IFM2_BASE1__addr, Field::SET_IFM2_BASE2__addr,
     Field::SET_IFM2_BASE3__addr},
    Field::SET_IFM2_WIDTH0_M1__width_m1, Field::SET_IFM2_HEIGHT0_M1__height_m1, Field::SET_IFM2_HEIGHT1_M1__height_m1,
    Field::SET_IFM2_STRIDE_X__addr, Field::SET_IFM2_STRIDE_Y__addr, Field::SET_IFM2_STRIDE_C__addr};

const FeatureMapFields kOfmFields{
    Field::SET_OFM_PRECISION__activation_format, Field::SET_OFM_PRECISION__activation_type,
    Field::SET_OFM_PRECISION__activation_precision, Field::SET_OFM_ZERO_POINT__zero_point,
    Field::SET_OFM_PRECISION__activation_storage, std::nullopt, Field::SET_OFM_REGION__region,
    {Field::SET_OFM_BASE0__addr, Field::SET_OFM_BASE1__addr, Field::SET_OFM_BASE2__addr, Field::SET_OFM_BASE3__addr},
    Field::SET_OFM_WIDTH0_M1__width_m1, Field::SET_OFM_HEIGHT0_M1__height_m1, Field::SET_OFM_HEIGHT1_M1__height_m1,
    Field::SET_OFM_STRIDE_X__addr, Field::SET_OFM_STRIDE_Y__addr, Field::SET_OFM_STRIDE_C__addr};

}  // namespace

// Decodes one op: its command and the sticky register file it reads. One decode_<kind> per op
// kind (the description's `op` row names the kind of each NPU_OP_*) over shared readers for what
// kernel ops share (feature maps, kernel, output stage, block, weight streams).
//
// Fields are read through the description, noting registers never written. A written enumerated
// field whose value the generation does not define is malformed (an unknown opcode's kin):
// refused here, before any arithmetic sees it.
struct Decoder::OpDecoder {
    Decoder& decoder;
    const RawCommand& command;
    DecodedOp& op;

    const NpuTraits& traits() const { return decoder.config_.traits(); }
    // What differs beyond a generation's registers is its traits. Left here: U55/U65's narrower
    // data path and output stage, whose rules below have no register of their own.
    bool u55_u65_output_stage() const { return decoder.gen_.generation != Generation::U85; }

    bool has(Field f) const { return decoder.gen_.field(f) != nullptr; }
    uint64_t get(Field f);
    // The field as the description declares the number (sign, `_m1`): FieldDesc::value.
    int64_t value(Field f) {
        const isa::FieldDesc& desc = *decoder.gen_.field(f);
        return desc.value(desc.insert(0, get(f)));
    }
    int valuei(Field f) { return static_cast<int>(value(f)); }
    int geti(Field f) { return static_cast<int>(get(f)); }
    // What an enumerated field's value means to the engine (the description's [meaning] table).
    template <class E> E meaning(Field f) {
        const uint64_t value = get(f);
        const isa::EnumDesc& e = *decoder.gen_.field(f)->enumeration;
        // A never-written register read leniently as 0 may hold no defined value: its first.
        return engine_meaning<E>(e, e.value_name(value).empty() ? e.values.front().value : value);
    }
    // A register the op reads whose value nothing models (U55/U65's SHRAM layout): the stream
    // must have written it, and a defined value, as for any other.
    void require(Field f) { get(f); }

    // A field of the op command itself (apply has checked its enums); 0 where the generation's
    // command lacks it.
    uint64_t param(Field f) const {
        const isa::FieldDesc* desc = decoder.gen_.field(f);
        return desc ? desc->extract(command.value) : 0;
    }
    template <class E> E param_meaning(Field f) const {
        return engine_meaning<E>(*decoder.gen_.field(f)->enumeration, param(f));
    }

    void decode();
    void decode_conv();
    void decode_pool();
    void decode_elementwise();
    void read_elementwise_operands_u85();
    void read_elementwise_operands_u55();
    void decode_resize();
    void decode_dma();
    void read_dma_skips(int src_dims, int dst_dims);
    void read_dma_strides();
    void decode_wait() {
        const Field count = op.kind == OpKind::DmaWait ? Field::OP_DMA_WAIT__k : Field::OP_KERNEL_WAIT__n;
        op.wait().count = static_cast<int>(param(count));
    }
    void decode_pmu_mask() { op.pmu().enable = param(Field::OP_PMU_MASK__enable) != 0; }
    void decode_mask() {
        op.signal().mask = static_cast<uint32_t>(param(op.kind == OpKind::Stop ? Field::OP_STOP__mask : Field::OP_IRQ__mask));
    }
    void decode_branch() {
        op.branch().condition = param_meaning<BranchCondition>(Field::OP_BRANCH__branch_cond);
        op.branch().target = static_cast<uint32_t>(param(Field::OP_BRANCH__branch_target));
    }

    void read_feature_map(FeatureMap& fm, const FeatureMapFields& f);
    void read_ifm(FeatureMap& fm);
    void read_ifm2(FeatureMap& fm);
    void read_ofm(FeatureMap& fm);
    bool table_activation();
    bool accumulators_from_ifm2();
    void refuse_ifm_wider_than(int bits, std::string_view takes);
    void read_kernel(Kernel& k);
    void read_padding(Kernel& k);
    Scale read_scale(Field scale, Field shift, Field dbl_rnd, Field round);
    void read_output_stage(OutputStage& o, bool uses_scale_stream);
    void read_activation(OutputStage& o);
    void read_block(BlockConfig& b, bool uses_ifm2);
    Stream read_stream(int region, Field base, Field length);
    void read_streams(bool dual_core, bool uses_scale_stream);
};

uint64_t Decoder::OpDecoder::get(Field f) {
    const isa::FieldDesc* desc = decoder.gen_.field(f);
    if (!desc) throw std::logic_error("field read on a generation that lacks it");
    const size_t reg = static_cast<size_t>(desc->command);
    if (!decoder.written_[reg]) {
        auto& unset = op.unset_registers;
        if (std::find(unset.begin(), unset.end(), desc->command) == unset.end()) unset.push_back(desc->command);
        return 0;  // read leniently (else the op is refused once it is decoded)
    }
    const uint64_t value = desc->extract(decoder.registers_[reg]);
    if (desc->enumeration && desc->enumeration->value_name(value).empty()) {
        throw Error({decoder.source_, command.offset,
                     fmt::format("{}.{}", decoder.gen_.command(desc->command)->name, desc->name), OffsetKind::Command},
                    fmt::format("value {} is not a valid {} on {}", value, desc->enumeration->name, decoder.gen_.name));
    }
    return value;
}

Decoder::Decoder(const NpuConfig& config, std::string source, DecodeOptions options)
    : config_(config), gen_(isa::describe(config.generation)), source_(std::move(source)), options_(options) {}

void Decoder::enter(uint32_t offset, const State& state) {
    registers_ = state.registers;
    written_ = state.written;
    fetch_start_ = offset;
}

bool Decoder::apply(const RawCommand& command, DecodedOp& op) {
    const size_t reg = static_cast<size_t>(command.desc->id);
    if (!command.desc->op) {
        registers_[reg] = command.value;
        written_[reg] = true;
        return false;
    }
    // An operation parameter outside its enum (pooling mode, elementwise mode, ...) is malformed.
    for (const auto& f : command.desc->fields) {
        const uint64_t value = f.extract(command.value);
        if (f.enumeration && f.enumeration->value_name(value).empty()) {
            throw Error({source_, command.offset, fmt::format("{}.{}", command.desc->name, f.name), OffsetKind::Command},
                        fmt::format("value {} is not a valid {}", value, f.enumeration->name));
        }
    }
    op = DecodedOp(*command.desc->op);
    freeze(command, op);
    return true;
}

void Decoder::freeze(const RawCommand& command, DecodedOp& op) {
    op.offset = command.offset;
    op.index = op_index_++;
    op.fetch_start = fetch_start_;
    fetch_start_ = command.offset + 4 * static_cast<uint32_t>(command.desc->words());
    OpDecoder{*this, command, op}.decode();
    if (!op.unset_registers.empty()) refuse_unset_registers(command, op);
}

void Decoder::refuse_unset_registers(const RawCommand& command, const DecodedOp& op) {
    std::string names;
    for (Cmd c : op.unset_registers) {
        if (!names.empty()) names += ", ";
        names += gen_.command(c)->name;
    }
    const std::string message = fmt::format("{} reads {} the stream never wrote: {}", command.desc->name,
                                            op.unset_registers.size() > 1 ? "registers" : "a register", names);
    if (!options_.lenient) {
        throw Error({source_, command.offset, std::string(gen_.command(op.unset_registers.front())->name), OffsetKind::Command},
                    message + " (--lenient reads them as 0)");
    }
    warnings_.push_back(format_error({source_, command.offset, {}, OffsetKind::Command}, message));
}

void Decoder::OpDecoder::decode() {
    switch (op.kind) {
        case OpKind::Conv:
        case OpKind::Depthwise: return decode_conv();
        case OpKind::Pool: return decode_pool();
        case OpKind::Elementwise: return decode_elementwise();
        case OpKind::Resize: return decode_resize();
        case OpKind::DmaStart: return decode_dma();
        case OpKind::DmaWait:
        case OpKind::KernelWait: return decode_wait();
        case OpKind::PmuMask: return decode_pmu_mask();
        case OpKind::Stop:
        case OpKind::Irq: return decode_mask();
        case OpKind::Branch: return decode_branch();
    }
}

// A TABLE activation (U55/U65: TABLE_n).
bool Decoder::OpDecoder::table_activation() {
    return meaning<Activation>(Field::SET_ACTIVATION__activation_function) == Activation::Table;
}

void Decoder::OpDecoder::read_feature_map(FeatureMap& fm, const FeatureMapFields& f) {
    fm.format = meaning<DataFormat>(f.format);
    fm.precision = precision(get(f.type), get(f.precision));
    // The U55/U65 data path is 8, 16 or 32 bits wide; the interface's B64 code exists for U85's
    // 64-bit maps only (Vela 2.x-5.x never program it on U55/U65).
    const auto& gen = decoder.gen_;
    if (u55_u65_output_stage() && fm.precision.bits == 64) {
        throw Error({decoder.source_, command.offset,
                     fmt::format("{}.activation_precision", gen.command(gen.field(f.precision)->command)->name),
                     OffsetKind::Command},
                    fmt::format("64-bit feature maps do not exist on {}", gen.name));
    }
    // U55/U65 add OFM_ZERO_POINT where the output stage works in 8 or 16 bits: an OFM of 8 or 16 bits,
    // or a TABLE activation, whose LUT index is the 8-bit value (Vela's int8 softmax: SUB with OFM zero
    // point 127 into an exp LUT with 32-bit entries). A 32-bit OFM otherwise gets none and the register
    // is not read: Vela 3.x/4.x softmax lowerings write OFM_ZERO_POINT 14 or 34 on int32
    // SHR/SUB/SHL/MUL/CLZ/REDUCE_SUM outputs (5.1 and every U85 stream write 0), and Arm's published
    // expected outputs of those networks and the TFLM goldens of ../shared/vectors-vela hold only if it
    // is not added. The register description is silent on it.
    const bool zero_point_unused =
        u55_u65_output_stage() && &f == &kOfmFields && fm.precision.bits == 32 && !table_activation();
    if (!zero_point_unused) fm.zero_point = static_cast<int32_t>(value(f.zero_point));
    // A 64-bit input's zero point would be subtracted in 64 bits, which the map's own extremes
    // leave (INT64_MIN less a positive zero point). No corpus stream has such a zero
    // point (the U85 conformance tests decode them all) and no source says how the hardware
    // would subtract one, so an input that has one is refused, not guessed at.
    if (fm.precision.bits == 64 && fm.zero_point != 0 && &f != &kOfmFields) {
        throw Error({decoder.source_, command.offset,
                     fmt::format("{}.zero_point", gen.command(gen.field(f.zero_point)->command)->name), OffsetKind::Command},
                    fmt::format("a 64-bit input with zero point {}: no source defines it", fm.zero_point));
    }
    if (has(f.storage)) {
        fm.storage = meaning<Storage>(f.storage);
        if (f.broadcast) {
            fm.broadcast = meaning<BroadcastMode>(*f.broadcast);
            if (is_scalar(fm.broadcast)) fm.storage = Storage::None;  // the operand is OP_SCALAR
        }
    }
    if (fm.storage == Storage::Chained) fm.region = geti(f.region);  // the chain buffer number
    // U85 feature maps in the chaining buffer (or absent) have no address registers.
    if (fm.storage != Storage::Tile2x2 && fm.storage != Storage::Tile3x1) return;
    fm.region = geti(f.region);
    for (size_t t = 0; t < 4; ++t) fm.tile_base[t] = get(f.base[t]);
    fm.width0 = valuei(f.width0);
    fm.height0 = valuei(f.height0);
    fm.height1 = valuei(f.height1);
    fm.stride_x = static_cast<int64_t>(get(f.stride_x));
    fm.stride_y = static_cast<int64_t>(get(f.stride_y));
    fm.stride_c = static_cast<int64_t>(get(f.stride_c));
}

void Decoder::OpDecoder::read_ifm(FeatureMap& fm) {
    fm.depth = valuei(Field::SET_IFM_DEPTH_M1__depth_m1);
    read_feature_map(fm, kIfmFields);
}

void Decoder::OpDecoder::read_ifm2(FeatureMap& fm) { read_feature_map(fm, kIfm2Fields); }

void Decoder::OpDecoder::read_ofm(FeatureMap& fm) {
    fm.width = valuei(Field::SET_OFM_WIDTH_M1__width_m1);
    fm.height = valuei(Field::SET_OFM_HEIGHT_M1__height_m1);
    fm.depth = valuei(Field::SET_OFM_DEPTH_M1__depth_m1);
    read_feature_map(fm, kOfmFields);
    if (has(Field::SET_OFM_PRECISION__activation_reverse)) {
        fm.reverse = meaning<OfmReverse>(Field::SET_OFM_PRECISION__activation_reverse);
        // Codes 4 and 5 name no axis order: a malformed stream.
        fm.transpose = meaning<OfmTranspose>(Field::SET_OFM_PRECISION__activation_transpose);
    }
}

// U85 ACC_FORMAT.acc_input IFM2: the accumulators start from the IFM2 map.
bool Decoder::OpDecoder::accumulators_from_ifm2() {
    return has(Field::SET_ACC_FORMAT__acc_input) && meaning<AccInput>(Field::SET_ACC_FORMAT__acc_input) == AccInput::Ifm2;
}

// An IFM wider than the op's hardware takes (read_ifm has set op.kernel().ifm), refused at its precision.
void Decoder::OpDecoder::refuse_ifm_wider_than(int bits, std::string_view takes) {
    if (op.kernel().ifm.precision.bits <= bits) return;
    throw Error({decoder.source_, command.offset, "NPU_SET_IFM_PRECISION.activation_precision", OffsetKind::Command},
                fmt::format("{} reads a {}-bit IFM; {}", command.desc->name, op.kernel().ifm.precision.bits, takes));
}

void Decoder::OpDecoder::read_kernel(Kernel& k) {
    k.width = valuei(Field::SET_KERNEL_WIDTH_M1__width_m1);
    k.height = valuei(Field::SET_KERNEL_HEIGHT_M1__height_m1);
    // Arm's layout splits each stride minus one into an lsb and an msb field; a dilation is
    // NONE (1) or X2 (2).
    k.stride_x = ((geti(Field::SET_KERNEL_STRIDE__stride_x_msb) << 1) | geti(Field::SET_KERNEL_STRIDE__stride_x_lsb)) + 1;
    k.stride_y = ((geti(Field::SET_KERNEL_STRIDE__stride_y_msb) << 1) | geti(Field::SET_KERNEL_STRIDE__stride_y_lsb)) + 1;
    k.dilation_x = geti(Field::SET_KERNEL_STRIDE__dilation_x) + 1;
    k.dilation_y = geti(Field::SET_KERNEL_STRIDE__dilation_y) + 1;
    k.part_kernel_first = get(Field::SET_KERNEL_STRIDE__weight_order) == 1;
}

// IFM_UPSCALE: a mode the generation does not define is malformed.
void Decoder::OpDecoder::read_padding(Kernel& k) {
    k.padding = {geti(Field::SET_IFM_PAD_TOP__pad), geti(Field::SET_IFM_PAD_LEFT__pad),
                 geti(Field::SET_IFM_PAD_BOTTOM__pad), geti(Field::SET_IFM_PAD_RIGHT__pad)};
    k.upscale = meaning<UpscaleMode>(Field::SET_IFM_UPSCALE__mode);
}

Scale Decoder::OpDecoder::read_scale(Field scale, Field shift, Field dbl_rnd, Field round) {
    Scale s;
    s.scale = static_cast<uint32_t>(get(scale));
    s.shift = geti(shift);
    if (has(dbl_rnd)) {
        s.double_round = geti(dbl_rnd);
        s.round = meaning<RoundMode>(round);
    }
    return s;
}

void Decoder::OpDecoder::read_output_stage(OutputStage& o, bool uses_scale_stream) {
    o.per_channel_scale = get(Field::SET_OFM_PRECISION__scale_mode) == 0;
    // U55/U65 OFM scale_mode PER_CHANNEL takes the scale from the scale/bias stream; an op without
    // one (pooling, elementwise) is then not scaled by OFM_SCALE, which is not read: the hardware
    // scales it itself (AVERAGE pooling by its window's valid elements, see pool.cc), else by one.
    // Evidence: Vela 2.x-4.x program MAX pooling, padded AVERAGE pooling and MIN/MAX/SHL/SHR/CLZ in
    // PER_CHANNEL mode (register_command_stream_generator.py: use_global_scale only for unpadded
    // AVERAGE/REDUCE_SUM and ADD/SUB/MUL/LRELU/ABS) and write no OFM_SCALE for those pools, so a MAX
    // pool's output must not depend on it; Arm's expected outputs of Vela 3.9-4.1 KWS streams and the
    // TFLM goldens of ../shared/vectors-vela agree. Vela 5.1 writes GLOBAL with a unit OFM_SCALE.
    if (u55_u65_output_stage() && o.per_channel_scale && !uses_scale_stream) {
        o.global_scale = Scale{.scale = 1, .shift = 0};
    } else if (!o.per_channel_scale || !uses_scale_stream) {
        o.global_scale = read_scale(Field::SET_OFM_SCALE__scale, Field::SET_OFM_SCALE__shift,
                                    Field::SET_OFM_SCALE__dbl_rnd, Field::SET_OFM_SCALE__round_mode);
    }
    // U85 takes the rounding from OFM_SCALE, which Vela writes for per-channel ops too.
    o.round = meaning<RoundMode>(has(Field::SET_OFM_SCALE__round_mode) ? Field::SET_OFM_SCALE__round_mode
                                                                       : Field::SET_OFM_PRECISION__round_mode);
    o.clip_range = meaning<ClipRange>(Field::SET_ACTIVATION__activation_clip_range);
    read_activation(o);
    o.clip_min = static_cast<int32_t>(value(Field::SET_ACTIVATION_MIN__clip_boundary));
    o.clip_max = static_cast<int32_t>(value(Field::SET_ACTIVATION_MAX__clip_boundary));
    o.acc_format = meaning<AccFormat>(Field::SET_ACC_FORMAT__acc_format);
    if (has(Field::SET_ACC_FORMAT__acc_input)) {
        o.acc_input = meaning<AccInput>(Field::SET_ACC_FORMAT__acc_input);
        o.acc_output = meaning<AccOutput>(Field::SET_ACC_FORMAT__acc_output);
        o.microblock = meaning<MicroBlock>(Field::SET_ACC_FORMAT__microblock);
    }
}

void Decoder::OpDecoder::read_activation(OutputStage& o) {
    if (traits().activation_names_lut_type) {
        // U85's activation_function names the LUT's element types, or a built-in function.
        o.lut = meaning<LutType>(Field::SET_ACTIVATION__activation_function);
        o.activation = o.lut == LutType::None      ? Activation::None
                     : o.lut == LutType::Tanh      ? Activation::Tanh
                     : o.lut == LutType::Sigmoid   ? Activation::Sigmoid
                                                    : Activation::Table;
        o.lut_index = geti(Field::SET_ACTIVATION__table);
    } else {
        o.activation = meaning<Activation>(Field::SET_ACTIVATION__activation_function);
        if (o.activation == Activation::Table)
            o.lut_index = static_cast<int>(get(Field::SET_ACTIVATION__activation_function) - kU55Table0);
    }
}

void Decoder::OpDecoder::read_block(BlockConfig& b, bool uses_ifm2) {
    b.ofm_width = valuei(Field::SET_OFM_BLK_WIDTH_M1__width_m1);
    b.ofm_height = valuei(Field::SET_OFM_BLK_HEIGHT_M1__height_m1);
    b.ofm_depth = valuei(Field::SET_OFM_BLK_DEPTH_M1__depth_m1);
    b.blockdep = geti(Field::SET_BLOCKDEP__blockdep);
    if (has(Field::SET_IFM_IB_END__ib_end)) {
        require(Field::SET_IFM_IB_END__ib_end);
        require(Field::SET_AB_START__ab_start);
        if (uses_ifm2) require(Field::SET_IFM2_IB_START__ib_start);
    }
}

// A weight or scale stream of length 0 is unused: its base is not read. Vela writes no base
// for one (regor GenerateWeights: `if (length != 0)` before each WEIGHTn_BASE; the fast weight
// format puts all of U85-512's weights in decoder 0's stream and WEIGHT1_LENGTH 0).
Stream Decoder::OpDecoder::read_stream(int region, Field base, Field length) {
    const uint64_t bytes = get(length);
    return Stream{region, bytes ? get(base) : 0, bytes};
}

void Decoder::OpDecoder::read_streams(bool dual_core, bool uses_scale_stream) {
    const int weight_region = geti(Field::SET_WEIGHT_REGION__region);
    op.kernel().weights.push_back(read_stream(weight_region, Field::SET_WEIGHT_BASE__addr, Field::SET_WEIGHT_LENGTH__length));
    if (dual_core) {
        op.kernel().weights.push_back(read_stream(weight_region, Field::SET_WEIGHT1_BASE__addr, Field::SET_WEIGHT1_LENGTH__length));
    }
    if (traits().weight_encoding == WeightEncoding::PerDecoder) {
        // One stream per weight decoder of the configuration.
        const Field extra[][2] = {{Field::SET_WEIGHT1_BASE__addr, Field::SET_WEIGHT1_LENGTH__length},
                                  {Field::SET_WEIGHT2_BASE__addr, Field::SET_WEIGHT2_LENGTH__length},
                                  {Field::SET_WEIGHT3_BASE__addr, Field::SET_WEIGHT3_LENGTH__length}};
        for (int d = 1; d < decoder.config_.cores && d <= 3; ++d) {
            const auto& [base, length] = extra[d - 1];
            op.kernel().weights.push_back(read_stream(weight_region, base, length));
        }
        op.kernel().weight_format = meaning<WeightFormat>(Field::SET_WEIGHT_FORMAT__weight_format);
        op.kernel().sparse_2_4 = get(Field::SET_WEIGHT_FORMAT__weight_sparsity) == 1;
    }
    if (uses_scale_stream) {
        const int scale_region = geti(Field::SET_SCALE_REGION__region);
        op.kernel().scales.push_back(read_stream(scale_region, Field::SET_SCALE_BASE__addr, Field::SET_SCALE_LENGTH__length));
        if (dual_core) {
            op.kernel().scales.push_back(read_stream(scale_region, Field::SET_SCALE1_BASE__addr, Field::SET_SCALE1_LENGTH__length));
        }
    }
}

void Decoder::OpDecoder::decode_conv() {
    // U65's dual core reads a second weight and scale stream.
    const bool dual_core =
        has(Field::SET_PARALLEL_MODE__parallel_mode) && get(Field::SET_PARALLEL_MODE__parallel_mode) == 1;
    read_ifm(op.kernel().ifm);
    // The MAC array multiplies 8- and 16-bit IFMs: Vela 5.1's table of the types each
    // hardware op takes (regor ethos_u85_constraints.cpp s_opDataTypeSupport, "from the
    // EthosU55/U65 Embedded NPU Interface Specification") gives Convolution, Depthwise and
    // VectorProduct IFMs of UInt8, Int8 and Int16 only; a 64-bit IFM would also overflow the
    // kernels' int64 sums.
    refuse_ifm_wider_than(16, "the MAC array takes 8- and 16-bit IFMs");
    read_ofm(op.kernel().ofm);
    read_kernel(op.kernel().kernel);
    read_padding(op.kernel().kernel);
    // NPU_OP_CONV's parameter (weights from IFM2) exists on U85 only.
    op.kernel().weights_from_ifm2 = op.kind == OpKind::Conv && param(Field::OP_CONV__weights_ifm2) == 1;
    const bool per_channel = get(Field::SET_OFM_PRECISION__scale_mode) == 0;
    if (op.kernel().weights_from_ifm2 || accumulators_from_ifm2()) {
        op.kernel().has_ifm2 = true;
        read_ifm2(op.kernel().ifm2);
    }
    if (!op.kernel().weights_from_ifm2) read_streams(dual_core, per_channel);
    read_output_stage(op.kernel().output, true);
    read_block(op.kernel().block, false);
}

void Decoder::OpDecoder::decode_pool() {
    op.kernel().pool() = param_meaning<PoolMode>(Field::OP_POOL__pooling_mode);
    read_ifm(op.kernel().ifm);
    // Vela 5.1's s_opDataTypeSupport (regor ethos_u85_constraints.cpp) gives the hardware's
    // pooling ops IFMs of at most 32 bits (Pooling and ArgMax 8/16, ReduceSum and
    // ReduceMinMax up to Int32); a 64-bit IFM would also overflow REDUCE_SUM's int64 sum.
    refuse_ifm_wider_than(32, "pooling takes IFMs of at most 32 bits");
    if (accumulators_from_ifm2()) {
        op.kernel().has_ifm2 = true;
        read_ifm2(op.kernel().ifm2);
    }
    read_ofm(op.kernel().ofm);
    read_kernel(op.kernel().kernel);
    read_padding(op.kernel().kernel);
    read_output_stage(op.kernel().output, false);
    read_block(op.kernel().block, false);
    if (traits().average_pool_always_divides && op.kernel().pool() == PoolMode::Average && !op.kernel().output.per_channel_scale)
        decoder.warn_undetermined_average_scale(op);
}

void Decoder::OpDecoder::decode_elementwise() {
    Elementwise& e = op.kernel().elementwise();
    e.mode = param_meaning<ElementwiseMode>(Field::OP_ELEMENTWISE__elementwise_mode);
    read_ifm(op.kernel().ifm);
    read_ofm(op.kernel().ofm);
    if (traits().elementwise_scales_each_operand) read_elementwise_operands_u85();
    else read_elementwise_operands_u55();
    read_output_stage(op.kernel().output, false);
    read_block(op.kernel().block, op.kernel().has_ifm2 && !e.ifm2_scalar);
}

// U85: either operand broadcast or OP_SCALAR, each scaled by its own IFM_SCALE / IFM2_SCALE.
void Decoder::OpDecoder::read_elementwise_operands_u85() {
    Elementwise& e = op.kernel().elementwise();
    // IFM broadcast exists for elementwise ops only.
    op.kernel().ifm.broadcast = meaning<BroadcastMode>(Field::SET_IFM_BROADCAST__broadcast_mode);
    if (is_scalar(op.kernel().ifm.broadcast)) {
        op.kernel().ifm.storage = Storage::None;
        e.scalar = static_cast<int32_t>(get(Field::SET_OP_SCALAR__scalar));
    }
    if (operands(e.mode) == 2) {
        op.kernel().has_ifm2 = true;
        e.ifm2_scalar = is_scalar(meaning<BroadcastMode>(Field::SET_IFM2_BROADCAST__broadcast_mode));
        read_ifm2(op.kernel().ifm2);
        if (e.ifm2_scalar) e.scalar = static_cast<int32_t>(get(Field::SET_OP_SCALAR__scalar));
    }
    e.opa = read_scale(Field::SET_IFM_SCALE__scale, Field::SET_IFM_SCALE__shift, Field::SET_IFM_SCALE__dbl_rnd,
                       Field::SET_IFM_SCALE__round_mode);
    // LRELU keeps its alpha in IFM2_SCALE.
    if (op.kernel().has_ifm2 || e.mode == ElementwiseMode::LRelu) {
        e.opb = read_scale(Field::SET_IFM2_SCALE__scale, Field::SET_IFM2_SCALE__shift, Field::SET_IFM2_SCALE__dbl_rnd,
                           Field::SET_IFM2_SCALE__round_mode);
    }
}

// U55/U65: IFM2 broadcast along axes or the IFM2 scalar, in either operand order; ADD/SUB scale
// their operands by OPA/OPB.
void Decoder::OpDecoder::read_elementwise_operands_u55() {
    Elementwise& e = op.kernel().elementwise();
    e.operand_scaling = meaning<OperandScaling>(Field::SET_IFM_PRECISION__scale_mode);
    if (operands(e.mode) == 2) {
        op.kernel().has_ifm2 = true;
        e.broadcast_h = meaning<Switch>(Field::SET_IFM2_BROADCAST__broadcast_h) == Switch::On;
        e.broadcast_w = meaning<Switch>(Field::SET_IFM2_BROADCAST__broadcast_w) == Switch::On;
        e.broadcast_c = meaning<Switch>(Field::SET_IFM2_BROADCAST__broadcast_c) == Switch::On;
        e.reversed_operands = meaning<OperandOrder>(Field::SET_IFM2_BROADCAST__operand_order) == OperandOrder::Ifm2First;
        e.ifm2_scalar = meaning<Switch>(Field::SET_IFM2_BROADCAST__broadcast_constant) == Switch::On;
        if (e.ifm2_scalar) {
            op.kernel().ifm2.precision = precision(get(Field::SET_IFM2_PRECISION__activation_type),
                                          get(Field::SET_IFM2_PRECISION__activation_precision));
            op.kernel().ifm2.zero_point = static_cast<int32_t>(value(Field::SET_IFM2_ZERO_POINT__zero_point));
            // The scalar is 16 bits, signed when the IFM2 precision is.
            const uint64_t raw = get(Field::SET_IFM2_SCALAR__scalar);
            e.scalar = op.kernel().ifm2.precision.is_signed ? static_cast<int32_t>(sign_extend(raw, 16)) : static_cast<int32_t>(raw);
        } else {
            read_ifm2(op.kernel().ifm2);
        }
    }
    if (e.mode == ElementwiseMode::Add || e.mode == ElementwiseMode::Sub) {
        e.opa.scale = static_cast<uint32_t>(get(Field::SET_OPA_SCALE__scale));
        e.opa.shift = geti(Field::SET_OPA_SCALE__shift);
        e.opb.scale = static_cast<uint32_t>(get(Field::SET_OPB_SCALE__scale));
    }
}

void Decoder::OpDecoder::decode_resize() {
    op.kernel().resize().mode = param_meaning<ResizeMode>(Field::OP_RESIZE__resize_mode);
    read_ifm(op.kernel().ifm);
    read_ofm(op.kernel().ofm);
    Resize& z = op.kernel().resize();
    z.x_scale_n = valuei(Field::SET_RESIZE_X_SCALE_N_M1__resize_x_scale_n_m1);
    z.y_scale_n = valuei(Field::SET_RESIZE_Y_SCALE_N_M1__resize_y_scale_n_m1);
    z.x_offset = valuei(Field::SET_RESIZE_X_OFFSET__resize_x_offset);
    z.y_offset = valuei(Field::SET_RESIZE_Y_OFFSET__resize_y_offset);
    z.x_step = {geti(Field::SET_RESIZE_X__one_step_int), geti(Field::SET_RESIZE_X__blk_step_int),
                geti(Field::SET_RESIZE_X__one_step_mod), geti(Field::SET_RESIZE_X__blk_step_mod)};
    z.y_step = {geti(Field::SET_RESIZE_Y__one_step_int), geti(Field::SET_RESIZE_Y__blk_step_int),
                geti(Field::SET_RESIZE_Y__one_step_mod), geti(Field::SET_RESIZE_Y__blk_step_mod)};
    // The kernel registers hold the IFM area a resize reads (Vela 5.1 writes the IFM height and
    // the width up to the last column interpolation needs); OFM positions clamp to it.
    op.kernel().ifm.height = valuei(Field::SET_KERNEL_HEIGHT_M1__height_m1);
    op.kernel().ifm.width = valuei(Field::SET_KERNEL_WIDTH_M1__width_m1);
    op.kernel().kernel.upscale = meaning<UpscaleMode>(Field::SET_IFM_UPSCALE__mode);
    read_output_stage(op.kernel().output, false);
    read_block(op.kernel().block, false);
}

void Decoder::OpDecoder::decode_dma() {
    Dma& d = op.dma();
    d.src = {geti(Field::SET_DMA0_SRC_REGION__region), get(Field::SET_DMA0_SRC_REGION__region_mode) == 1,
             get(Field::SET_DMA0_SRC__addr)};
    d.dst = {geti(Field::SET_DMA0_DST_REGION__region), get(Field::SET_DMA0_DST_REGION__region_mode) == 1,
             get(Field::SET_DMA0_DST__addr)};
    d.length = get(Field::SET_DMA0_LEN__addr);  // bytes per row: SIZE0 counts rows, SIZE1 planes
    // U55 defines only D1; U65 has a stride mode per side; U85 one, on the source region.
    // A side whose region was never written counts as D1 (the op is reported anyway).
    const int src_dims = geti(Field::SET_DMA0_SRC_REGION__stride_mode) + 1;
    const int dst_dims =
        has(Field::SET_DMA0_DST_REGION__stride_mode) ? geti(Field::SET_DMA0_DST_REGION__stride_mode) + 1 : 1;
    if (src_dims > 1 && dst_dims > 1 && src_dims != dst_dims) {
        throw Error({decoder.source_, command.offset, "NPU_SET_DMA0_DST_REGION.stride_mode", OffsetKind::Command},
                    fmt::format("source is {}D and destination {}D: a transfer strided on both sides with "
                                "different dimensions is not supported (its behaviour is undocumented)",
                                src_dims, dst_dims));
    }
    d.dimensions = std::max(src_dims, dst_dims);
    if (d.dimensions >= 2) d.size0 = geti(Field::SET_DMA0_SIZE0__size);
    if (d.dimensions >= 3) d.size1 = geti(Field::SET_DMA0_SIZE1__size);
    if (has(Field::SET_DMA0_SKIP0__addr) && d.dimensions >= 2) read_dma_skips(src_dims, dst_dims);
    if (has(Field::SET_DMA0_SRC_STRIDE0__addr)) read_dma_strides();
}

// U65: SKIP0 is the gap after each row, SKIP1 the gap after each plane's rows (Vela: SKIP0 = row
// stride - LEN, SKIP1 = plane stride - LEN * SIZE0). A side in D1 mode is contiguous.
void Decoder::OpDecoder::read_dma_skips(int src_dims, int dst_dims) {
    Dma& d = op.dma();
    const int64_t row = static_cast<int64_t>(d.length);
    const int64_t plane = row * d.size0;
    const int64_t row_stride = row + value(Field::SET_DMA0_SKIP0__addr);
    const int64_t plane_stride = d.dimensions >= 3 ? plane + value(Field::SET_DMA0_SKIP1__addr) : plane;
    d.src_stride0 = src_dims > 1 ? row_stride : row;
    d.src_stride1 = src_dims > 1 ? plane_stride : plane;
    d.dst_stride0 = dst_dims > 1 ? row_stride : row;
    d.dst_stride1 = dst_dims > 1 ? plane_stride : plane;
}

// U85: the strides themselves, and the index modes (gather, scatter).
void Decoder::OpDecoder::read_dma_strides() {
    Dma& d = op.dma();
    if (d.dimensions >= 2) {
        d.src_stride0 = value(Field::SET_DMA0_SRC_STRIDE0__addr);
        d.dst_stride0 = value(Field::SET_DMA0_DST_STRIDE0__addr);
    }
    if (d.dimensions >= 3) {
        d.src_stride1 = value(Field::SET_DMA0_SRC_STRIDE1__addr);
        d.dst_stride1 = value(Field::SET_DMA0_DST_STRIDE1__addr);
    }
    d.gather = get(Field::SET_DMA0_SRC_REGION__idx_mode) == 1;
    d.scatter = get(Field::SET_DMA0_DST_REGION__idx_mode) == 1;
    if (!d.gather && !d.scatter) return;
    // The indexed side steps STRIDE0 per index even in 1D mode (Vela writes it then).
    if (d.dimensions == 1 && d.gather) d.src_stride0 = value(Field::SET_DMA0_SRC_STRIDE0__addr);
    if (d.dimensions == 1 && d.scatter) d.dst_stride0 = value(Field::SET_DMA0_DST_STRIDE0__addr);
    const uint64_t rows = d.dimensions >= 2 ? d.size0 : 1, planes = d.dimensions >= 3 ? d.size1 : 1;
    if (d.dimensions >= 3) d.index_skip1 = get(Field::SET_DMA0_IDX_SKIP1__addr);
    d.index = {geti(Field::SET_DMA0_IDX_REGION__region), get(Field::SET_DMA0_IDX__addr),
               planes * rows * kDmaIndexBytes + (planes - 1) * d.index_skip1};
    d.index_max = static_cast<uint32_t>(get(Field::SET_DMA0_IDX_MAX__idx_max));
}

// Vela writes a U85 AVERAGE pool's OFM_SCALE as one (TOSA; TFLite from 5.1 on) or as 1/N of its
// window (TFLite in 4.0-5.0), and the hardware divides by the valid elements alone (pool.cc). Any
// other value (Vela 5.1 writes the rescale when the input and output scales differ, which TFLite's
// converter never produces) is run by the same rule, which no source confirms for it: said once.
void Decoder::warn_undetermined_average_scale(const DecodedOp& op) {
    const Scale& s = op.kernel().output.global_scale;
    const int64_t window = int64_t{op.kernel().kernel.width} * op.kernel().kernel.height;
    const double value = std::ldexp(static_cast<double>(s.scale), -s.shift);
    constexpr double kTolerance = 0x1p-20;  // Vela's 1/N rounds to 31 bits; 1073741825 >> 30 is one
    if (std::abs(value - 1.0) <= kTolerance || std::abs(value * static_cast<double>(window) - 1.0) <= kTolerance) return;
    const std::string message = format_error(
        {source_, op.offset, "NPU_SET_OFM_SCALE", OffsetKind::Command},
        fmt::format("NPU_OP_POOL AVERAGE {}x{}: OFM_SCALE {} >> {} (= {:.6g}) is neither one nor 1/{}; run as every "
                    "U85 AVERAGE pool, divided by its valid elements without OFM_SCALE, which no source confirms for "
                    "this scale",
                    op.kernel().kernel.width, op.kernel().kernel.height, s.scale, s.shift, value, window));
    if (std::find(warnings_.begin(), warnings_.end(), message) == warnings_.end()) warnings_.push_back(message);
}

DecodedStream decode_stream(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                            const std::function<void(DecodedOp&)>& visit, const DecodeOptions& options) {
    DecodedStream result;
    result.generation = config.generation;
    Decoder decoder(config, source, options);
    for_each_command(isa::describe(config.generation), words, source, [&](const RawCommand& command) {
        ++result.command_count;
        DecodedOp op;
        if (decoder.apply(command, op)) visit(op);
    });
    result.warnings = std::move(decoder.warnings());
    return result;
}

DecodedStream decode_stream(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                            const DecodeOptions& options) {
    std::vector<DecodedOp> ops;
    DecodedStream result = decode_stream(config, words, source, [&](DecodedOp& op) { ops.push_back(std::move(op)); },
                                         options);
    result.ops = std::move(ops);
    return result;
}

}  // namespace ethosu
