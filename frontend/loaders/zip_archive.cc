#include "frontend/loaders/zip_archive.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <new>

namespace ethosu {
namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint8_t kEndOfDirectorySignature[] = {'P', 'K', 5, 6};
constexpr size_t kEndOfDirectorySize = 22;
constexpr size_t kMaxCommentSize = 0xFFFF;
constexpr uint16_t kStored = 0, kDeflated = 8;
constexpr uint16_t kEncryptedFlags = 0x0001 | 0x0040;  // encrypted, strong encryption
constexpr uint32_t kZip64Marker32 = 0xFFFFFFFF;
constexpr uint16_t kZip64Marker16 = 0xFFFF;
// DEFLATE cannot expand data more than about 1032:1; a larger claimed size is a lie.
constexpr uint64_t kMaxDeflateRatio = 1032;

struct Directory {
    uint64_t offset = 0;
    uint64_t size = 0;
    uint16_t entries = 0;
};

// The end-of-central-directory record is the last thing in the file, followed only by its comment.
size_t find_end_of_directory(const ByteReader& archive) {
    if (archive.size() < kEndOfDirectorySize)
        archive.fail_at(0, "end of central directory",
                        fmt::format("{} bytes is too short for a zip archive", archive.size()));
    const size_t last = archive.size() - kEndOfDirectorySize;
    const size_t first = last > kMaxCommentSize ? last - kMaxCommentSize : 0;
    for (size_t pos = last + 1; pos-- > first;) {
        const auto candidate = archive.data().subspan(pos, sizeof kEndOfDirectorySignature);
        if (!std::equal(candidate.begin(), candidate.end(), std::begin(kEndOfDirectorySignature))) continue;
        ByteReader record = archive;
        record.seek(pos + 20, "end of central directory.comment length");
        const uint16_t comment_length = record.u16("end of central directory.comment length");
        if (record.remaining() == comment_length) return pos;
    }
    archive.fail_at(archive.size(), "end of central directory",
                    "no end-of-central-directory record (truncated archive?)");
}

Directory read_end_of_directory(ByteReader r) {
    r.seek(find_end_of_directory(r), "end of central directory");
    r.u32("end of central directory.signature");
    const uint16_t disk = r.u16("end of central directory.disk");
    const uint16_t directory_disk = r.u16("end of central directory.directory disk");
    const uint16_t disk_entries = r.u16("end of central directory.disk entries");
    Directory d;
    d.entries = r.u16("end of central directory.entries");
    d.size = r.u32("end of central directory.directory size");
    d.offset = r.u32("end of central directory.directory offset");
    if (disk != 0 || directory_disk != 0 || disk_entries != d.entries)
        r.fail_at(r.position(), "end of central directory", "multi-disk archives are not supported", ErrorKind::Unsupported);
    if (d.entries == kZip64Marker16 || d.size == kZip64Marker32 || d.offset == kZip64Marker32)
        r.fail_at(r.position(), "end of central directory", "zip64 archives are not supported", ErrorKind::Unsupported);
    return d;
}

ZipMember read_directory_entry(ByteReader& dir) {
    const size_t entry_pos = dir.position();
    if (dir.u32("central directory.signature") != kCentralHeaderSignature)
        dir.fail_at(entry_pos, "central directory.signature", "not a central directory entry");
    dir.skip(4, "central directory.versions");
    const uint16_t flags = dir.u16("central directory.flags");
    ZipMember m;
    m.method = dir.u16("central directory.method");
    dir.skip(4, "central directory.time");
    m.crc32 = dir.u32("central directory.crc32");
    m.compressed_size = dir.u32("central directory.compressed size");
    m.size = dir.u32("central directory.size");
    const uint16_t name_length = dir.u16("central directory.name length");
    const uint16_t extra_length = dir.u16("central directory.extra length");
    const uint16_t comment_length = dir.u16("central directory.comment length");
    dir.skip(8, "central directory.attributes");
    const uint64_t local_offset = dir.u32("central directory.local header offset");
    const auto name = dir.bytes(name_length, "central directory.name");
    m.name.assign(name.begin(), name.end());
    dir.skip(uint64_t{extra_length} + comment_length, "central directory.extra");

    const std::string field = "member " + m.name;
    if (flags & kEncryptedFlags) dir.fail_at(entry_pos, field, "encrypted members are not supported", ErrorKind::Unsupported);
    if (m.method != kStored && m.method != kDeflated)
        dir.fail_at(entry_pos, field, fmt::format("compression method {} is not STORED or DEFLATE", m.method));
    if (m.compressed_size == kZip64Marker32 || m.size == kZip64Marker32 || local_offset == kZip64Marker32)
        dir.fail_at(entry_pos, field, "zip64 members are not supported", ErrorKind::Unsupported);
    if (m.method == kStored && m.compressed_size != m.size)
        dir.fail_at(entry_pos, field,
                    fmt::format("STORED member with compressed size {} != size {}", m.compressed_size, m.size));
    m.data_offset = local_offset;  // moved past the local header by check_local_header
    return m;
}

// Checks the local header against the directory entry and finds where the data starts.
void check_local_header(ByteReader r, ZipMember& m) {
    const std::string field = "member " + m.name;
    r.seek(m.data_offset, field + ": local header");
    if (r.u32(field + ": local header signature") != kLocalHeaderSignature)
        r.fail_at(r.position() - 4, field, "no local file header where the directory points");
    r.skip(4, field + ": local header version and flags");
    if (r.u16(field + ": local header method") != m.method)
        r.fail_at(r.position() - 2, field, "local header and central directory disagree on the method");
    r.skip(16, field + ": local header sizes");
    const uint16_t name_length = r.u16(field + ": local header name length");
    const uint16_t extra_length = r.u16(field + ": local header extra length");
    const auto name = r.bytes(name_length, field + ": local header name");
    if (!std::equal(name.begin(), name.end(), m.name.begin(), m.name.end()))
        r.fail_at(r.position() - name_length, field, "local header names a different member");
    r.skip(extra_length, field + ": local header extra");
    m.data_offset = r.position();
    r.skip(m.compressed_size, field + ": data");
}

void check_crc(const ByteReader& member, const ZipMember& m) {
    const auto data = member.data();
    const uint32_t crc = static_cast<uint32_t>(crc32_z(0, data.data(), data.size()));
    if (crc != m.crc32)
        member.fail_at(0, "member " + m.name, fmt::format("CRC-32 0x{:08x} does not match 0x{:08x}", crc, m.crc32));
}

void inflate_member(const ByteReader& archive, const ZipMember& m, std::vector<uint8_t>& out) {
    const std::string field = "member " + m.name;
    if (m.size > kMaxDeflateRatio * m.compressed_size + 64)
        throw Error({archive.label(), m.data_offset, field},
                    fmt::format("claims {} bytes inflated from {} compressed bytes", m.size, m.compressed_size));
    const auto in = archive.data().subspan(static_cast<size_t>(m.data_offset), static_cast<size_t>(m.compressed_size));
    try {
        out.assign(static_cast<size_t>(m.size), 0);
    } catch (const std::bad_alloc&) {
        throw Error({archive.label(), m.data_offset, field},
                    fmt::format("cannot allocate {} bytes to inflate it", m.size));
    }
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw Error({archive.label(), m.data_offset, field}, "zlib init failed");
    zs.next_in = const_cast<Bytef*>(in.data());  // zlib's API is not const-correct; it does not write here
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&zs, Z_FINISH);
    const uint64_t produced = zs.total_out;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || produced != m.size)
        throw Error({archive.label(), m.data_offset, field},
                    fmt::format("DEFLATE data is corrupt (zlib {}, {} of {} bytes)", rc, produced, m.size));
}

}  // namespace

ZipDirectory read_zip_directory(const ByteReader& archive) {
    const Directory d = read_end_of_directory(archive);
    ByteReader r = archive;
    r.seek(d.offset, "central directory");
    ByteReader dir = r.sub(d.size, "central directory");
    ZipDirectory directory{d.offset, {}};
    for (uint16_t i = 0; i < d.entries; ++i) {
        ZipMember m = read_directory_entry(dir);
        check_local_header(archive, m);
        directory.members.push_back(std::move(m));
    }
    return directory;
}

ByteReader open_zip_member(const ByteReader& archive, const ZipMember& member, std::vector<uint8_t>& inflated) {
    if (member.method == kStored) {
        ByteReader r = archive;
        r.seek(member.data_offset, "member " + member.name);
        ByteReader data = r.sub(member.size, "member " + member.name);
        check_crc(data, member);
        return data;
    }
    inflate_member(archive, member, inflated);
    ByteReader data(archive.label() + ":" + member.name, inflated);
    check_crc(data, member);
    return data;
}

}  // namespace ethosu
