// Vela's per-layer report: both of Vela's layouts read, malformed ones refused by file, row and
// column; kernel ops lined up with its rows by order, kind and MACs on hand-made reports.

#include <gtest/gtest.h>

#include "emulator/isa/error.h"
#include "traces/vela_per_layer.h"

namespace ethosu {
namespace {

constexpr const char* kHeader =
    "Original Operator,NNG Operator,Target,Staging Usage,Peak% (Staging),Op Cycles,Network% (cycles),NPU,SRAM AC,"
    "DRAM AC,OnFlash AC,OffFlash AC,MAC Count,Network% (MAC),Util% (MAC),Name\n";

VelaLayer layer(const char* op, int64_t cycles, int64_t macs, const char* target = "NPU") {
    return {.original_operator = op, .op = op, .target = target, .op_cycles = cycles, .macs = macs, .name = op};
}

TEST(VelaPerLayer, ReadsBothLayouts) {
    const auto cpp = VelaPerLayer::parse(std::string(kHeader) +
                                             "Conv2D,Conv2D,NPU,10,1.5,300,75.0,200,100,0,0,40,4096,100.0,50.0,\"a,b\"\n"
                                             "Conv2D,Relu,NPU,0,0.0,0,0.0,0,0,0,0,0,0,0.0,100,\"a,b\"\n",
                                         "m_per-layer.csv");
    ASSERT_EQ(cpp.layers().size(), 2u);
    EXPECT_EQ(cpp.layers()[0].op_cycles, 300);
    EXPECT_EQ(cpp.layers()[0].access_cycles[size_t(MemoryKind::Sram)], 100);
    EXPECT_EQ(cpp.layers()[0].access_cycles[size_t(MemoryKind::OffChipFlash)], 40);
    EXPECT_EQ(cpp.layers()[0].macs, 4096);
    EXPECT_EQ(cpp.layers()[0].name, "a,b");
    EXPECT_EQ(cpp.layers()[1].op, "Relu");
    const auto python = VelaPerLayer::parse(
        "TFLite_operator,NNG Operator,SRAM Usage,Peak%,Op Cycles,Network%,NPU,SRAM AC,DRAM AC,OnFlash AC,OffFlash AC,"
        "MAC Count,Network%,Util%,Name\nCONV_2D,Conv2DBias,1,2,10116.0,3,10016.0,10116.0,0.0,0.0,0.0,221184,4,5,x\n",
        "p.csv");
    ASSERT_EQ(python.layers().size(), 1u);
    EXPECT_EQ(python.layers()[0].original_operator, "CONV_2D");
    EXPECT_EQ(python.layers()[0].target, "NPU");
    EXPECT_EQ(python.layers()[0].op_cycles, 10116);
}

TEST(VelaPerLayer, ReadsATablePerNpuSubgraphAndAnEmptyReport) {
    // Vela 3.x and 4.x write a table, header first, for each NPU subgraph of a model whose NPU
    // operators are split by CPU ones (the corpus's keyword_scrambled_8bit); a model placed wholly
    // on the CPU gets an empty file.
    const std::string header =
        "TFLite_operator,NNG Operator,SRAM Usage,Peak%,Op Cycles,Network%,NPU,SRAM AC,DRAM AC,OnFlash AC,"
        "OffFlash AC,MAC Count,Network%,Util%,Name\n";
    const auto two = VelaPerLayer::parse(header + "QUANTIZE,AvgPool,1,2,192.0,3,192.0,48.0,0.0,0.0,0.0,96,4,5,\n" +
                                             header + "FULLY_CONNECTED,FullyConnected,1,2,1328.0,3,188.0,12.0,0.0,0.0,"
                                                      "1328.0,1024,4,5,\n",
                                         "k.csv");
    ASSERT_EQ(two.layers().size(), 2u);
    EXPECT_EQ(two.layers()[0].op_cycles, 192);
    EXPECT_EQ(two.layers()[1].op, "FullyConnected");
    EXPECT_TRUE(VelaPerLayer::parse("", "empty.csv").layers().empty());
    EXPECT_TRUE(VelaPerLayer::parse("\n", "empty.csv").layers().empty());
}

TEST(VelaPerLayer, RefusesMalformedReports) {
    auto refused = [](const std::string& text, const std::string& what) {
        try {
            VelaPerLayer::parse(text, "bad.csv");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("bad.csv"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    refused("Original Operator,NNG Operator\nConv2D,Conv2D\n", "no column \"Op Cycles\"");
    refused("NNG Operator,Op Cycles\n", "no column \"Original Operator\"");
    refused(std::string(kHeader) + "Conv2D,Conv2D,NPU,0,0,many,0,0,0,0,0,0,0,0,0,x\n", "per-layer.Op Cycles");
    refused(std::string(kHeader) + "Conv2D,Conv2D,NPU,0,0,-5,0,0,0,0,0,0,0,0,0,x\n", "not a count");
    refused(std::string(kHeader) + "Conv2D,Conv2D,NPU,0,0,nan,0,0,0,0,0,0,0,0,0,x\n", "not a number");
    refused(std::string(kHeader) + "Conv2D,Conv2D\n", "row has 2 fields");
    refused(std::string(kHeader) + "\"Conv2D,Conv2D\n", "quoted field never ends");
}

TEST(VelaPerLayer, PathBesideTheModel) {
    EXPECT_EQ(vela_per_layer_path("out/net_vela.tflite"), "out/net_per-layer.csv");
    EXPECT_EQ(vela_per_layer_path("net.tflite"), std::nullopt);
    EXPECT_EQ(vela_per_layer_path("_vela.tflite"), std::nullopt);
}

TEST(VelaPerLayer, AlignsByOrderKindAndMacs) {
    // A convolution in two IFM-depth parts, its fused activation, an add, a CPU op, a copy.
    const std::vector<VelaLayer> layers = {layer("Conv2D", 500, 3000), layer("Relu", 0, 0), layer("Add", 40, 0),
                                           layer("Passthrough", 0, 0, "CPU"), layer("MemoryCopy", 30, 0)};
    const std::vector<KernelOpSummary> ops = {
        {"conv", 1000}, {"conv", 2000}, {"elementwise.add", 0}, {"pool.average", 0}};
    EXPECT_EQ(align_with_vela(ops, layers), (std::vector<size_t>{0, 0, 2, 4}));

    // MACs that do not add up, a kind the row does not lower to, an op too many: no alignment.
    EXPECT_EQ(align_with_vela({{"conv", 1000}, {"elementwise.add", 0}, {"pool.average", 0}}, layers), std::nullopt);
    EXPECT_EQ(align_with_vela({{"conv", 3000}, {"elementwise.mul", 0}, {"pool.average", 0}}, layers), std::nullopt);
    EXPECT_EQ(align_with_vela({{"conv", 3000}, {"elementwise.add", 0}, {"pool.average", 0}, {"pool.average", 0}},
                              {layer("Conv2D", 500, 3000), layer("Add", 40, 0), layer("MemoryCopy", 30, 0)}),
              (std::vector<size_t>{0, 1, 2, 2}));
    EXPECT_EQ(align_with_vela({{"conv", 3000}, {"pool.average", 0}}, {layer("Conv2D", 500, 3000), layer("Add", 40, 0)}),
              std::nullopt);

    // A U85 chain: the chained ops' rows have no cycles; each takes one op rather than one two.
    const std::vector<VelaLayer> chain = {layer("Mul", 16, 0), layer("Mul", 0, 0), layer("Mul", 0, 0),
                                          layer("Add", 8, 0)};
    EXPECT_EQ(align_with_vela({{"elementwise.mul", 0}, {"elementwise.mul", 0}, {"elementwise.mul", 0},
                               {"elementwise.add", 0}},
                              chain),
              (std::vector<size_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace ethosu
