#include "frontend/loaders/byte_reader.h"

#include <fmt/format.h>

namespace ethosu {

ByteReader::ByteReader(std::string label, std::span<const uint8_t> data, uint64_t base_offset)
    : label_(std::move(label)), data_(data), base_offset_(base_offset) {}

void ByteReader::require(uint64_t count, std::string_view field) const {
    if (count > remaining())
        fail(field, fmt::format("needs {} bytes but only {} are left (data ends at offset 0x{:x})", count,
                                remaining(), file_offset_of(size())));
}

void ByteReader::seek(uint64_t pos, std::string_view field) {
    if (pos > size())
        fail(field, fmt::format("offset 0x{:x} lies past the end of the data (0x{:x})", file_offset_of(0) + pos,
                                file_offset_of(size())));
    pos_ = static_cast<size_t>(pos);
}

void ByteReader::skip(uint64_t count, std::string_view field) {
    require(count, field);
    pos_ += static_cast<size_t>(count);
}

uint8_t ByteReader::u8(std::string_view field) {
    require(1, field);
    return data_[pos_++];
}

uint16_t ByteReader::u16(std::string_view field) {
    require(2, field);
    const uint16_t value = static_cast<uint16_t>(data_[pos_] | (data_[pos_ + 1] << 8));
    pos_ += 2;
    return value;
}

uint32_t ByteReader::u32(std::string_view field) {
    require(4, field);
    uint32_t value = 0;
    for (int i = 3; i >= 0; --i) value = (value << 8) | data_[pos_ + i];
    pos_ += 4;
    return value;
}

uint64_t ByteReader::u64(std::string_view field) {
    require(8, field);
    uint64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | data_[pos_ + i];
    pos_ += 8;
    return value;
}

std::span<const uint8_t> ByteReader::bytes(uint64_t count, std::string_view field) {
    require(count, field);
    const auto view = data_.subspan(pos_, static_cast<size_t>(count));
    pos_ += static_cast<size_t>(count);
    return view;
}

std::vector<uint32_t> ByteReader::words(uint64_t count, std::string_view field) {
    if (count > remaining() / 4)
        fail(field, fmt::format("needs {} words but only {} bytes are left (data ends at offset 0x{:x})", count,
                                remaining(), file_offset_of(size())));
    std::vector<uint32_t> out;
    out.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) out.push_back(u32(field));
    return out;
}

ByteReader ByteReader::sub(uint64_t count, std::string_view field) {
    const uint64_t start = file_offset();
    return ByteReader(label_, bytes(count, field), start);
}

void ByteReader::fail(std::string_view field, const std::string& reason) const { fail_at(pos_, field, reason); }

void ByteReader::fail_at(size_t pos, std::string_view field, const std::string& reason) const {
    throw Error({label_, file_offset_of(pos), std::string(field)}, reason);
}

}  // namespace ethosu
