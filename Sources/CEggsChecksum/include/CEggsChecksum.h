// CRC-32C (Castagnoli), the checksum of PeerNet datagrams outside passphrase rooms: with the
// processor's CRC instruction where it has one (x86-64 SSE4.2, AArch64 CRC), which needs no
// table; a byte-wise table otherwise. The header includes no system header.
#ifndef CEGGSCHECKSUM_H
#define CEGGSCHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C of `count` bytes (initial value and final XOR 0xFFFFFFFF; "123456789" gives 0xE3069283).
uint32_t eggs_crc32c(const void *bytes, size_t count);

/// The same by the table alone, whatever the processor (for tests that hold the two to each other).
uint32_t eggs_crc32c_portable(const void *bytes, size_t count);

#endif
