#pragma once
// The one way loaders read file bytes: a bounds-checked little-endian cursor whose every
// failure is an ethosu::Error naming the file, the absolute byte offset and the field.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/isa/error.h"

namespace ethosu {

class ByteReader {
public:
    // base_offset: where data[0] sits in the file named by label, so errors give file offsets.
    ByteReader(std::string label, std::span<const uint8_t> data, uint64_t base_offset = 0);

    const std::string& label() const { return label_; }
    std::span<const uint8_t> data() const { return data_; }
    size_t size() const { return data_.size(); }
    size_t position() const { return pos_; }
    size_t remaining() const { return data_.size() - pos_; }
    bool at_end() const { return pos_ == data_.size(); }
    uint64_t file_offset() const { return base_offset_ + pos_; }
    uint64_t file_offset_of(size_t pos) const { return base_offset_ + pos; }

    void seek(uint64_t pos, std::string_view field);
    void skip(uint64_t count, std::string_view field);

    uint8_t u8(std::string_view field);
    uint16_t u16(std::string_view field);
    uint32_t u32(std::string_view field);
    uint64_t u64(std::string_view field);
    int32_t i32(std::string_view field) { return static_cast<int32_t>(u32(field)); }
    int64_t i64(std::string_view field) { return static_cast<int64_t>(u64(field)); }

    // The next count bytes (checked against what is left before anything is touched).
    std::span<const uint8_t> bytes(uint64_t count, std::string_view field);
    // The next count little-endian 32-bit words.
    std::vector<uint32_t> words(uint64_t count, std::string_view field);
    // A reader over the next count bytes, with the same label and file offsets.
    ByteReader sub(uint64_t count, std::string_view field);

    // Errors at the current position, or at an explicit position of this reader.
    [[noreturn]] void fail(std::string_view field, const std::string& reason) const;
    [[noreturn]] void fail_at(size_t pos, std::string_view field, const std::string& reason,
                              ErrorKind kind = ErrorKind::Malformed) const;
    void expect(bool condition, std::string_view field, const std::string& reason) const {
        if (!condition) fail(field, reason);
    }

private:
    void require(uint64_t count, std::string_view field) const;
    template <typename T>
    T little_endian(std::string_view field);

    std::string label_;
    std::span<const uint8_t> data_;
    uint64_t base_offset_;
    size_t pos_ = 0;
};

}  // namespace ethosu
