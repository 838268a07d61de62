"""Algorithm facts shared by workloads, models and units: AES and SHA-256 block sizes and padding.

Like the stencil table, this is data every side imports (the crypto workloads
size their buffers with it, the crypto unit prices its blocks with it).
"""

from __future__ import annotations

import math


AES_BLOCK_BYTES = 16  # FIPS 197: 128-bit blocks
SHA256_BLOCK_BYTES = 64  # FIPS 180-4: 512-bit message blocks
SHA256_DIGEST_BYTES = 32
SHA256_LENGTH_BYTES = 8  # the 64-bit message length closing the padding


def sha256_padded_bytes(nbytes: int) -> int:
    """Bytes SHA-256 hashes for an ``nbytes`` message: message, 0x80, zeros, 8-byte length, to 64 B."""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0 bytes, got {nbytes!r}")
    return math.ceil((nbytes + 1 + SHA256_LENGTH_BYTES) / SHA256_BLOCK_BYTES) * SHA256_BLOCK_BYTES


def aes_blocks(nbytes: int) -> int:
    """16 B AES blocks covering ``nbytes`` (the last one padded)."""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0 bytes, got {nbytes!r}")
    return math.ceil(nbytes / AES_BLOCK_BYTES)


def split_blocks(n_blocks: int, parts: int) -> list[int]:
    """Blocks of each of ``parts`` engines: as equal as possible, larger parts first."""
    if parts < 1:
        raise ValueError(f"parts must be >= 1, got {parts!r}")
    base, extra = divmod(n_blocks, parts)
    return [base + (1 if k < extra else 0) for k in range(parts)]
