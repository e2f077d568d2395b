#pragma once
// Builders for the files the loader tests feed in (COP payloads, .npy/.npz, ExecuTorch
// blocks) and small helpers for the corpus and for expected errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/loaders/model.h"

namespace ethosu::test {

using Bytes = std::vector<uint8_t>;

// The Vela corpus (ETHOSU_VECTORS_DIR); tests needing it skip when it is absent.
std::filesystem::path vectors_dir();
bool have_vectors();
Bytes read_bytes(const std::filesystem::path& path);
// Writes bytes to a fresh file in the test's temporary directory and returns its path.
std::string write_temp(const std::string& name, const Bytes& bytes);

// Runs fn, which must throw ethosu::Error; returns its message (any other exception fails the test).
template <class F>
std::string error_of(F&& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected ethosu::Error";
    return {};
}

void put_u16(Bytes& out, uint16_t v);
void put_u32(Bytes& out, uint32_t v);
void put_u64(Bytes& out, uint64_t v);
void put_bytes(Bytes& out, std::span<const uint8_t> bytes);
void put_string(Bytes& out, std::string_view s);

// CONFIG/ID words Vela writes for an ethos-u55-128.
constexpr uint32_t kU55_128Config = 0x00001807, kU55Id = 0x10066001;
// A few command words (values do not matter to the loaders).
const std::vector<uint32_t> kSomeWords = {0x0001010F, 0x00004010, 0x00000100, 0xFFFF0000};

// COP1 as Vela writes it: magic, OPTIMIZER_CONFIG, NOPs to align the stream to 16 bytes.
Bytes cop1_payload(uint32_t config, uint32_t id, const std::vector<uint32_t>& words);
// COP2 as Vela's regor writes it, with the given feature word.
Bytes cop2_payload(uint32_t config, uint32_t id, uint32_t features, const std::vector<uint32_t>& words);

// A .npy array: descr such as "<i8", shape such as "(1, 6)", element bytes.
Bytes npy(const std::string& descr, const std::string& shape, const Bytes& data);
Bytes npy_i64(const std::string& shape, const std::vector<int64_t>& values);
Bytes npy_bytes(const Bytes& data);  // a '|S<n>' scalar

// A zip archive of the members, STORED or DEFLATE (raw deflate via zlib), as numpy writes them.
using ZipMembers = std::vector<std::pair<std::string, Bytes>>;
Bytes zip_archive(const ZipMembers& members, bool deflate = false);

// The members of a small, valid Vela .npz (one int8 input 1x4x4x2, one output 1x2x2x2).
ZipMembers npz_members(const Bytes& cmd_payload, const Bytes& weights);

// An ExecuTorch block: 16-byte name, u32 size, 12 zero bytes, data padded to 16.
Bytes executorch_block(const std::string& name, const Bytes& data);
// The data of an 'inputs'/'outputs' block: a count, then per entry its int32 values (shape of
// rank 6 or 4, element size, offset, region).
Bytes io_block(const std::vector<std::vector<int32_t>>& entries);
// The data of a 'scratch_size' block.
Bytes scratch_size_block(uint32_t size);
// A model's one NPU invocation written as ExecuTorch's vela_bin_stream (weights in region 0,
// scratch in region 1, as the Arm backend passes them); the COP payload is rebuilt from the
// stream's CONFIG, ID and words.
Bytes vela_bin_stream_of(const LoadedModel& model);

}  // namespace ethosu::test
