#include "frontend/loaders/byte_reader.h"

#include <fmt/format.h>

namespace ethosu {

ByteReader::ByteReader(std::string label, std::span<const uint8_t> data, uint64_t base_offset)
    : label_(std::move(label)), data_(data), base_offset_(base_offset) {}

void ByteReader::require(uint64_t count, std::string_view field) const {
    if (count > remaining())
        fail(field, fmt::format("needs {} bytes but only {} are left (data ends at offset 0x{:x})", count, remaining(),
                                file_offset_of(size())));
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

template <typename T>
T ByteReader::little_endian(std::string_view field) {
    require(sizeof(T), field);
    T value = 0;
    for (size_t i = sizeof(T); i-- > 0;) value = static_cast<T>((value << 8) | data_[pos_ + i]);
    pos_ += sizeof(T);
    return value;
}

uint16_t ByteReader::u16(std::string_view field) { return little_endian<uint16_t>(field); }
uint32_t ByteReader::u32(std::string_view field) { return little_endian<uint32_t>(field); }
uint64_t ByteReader::u64(std::string_view field) { return little_endian<uint64_t>(field); }

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

void ByteReader::fail_at(size_t pos, std::string_view field, const std::string& reason, ErrorKind kind) const {
    throw Error({label_, file_offset_of(pos), std::string(field)}, reason, kind);
}

}  // namespace ethosu
