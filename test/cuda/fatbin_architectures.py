"""Lists the GPU architectures compiled into object files and static libraries.

For every ELF object (alone, or a member of an `ar` archive) with a `.nv_fatbin` section,
reads the fat binary's entries (1 = PTX, 2 = cubin, and the sm number of each) and prints
how many objects carry each architecture:

    objects with device code: 14
    sm_75 cubin in 14
    ...
    compute_90 ptx in 14

It does what `cuobjdump --list-elf` would, with nothing but the Python standard library,
for machines whose CUDA installation has no cuobjdump.
"""
import struct
import sys
from collections import Counter

FATBIN_MAGIC = 0xBA55ED50
ENTRY_KINDS = {1: "ptx", 2: "cubin"}


def archive_members(data):
    """Yields the contents of the members of an `ar` archive."""
    offset = 8  # "!<arch>\n"
    while offset + 60 <= len(data):
        size = int(data[offset + 48:offset + 58].decode().strip())
        yield data[offset + 60:offset + 60 + size]
        offset += 60 + size + (size & 1)


def elf_section(data, wanted):
    """The bytes of the named section of a 64-bit little-endian ELF file, or None."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    for name, _, _, _, offset, size in headers:
        end = data.index(b"\0", names_offset + name)
        if data[names_offset + name:end].decode() == wanted:
            return data[offset:offset + size]
    return None


def fatbin_architectures(fatbin):
    """The (kind, arch) pairs of every fat binary in a .nv_fatbin section."""
    found = set()
    offset = 0
    while offset + 16 <= len(fatbin):
        magic, _, header_size, fat_size = struct.unpack_from("<IHHQ", fatbin, offset)
        if magic != FATBIN_MAGIC:
            break
        entry = offset + header_size
        end = entry + fat_size
        while entry < end:
            kind, _, entry_header_size, payload_size = struct.unpack_from("<HHIQ", fatbin, entry)
            arch, = struct.unpack_from("<I", fatbin, entry + 28)
            found.add((ENTRY_KINDS.get(kind, "kind%d" % kind), arch))
            entry += entry_header_size + payload_size
        offset = (end + 7) & ~7  # the next fat binary starts 8-byte aligned
    return found


def objects(path):
    data = open(path, "rb").read()
    return list(archive_members(data)) if data.startswith(b"!<arch>\n") else [data]


def main(paths):
    counts = Counter()
    with_device_code = 0
    for path in paths:
        for obj in objects(path):
            section = elf_section(obj, ".nv_fatbin")
            if section is None:
                continue
            with_device_code += 1
            counts.update(fatbin_architectures(section))
    print("objects with device code: %d" % with_device_code)
    for kind in ("cubin", "ptx"):
        for (entry_kind, arch), count in sorted(counts.items(), key=lambda item: item[0][1]):
            if entry_kind == kind:
                prefix = "sm" if kind == "cubin" else "compute"
                print("%s_%d %s in %d" % (prefix, arch, kind, count))


if __name__ == "__main__":
    main(sys.argv[1:])
