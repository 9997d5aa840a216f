// ChaCha20 block function (RFC 8439, section 2.3), for the samplers of secret keys, encryption
// randomness and errors: a 256-bit key, a 32-bit block counter and a 96-bit nonce give 64 bytes of
// keystream as 16 little-endian 32-bit words. Plain integer code, so a host build (g++) runs it too.
#pragma once

__device__ __forceinline__ unsigned chacha20_rotl(unsigned x, int r) { return (x << r) | (x >> (32 - r)); }

__device__ __forceinline__ void chacha20_quarter(unsigned &a, unsigned &b, unsigned &c, unsigned &d) {
    a += b; d ^= a; d = chacha20_rotl(d, 16);
    c += d; b ^= c; b = chacha20_rotl(b, 12);
    a += b; d ^= a; d = chacha20_rotl(d, 8);
    c += d; b ^= c; b = chacha20_rotl(b, 7);
}

// out[0..15] = the serialized block for (key[0..7], counter, nonce[0..2]), words little-endian.
__device__ __forceinline__ void chacha20_block(const unsigned *key, unsigned counter, const unsigned *nonce,
                                               unsigned *out) {
    unsigned s[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u,  // "expand 32-byte k"
                      key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
                      counter, nonce[0], nonce[1], nonce[2]};
    unsigned w[16];
    for (int i = 0; i < 16; ++i) w[i] = s[i];
    for (int round = 0; round < 10; ++round) {  // 20 rounds: a column round and a diagonal round each
        chacha20_quarter(w[0], w[4], w[8], w[12]);
        chacha20_quarter(w[1], w[5], w[9], w[13]);
        chacha20_quarter(w[2], w[6], w[10], w[14]);
        chacha20_quarter(w[3], w[7], w[11], w[15]);
        chacha20_quarter(w[0], w[5], w[10], w[15]);
        chacha20_quarter(w[1], w[6], w[11], w[12]);
        chacha20_quarter(w[2], w[7], w[8], w[13]);
        chacha20_quarter(w[3], w[4], w[9], w[14]);
    }
    for (int i = 0; i < 16; ++i) out[i] = w[i] + s[i];
}
