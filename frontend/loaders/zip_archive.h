#pragma once
// A minimal, bounds-checked zip reader for numpy .npz files: the central directory, each
// member's local header, STORED and DEFLATE members, CRC-32 checked. No zip64, no
// encryption, no multi-disk archives (each refused with an Error).

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/loaders/byte_reader.h"

namespace ethosu {

struct ZipMember {
    std::string name;
    uint16_t method = 0;  // 0 STORED, 8 DEFLATE
    uint32_t crc32 = 0;
    uint64_t compressed_size = 0;
    uint64_t size = 0;
    uint64_t data_offset = 0;  // of the (compressed) bytes, in the archive
};

struct ZipDirectory {
    uint64_t offset = 0;             // of the central directory in the archive
    std::vector<ZipMember> members;  // in central-directory order
};

// The central directory; each member's local header is checked against its entry.
ZipDirectory read_zip_directory(const ByteReader& archive);

// A reader over the member's bytes. STORED members are read in place, so offsets stay
// archive offsets; DEFLATE members are inflated into `inflated` (which must outlive the
// reader) and labelled "<archive>:<member>", with offsets inside the member.
ByteReader open_zip_member(const ByteReader& archive, const ZipMember& member, std::vector<uint8_t>& inflated);

}  // namespace ethosu
