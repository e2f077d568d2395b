// Regions, bounds checks and feature-map addressing (four tiles, NHWC and NHCWB16).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "emulator/isa/error.h"
#include "emulator/memory/feature_map.h"
#include "frontend/loaders/model.h"
#include "tests/resident_pages.h"

namespace ethosu {
namespace {

TEST(Memory, RegionsResolveThroughBasePointers) {
    MemoryMap map;
    auto sram = map.allocate(0x2000'0000, 0x1000, "sram");
    AddressSpace space(map);
    space.set_base(1, 0x2000'0100);
    sram[0x180] = 42;
    const std::string source = "test";
    const AccessContext who{&source, 0x40, "NPU_OP_CONV", "IFM"};
    EXPECT_EQ(space.read(1, 0x80, 1, who)[0], 42);
    EXPECT_EQ(map.find(0x2000'0FFF, 1)->name, "sram");
    EXPECT_EQ(map.find(0x2000'0FFF, 2), nullptr);
    EXPECT_THROW(map.allocate(0x2000'0800, 0x1000, "overlap"), std::invalid_argument);
}

TEST(Memory, OutOfRangeAccessNamesTheOp) {
    MemoryMap map;
    map.allocate(0x1000, 0x100, "scratch");
    AddressSpace space(map);
    space.set_base(1, 0x1000);
    const std::string source = "model.tflite";
    const AccessContext who{&source, 0x120, "NPU_OP_CONV", "IFM"};
    try {
        space.read(1, 0xF0, 0x20, who);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "model.tflite");
        EXPECT_EQ(e.where().offset, 0x120u);
        EXPECT_EQ(e.where().field, "NPU_OP_CONV");
        EXPECT_NE(std::string(e.what()).find("IFM accesses region 1"), std::string::npos) << e.what();
    }
    EXPECT_THROW(space.read(8, 0, 1, who), Error);
    EXPECT_THROW(space.read(1, ~0ull - 4, 16, who), Error);  // wraps around
}

// The model's constant data is mapped where the model holds it: readable, never writable, not even
// by a feature map that happens to lie there.
TEST(Memory, ReadOnlyMappingRefusesWrites) {
    const std::vector<uint8_t> constants{1, 2, 3, 4, 5, 6, 7, 8};
    MemoryMap map;
    map.map_read_only(0x1000, constants, "weights");
    AddressSpace space(map);
    space.set_base(0, 0x1000);
    const std::string source = "model.tflite";
    const AccessContext who{&source, 0x88, "NPU_OP_DMA_START", "DMA destination"};
    EXPECT_EQ(space.read(0, 2, 2, who)[1], 4);
    EXPECT_EQ(space.read(0, 2, 2, who).data(), constants.data() + 2);  // no copy
    try {
        space.write(0, 4, 4, who);
        FAIL();
    } catch (const BusError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OutOfBounds);
        EXPECT_EQ(e.where().offset, 0x88u);
        EXPECT_NE(std::string(e.what()).find("DMA destination writes region 0 bytes [0x4, 0x8), which lie in read-only "
                                             "weights"),
                  std::string::npos)
            << e.what();
    }
    FeatureMap fm;
    fm.region = 0;
    fm.precision = {false, 8};
    fm.stride_x = 1;
    fm.stride_y = 4;
    fm.width0 = 4;
    fm.height0 = fm.height1 = 2;
    EXPECT_NO_THROW(FeatureMapView(fm, 2, 4, 1, space, who, false));
    EXPECT_THROW(FeatureMapView(fm, 2, 4, 1, space, who, true), BusError);
}

// A 6x6x20 int16 map split in four tiles: width0 = 4, height0 = 2, height1 = 3.
TEST(Memory, FourTilesAndPartialBricks) {
    MemoryMap map;
    auto bytes = map.allocate(0, 0x10000, "ram");
    AddressSpace space(map);
    FeatureMap fm;
    fm.region = 0;
    fm.tile_base = {0x0000, 0x4000, 0x8000, 0xC000};
    fm.width0 = 4;
    fm.height0 = 2;
    fm.height1 = 3;
    fm.precision = {true, 16};
    fm.format = DataFormat::NHCWB16;
    fm.stride_y = 0x400;
    fm.stride_c = 0x100;  // brick stride
    const std::string source = "t";
    FeatureMapView view(fm, 6, 6, 20, space, {&source, 0, "op", "OFM"}, true);
    // Tile 0: (y=1, x=3, c=17) -> base + 1*0x400 + 3*32 + 1*0x100 + 1*2
    EXPECT_EQ(view.element(1, 3, 17) - bytes.data(), 0x400 + 96 + 0x100 + 2);
    // Tile 1: x >= 4, y < 3 -> (y=2, x=5) local (2, 1)
    EXPECT_EQ(view.element(2, 5, 0) - bytes.data(), 0x4000 + 2 * 0x400 + 32);
    // Tile 3: x >= 4, y >= 3 -> local y = y - height1
    EXPECT_EQ(view.element(4, 4, 0) - bytes.data(), 0xC000 + 0x400);
    // Tile 2: x < 4, y >= 2 -> local y = y - height0
    EXPECT_EQ(view.element(5, 0, 16) - bytes.data(), 0x8000 + 3 * 0x400 + 0x100);
    view.store(5, 0, 16, -2);
    EXPECT_EQ(view.load(5, 0, 16), -2);

    fm.format = DataFormat::NHWC;
    fm.stride_x = 40;
    FeatureMapView nhwc(fm, 6, 6, 20, space, {&source, 0, "op", "OFM"}, true);
    EXPECT_EQ(nhwc.element(1, 3, 17) - bytes.data(), 0x400 + 3 * 40 + 17 * 2);
}

TEST(Memory, FeatureMapExtentIsValidatedUpFront) {
    MemoryMap map;
    map.allocate(0, 1000, "ram");
    AddressSpace space(map);
    FeatureMap fm;
    fm.width0 = fm.height0 = fm.height1 = 10;
    fm.stride_x = 10;
    fm.stride_y = 100;
    fm.precision = {true, 8};
    const std::string source = "t";
    EXPECT_NO_THROW(FeatureMapView(fm, 10, 10, 10, space, {&source, 0, "op", "IFM"}, false));
    EXPECT_THROW(FeatureMapView(fm, 10, 10, 11, space, {&source, 0, "op", "IFM"}, false), Error);
}


// NHCWB16 bricks closer than a brick's bytes (STRIDE_C 1): a full brick before the last one
// reaches past the last channel, and the check must cover it (else a heap overflow: a 64-bit
// IFM2 of 100 channels, whose brick 5 ends at byte 5 + 128, not 6 + 4 * 8).
TEST(Memory, OverlappingBricksAreValidatedToTheirFarthestByte) {
    MemoryMap map;
    map.allocate(0, 133, "ram");
    AddressSpace space(map);
    FeatureMap fm;
    fm.width0 = fm.height0 = fm.height1 = 1;
    fm.format = DataFormat::NHCWB16;
    fm.stride_c = 1;
    fm.precision = {true, 64};
    const std::string source = "t";
    const AccessContext who{&source, 0, "op", "IFM2"};
    EXPECT_NO_THROW(FeatureMapView(fm, 1, 1, 100, space, who, false));
    MemoryMap short_map;
    short_map.allocate(0, 132, "ram");
    AddressSpace short_space(short_map);
    EXPECT_THROW(FeatureMapView(fm, 1, 1, 100, short_space, who, false), Error);
}
// Kernels write OFM rows concurrently only when no two rows share a byte.
TEST(Memory, RowsAreDisjointUnlessStridesOrTilesOverlap) {
    MemoryMap map;
    map.allocate(0, 0x10000, "ram");
    AddressSpace space(map);
    FeatureMap fm;
    fm.width0 = 8;
    fm.height0 = fm.height1 = 8;
    fm.stride_x = 16;
    fm.stride_y = 128;  // a row of 8 pixels x 16 channels
    fm.precision = {true, 8};
    fm.tile_base = {0, 0x1000, 0x2000, 0x3000};
    const std::string source = "t";
    const AccessContext who{&source, 0, "op", "OFM"};
    EXPECT_TRUE(FeatureMapView(fm, 8, 8, 16, space, who, true).rows_are_disjoint());

    FeatureMap short_stride = fm;
    short_stride.stride_y = 64;  // rows overlap by half
    EXPECT_FALSE(FeatureMapView(short_stride, 8, 8, 16, space, who, true).rows_are_disjoint());
    EXPECT_TRUE(FeatureMapView(short_stride, 1, 8, 16, space, who, true).rows_are_disjoint());  // a single row

    FeatureMap split = fm;
    split.height0 = 4;  // tile 0 holds rows 0..3 in [0, 0x200), tile 2 rows 4..7
    split.tile_base[2] = 0x200;
    EXPECT_TRUE(FeatureMapView(split, 8, 8, 16, space, who, true).rows_are_disjoint());
    split.tile_base[2] = 0x180;  // starts inside tile 0's last row
    EXPECT_FALSE(FeatureMapView(split, 8, 8, 16, space, who, true).rows_are_disjoint());
}

// A mapped model file shrunk by another process: touching a page past its new end ends the
// process with status 1 and the CLI's one error line naming the file and the offset, not SIGBUS.
// (tests/cli's truncate_during_run does this to a whole run, but its timing may let the run end
// first; here the order is fixed.)
TEST(MemoryDeathTest, FileShrunkWhileMappedEndsWithOneErrorLine) {
    const auto path = std::filesystem::temp_directory_path() / fmt::format("ethosu-shrink-{}.bin", ::getpid());
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const std::vector<uint8_t> bytes(3 * page, 1);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    EXPECT_EXIT(
        {
            report_shrunk_mapped_files("ethosu-emu: error: ");
            const FileBytes file = map_file(path.string());
            std::filesystem::resize_file(path, 100);
            const volatile uint8_t* past_end = file.bytes.data() + 2 * page;
            std::exit(*past_end == 1 ? 0 : 2);
        },
        ::testing::ExitedWithCode(1),
        fmt::format("^ethosu-emu: error: {}: file@0x{:x}: model file: the file shrank", path.string(), 2 * page));
    std::filesystem::remove(path);
}

// A mapped model file's pages go when released, and come back, unchanged, when read again.
TEST(Memory, ReleasedFilePagesAreDroppedAndReadBack) {
    const auto path = std::filesystem::temp_directory_path() / fmt::format("ethosu-release-{}.bin", ::getpid());
    std::vector<uint8_t> pattern(1 << 20);
    std::iota(pattern.begin(), pattern.end(), uint8_t{7});
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(pattern.data()),
                                                static_cast<std::streamsize>(pattern.size()));
    const FileBytes file = map_file(path.string());
    std::filesystem::remove(path);  // the mapping keeps the contents
    ASSERT_TRUE(file.file_mapped);
    MemoryMap map;
    map.map_read_only(0x10000000, file.bytes, "weights", file.file_mapped);
    AddressSpace space(map);
    space.set_base(0, 0x10000000);
    const AccessContext who{nullptr, std::nullopt, "test", "weights"};
    const auto all = space.read(0, 0, pattern.size(), who);
    ASSERT_TRUE(std::equal(all.begin(), all.end(), pattern.begin()));
    const auto before = resident_pages(all);
    if (!before) GTEST_SKIP() << "/proc/self/pagemap cannot be read here";
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    ASSERT_EQ(*before, pattern.size() / page);  // every byte was read

    // A middle range takes its whole 64 KiB blocks of address space (what a fault maps in around
    // a page) and no more.
    space.release(space.read(0, 300 * 1024, 100 * 1024, who));
    const auto at = reinterpret_cast<uintptr_t>(all.data());
    const size_t low = ((at + 300 * 1024) & ~uintptr_t{0xffff}) - at;
    const size_t high = ((at + 400 * 1024 + 0xffff) & ~uintptr_t{0xffff}) - at;
    EXPECT_EQ(*resident_pages(all.subspan(low, high - low)), 0u);
    EXPECT_EQ(*resident_pages(all.first(low)), low / page);
    EXPECT_EQ(*resident_pages(all.subspan(high)), (pattern.size() - high) / page);

    space.release(all);
    EXPECT_EQ(*resident_pages(all), 0u);
    EXPECT_TRUE(std::equal(all.begin(), all.end(), pattern.begin()));
}

// Memory the host owns is never dropped: its contents exist nowhere else.
TEST(Memory, ReleaseLeavesHostMemoryAlone) {
    std::vector<uint8_t> constants(512 * 1024);
    std::iota(constants.begin(), constants.end(), uint8_t{3});
    const std::vector<uint8_t> expected = constants;
    std::vector<uint8_t> scratch(256 * 1024, 0x5a);
    MemoryMap map;
    map.map_read_only(0x1000, constants, "weights");
    map.map(0x100000, scratch, "scratch");
    AddressSpace space(map);
    space.set_base(0, 0x1000);
    space.set_base(1, 0x100000);
    const AccessContext who{nullptr, std::nullopt, "test", "weights"};
    space.release(space.read(0, 0, constants.size(), who));
    space.release(space.read(1, 0, scratch.size(), who));
    EXPECT_EQ(constants, expected);
    EXPECT_TRUE(std::ranges::all_of(scratch, [](uint8_t b) { return b == 0x5a; }));
}

}  // namespace
}  // namespace ethosu
