// Invariants of the generated tables, for every command of every generation.

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "emulator/isa/builder.h"
#include "emulator/isa/disasm.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

using isa::Cmd;

const Generation kGenerations[] = {Generation::U55, Generation::U65, Generation::U85};

bool is_op(std::string_view name) { return name.rfind("NPU_OP_", 0) == 0; }

TEST(Tables, OpcodesAreUniqueWithinAGeneration) {
    for (Generation g : kGenerations) {
        const auto& gen = isa::describe(g);
        std::set<std::pair<int, int>> seen;
        std::set<std::string_view> names;
        for (const auto& c : gen.commands) {
            EXPECT_TRUE(seen.insert({static_cast<int>(c.kind), c.opcode}).second) << gen.name << " " << c.name;
            EXPECT_TRUE(names.insert(c.name).second) << gen.name << " " << c.name;
            EXPECT_EQ(gen.find(c.kind, c.opcode), &c);
            EXPECT_EQ(gen.command(c.id), &c);
        }
    }
}

TEST(Tables, EncodeDecodeDisassembleRoundTripsEveryCommand) {
    std::mt19937_64 rng(7);
    for (Generation g : kGenerations) {
        const auto& gen = isa::describe(g);
        for (const auto& c : gen.commands) {
            for (int trial = 0; trial < 8; ++trial) {
                // Random values over each field's full width, including the extremes.
                std::vector<uint64_t> values;
                uint64_t value = c.base_word();
                for (const auto& f : c.fields) {
                    const uint64_t max = f.width() >= 64 ? ~0ull : (1ull << f.width()) - 1;
                    const uint64_t v = trial == 0 ? 0 : trial == 1 ? max : rng() & max;
                    values.push_back(v);
                    value = f.insert(value, v);
                }
                std::vector<uint32_t> words{static_cast<uint32_t>(value)};
                if (c.kind == isa::CmdKind::Cmd1) words.push_back(static_cast<uint32_t>(value >> 32));
                const auto out = disassemble_stream(g, words, "round-trip");
                ASSERT_EQ(out.size(), 1u);
                EXPECT_EQ(out[0].name, c.name);
                ASSERT_EQ(out[0].fields.size(), c.fields.size());
                for (size_t i = 0; i < c.fields.size(); ++i) {
                    EXPECT_EQ(c.fields[i].extract(value), values[i]) << c.name << "." << c.fields[i].name;
                    EXPECT_EQ(out[0].fields[i].name, c.fields[i].name);
                    if (c.fields[i].enumeration && !out[0].fields[i].enum_value.empty()) {
                        EXPECT_EQ(c.fields[i].enumeration->value_name(values[i]), out[0].fields[i].enum_value);
                    }
                }
            }
        }
    }
}

TEST(Tables, BuilderEncodesWhatTheDecoderReads) {
    CommandStreamBuilder b(Generation::U85);
    b.emit(Cmd::SET_IFM_BASE0, {{isa::Field::SET_IFM_BASE0__addr, 0xAB12345678ull}});
    b.emit(Cmd::SET_KERNEL_STRIDE, {{isa::Field::SET_KERNEL_STRIDE__stride_x_lsb, 1},
                                    {isa::Field::SET_KERNEL_STRIDE__stride_x_msb, 1}});
    ASSERT_EQ(b.words().size(), 3u);
    EXPECT_EQ(b.words()[0], 0x00AB4000u);  // addr[39:32] in the parameter
    EXPECT_EQ(b.words()[1], 0x12345678u);
    EXPECT_EQ(b.words()[2], 0x00410122u);  // bit 16 lsb, bit 22 msb
    EXPECT_THROW(b.emit(Cmd::SET_IFM_PAD_TOP, {{isa::Field::SET_IFM_PAD_TOP__pad, 128}}), std::invalid_argument);
    EXPECT_THROW(b.emit(Cmd::SET_AB_START), std::invalid_argument);  // U55/U65 only
}

// Each NPU_OP_* maps to its own op kind, and every NPU_SET_* register is read by some op:
// a stream that sets every register but one must report that one as unset for some op.
TEST(Tables, EveryCommandHasExactlyOneHandler) {
    // The largest configuration of each generation, so every weight/scale stream exists.
    for (const char* name : {"ethos-u55-256", "ethos-u65-512", "ethos-u85-2048"}) {
        const NpuConfig config = *find_npu_config(name);
        const auto& gen = isa::describe(config.generation);
        std::set<OpKind> kinds;
        std::vector<const isa::CommandDesc*> ops, sets;
        for (const auto& c : gen.commands) (is_op(c.name) ? ops : sets).push_back(&c);
        for (const auto* op : ops) {
            Decoder d(config, "handler", {.lenient = true});
            DecodedOp out;
            ASSERT_TRUE(d.apply(RawCommand{0, op, op->base_word()}, out)) << op->name;
            EXPECT_TRUE(kinds.insert(out.kind).second) << gen.name << " " << op->name << " shares a handler";
        }
        for (const auto* left_out : sets) {
            if (left_out->name.rfind("NPU_SET_USER_DEFINED", 0) == 0) continue;  // free for software use
            // U55 has the DMA size commands but defines only 1D transfers, which do not read them.
            if (config.generation == Generation::U55 && left_out->name.rfind("NPU_SET_DMA0_SIZE", 0) == 0) continue;
            bool read = false;
            // Try each op with parameters that exercise the optional paths.
            for (const auto* op : ops) {
                for (uint32_t param : {0u, 1u, 2u, 5u, 8u}) {
                    Decoder d(config, "handler", {.lenient = true});
                    DecodedOp out;
                    for (const auto* s : sets) {
                        if (s == left_out) continue;
                        uint64_t value = s->base_word();
                        // Turn on the modes that make more registers relevant.
                        for (const auto& f : s->fields) {
                            if (f.name == "stride_mode") value = f.insert(value, f.enumeration->values.back().value);
                            if (f.name == "idx_mode" || f.name == "parallel_mode") value = f.insert(value, 1);
                            // A weight or scale stream's base is read only when the stream is not empty.
                            if (f.name == "length") value = f.insert(value, 16);
                            // Elementwise mode 8 (SHR) is binary: give it a scalar operand.
                            if (f.name == "broadcast_constant") value = f.insert(value, param == 8);
                            if (f.name == "broadcast_mode" && s->name == "NPU_SET_IFM2_BROADCAST")
                                value = f.insert(value, param == 8 ? 8 : 0);
                            if (f.name == "scale_mode" && s->name == "NPU_SET_OFM_PRECISION")
                                value = f.insert(value, param == 2);
                        }
                        d.apply(RawCommand{0, s, value}, out);
                    }
                    uint64_t op_value = op->base_word();
                    if (!op->fields.empty()) op_value = op->fields[0].insert(op_value, param);
                    try {
                        d.apply(RawCommand{0, op, op_value}, out);
                    } catch (const Error&) {
                        continue;  // parameter not valid for this op
                    }
                    for (Cmd c : out.unset_registers) read |= c == left_out->id;
                }
            }
            EXPECT_TRUE(read) << gen.name << ": no operation reads " << left_out->name;
        }
    }
}

// What differs between generations is exactly what the hardware documents.
TEST(Tables, GenerationsDifferOnlyWhereTheHardwareDoes) {
    auto names = [](Generation g) {
        std::set<std::string> s;
        for (const auto& c : isa::describe(g).commands) s.insert(std::string(c.name));
        return s;
    };
    auto minus = [](const std::set<std::string>& a, const std::set<std::string>& b) {
        std::set<std::string> out;
        for (const auto& x : a)
            if (!b.count(x)) out.insert(x);
        return out;
    };
    const auto u55 = names(Generation::U55), u65 = names(Generation::U65), u85 = names(Generation::U85);
    EXPECT_EQ(minus(u65, u55), (std::set<std::string>{"NPU_SET_DMA0_SKIP0", "NPU_SET_DMA0_SKIP1",
                                                      "NPU_SET_PARALLEL_MODE", "NPU_SET_SCALE1_BASE",
                                                      "NPU_SET_SCALE1_LENGTH", "NPU_SET_WEIGHT1_BASE",
                                                      "NPU_SET_WEIGHT1_LENGTH"}));
    std::set<std::string> user_defined;
    for (int i = 0; i < 8; ++i) user_defined.insert("NPU_SET_USER_DEFINED" + std::to_string(i));
    EXPECT_EQ(minus(u55, u65), user_defined);
    EXPECT_EQ(minus(u65, u85), (std::set<std::string>{"NPU_SET_AB_START", "NPU_SET_DMA0_SKIP0", "NPU_SET_DMA0_SKIP1",
                                                      "NPU_SET_IFM2_IB_START", "NPU_SET_IFM2_SCALAR",
                                                      "NPU_SET_IFM_IB_END", "NPU_SET_OPA_SCALE",
                                                      "NPU_SET_OPB_SCALE", "NPU_SET_PARALLEL_MODE",
                                                      "NPU_SET_SCALE1_BASE", "NPU_SET_SCALE1_LENGTH"}));
    // Same opcode, different command: the description says so, per generation.
    EXPECT_EQ(isa::describe(Generation::U65).find(isa::CmdKind::Cmd0, 0x12D)->name, "NPU_SET_AB_START");
    EXPECT_EQ(isa::describe(Generation::U85).find(isa::CmdKind::Cmd0, 0x12D)->name, "NPU_SET_RESIZE_Y_OFFSET");
    EXPECT_EQ(isa::describe(Generation::U65).find(isa::CmdKind::Cmd1, 0x092)->name, "NPU_SET_SCALE1_BASE");
    EXPECT_EQ(isa::describe(Generation::U85).find(isa::CmdKind::Cmd1, 0x092)->name, "NPU_SET_WEIGHT2_BASE");
}

TEST(Tables, RegistersHaveTheHardwareResetValues) {
    const auto& u55 = isa::describe(Generation::U55);
    EXPECT_EQ(u55.reg(isa::Reg::ID)->reset, 0x10104201u);
    EXPECT_EQ(u55.reg(isa::Reg::STATUS)->reset, 0x8u);
    EXPECT_EQ(u55.reg(isa::Reg::CMD)->reset, 0xCu);
    EXPECT_EQ(u55.reg(isa::Reg::PMCR)->reset, 0x2000u);  // 4 event counters
    EXPECT_EQ(u55.register_at(0x88)->name, "BASEP");
    EXPECT_EQ(u55.reg(isa::Reg::ID)->access, isa::Access::RO);
    const auto& u85 = isa::describe(Generation::U85);
    EXPECT_EQ(u85.reg(isa::Reg::PMCR)->offset, 0x1180u);
    EXPECT_EQ(u85.reg(isa::Reg::PMEVCNTR)->count, 8);
    EXPECT_EQ(u85.reg(isa::Reg::ID)->reset, 0x20007001u);
}

// The engine reads op modes, rounding and accumulator formats through the descriptions' [meaning]
// tables: each of those enums has one, covering every value (the generator refuses a gap).
TEST(Tables, OpModesRoundingAndAccumulatorFormatsHaveAMeaning) {
    for (const Generation g : {Generation::U55, Generation::U65, Generation::U85}) {
        const isa::GenerationDesc& gen = isa::describe(g);
        for (const isa::Field f : {isa::Field::OP_POOL__pooling_mode, isa::Field::OP_ELEMENTWISE__elementwise_mode,
                                   isa::Field::SET_ACC_FORMAT__acc_format}) {
            const isa::EnumDesc* e = gen.field(f)->enumeration;
            ASSERT_NE(e, nullptr);
            EXPECT_EQ(e->meaning.size(), e->values.size()) << gen.name << " " << e->name;
        }
        const isa::Field round =
            g == Generation::U85 ? isa::Field::SET_OFM_SCALE__round_mode : isa::Field::SET_OFM_PRECISION__round_mode;
        EXPECT_EQ(gen.field(round)->enumeration->meaning_type, "RoundMode") << gen.name;
    }
    // The same code means different things on different generations: U85's OFM round mode 1.
    EXPECT_EQ(static_cast<RoundMode>(isa::describe(Generation::U55).field(isa::Field::SET_OFM_PRECISION__round_mode)
                                         ->enumeration->meaning_of(1)),
              RoundMode::Truncate);
    EXPECT_EQ(static_cast<RoundMode>(
                  isa::describe(Generation::U85).field(isa::Field::SET_OFM_SCALE__round_mode)->enumeration->meaning_of(1)),
              RoundMode::Natural);
}

// One traits entry per generation, in Generation order; where a trait follows from a register
// the generation has, the description agrees with it.
TEST(Tables, TraitsAgreeWithTheDescription) {
    ASSERT_EQ(all_npu_traits().size(), std::size(kGenerations));
    for (const Generation g : kGenerations) {
        const NpuTraits& t = npu_traits(g);
        const auto& gen = isa::describe(g);
        EXPECT_EQ(t.generation, g);
        // LUT types are what U85's activation_function means; U55/U65's names an Activation.
        EXPECT_EQ(t.activation_names_lut_type,
                  gen.field(isa::Field::SET_ACTIVATION__activation_function)->enumeration->meaning_type == "LutType")
            << gen.name;
        // Per-operand elementwise scales are IFM_SCALE/IFM2_SCALE; OPA/OPB scales exist without them.
        EXPECT_EQ(t.elementwise_scales_each_operand, gen.field(isa::Field::SET_IFM_SCALE__scale) != nullptr) << gen.name;
        EXPECT_NE(t.elementwise_scales_each_operand, gen.field(isa::Field::SET_OPA_SCALE__scale) != nullptr) << gen.name;
        // A weight stream per decoder: U85's WEIGHT2/3; per core, at most U65's second one.
        EXPECT_EQ(t.weight_encoding == WeightEncoding::PerDecoder, gen.field(isa::Field::SET_WEIGHT2_BASE__addr) != nullptr)
            << gen.name;
        EXPECT_TRUE(std::string_view(t.default_system_config).starts_with(t.vela_ini_prefix)) << gen.name;
        EXPECT_TRUE(t.axi_data_bytes == 8 || t.axi_data_bytes == 16) << gen.name;
    }
    for (const NpuConfig& c : all_npu_configs()) EXPECT_EQ(&c.traits(), &npu_traits(c.generation)) << c.name;
}

// The register front codes STATUS.faulting_channel by U55's PMU AXI channels (npu_device.cc):
// every generation's description gives those codes the same channels.
TEST(Tables, AxiChannelCodesAreSharedByEveryGeneration) {
    const isa::EnumDesc* u55 = nullptr;
    for (const auto& e : isa::describe(Generation::U55).enums)
        if (e.name == "pmu_axi_channel") u55 = &e;
    ASSERT_NE(u55, nullptr);
    for (const Generation g : kGenerations) {
        const isa::EnumDesc* channels = nullptr;
        for (const auto& e : isa::describe(g).enums)
            if (e.name == "pmu_axi_channel") channels = &e;
        ASSERT_NE(channels, nullptr) << generation_name(g);
        for (const auto& v : u55->values) EXPECT_EQ(channels->value_name(v.value), v.name) << generation_name(g);
    }
}

// isa::Reg and isa::RegField name each register and field of every generation, and find them.
TEST(Tables, RegisterIdsFindTheirRegisters) {
    std::set<isa::Reg> regs;
    std::set<isa::RegField> fields;
    for (const Generation g : kGenerations) {
        const auto& gen = isa::describe(g);
        for (const auto& r : gen.registers) {
            regs.insert(r.id);
            EXPECT_EQ(gen.reg(r.id), &r) << gen.name << " " << r.name;
            for (const auto& f : r.fields) {
                fields.insert(f.id);
                EXPECT_EQ(gen.reg_field(f.id), &f) << gen.name << " " << r.name << "." << f.name;
            }
        }
    }
    EXPECT_EQ(regs.size(), isa::kRegCount);
    EXPECT_EQ(fields.size(), isa::kRegFieldCount);
    EXPECT_EQ(isa::describe(Generation::U55).reg(isa::Reg::MEM_ATTR), nullptr);  // U85's
    const auto* channel = isa::describe(Generation::U65).reg_field(isa::RegField::STATUS__faulting_channel);
    ASSERT_NE(channel, nullptr);
    EXPECT_EQ(channel->lo, 12);
    EXPECT_EQ(channel->width, 4);
}

}  // namespace
}  // namespace ethosu
