#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""An independent reference for bpfmap's hashes, written from the papers'
definitions rather than from the C code (hash/fast_hash.h, word_hash.h,
nh_hash.h, hash_params.c state them).  It prints the known answers that
tests/test_hash.c pins:

    tests/tools/hash_reference.py kat

and, with `eta`, derives the lane relation behind one of issue 13's
hostile key families: the old NH (before the per-map independent
coefficients) used coefficient K_j ^ s for lane j, one s for all lanes,
with K_j a public table.  With the high halves of some lanes 0 and their
low halves varied by t * delta_j, the sum moves by
t * sum_j delta_j * (K_j.hi ^ s.hi), which is 0 for every s exactly when
sum_j delta_j = 0 and sum_j delta_j * bit_b(K_j.hi) = 0 for each bit b:
33 linear equations, so 48 lanes leave a lattice of solutions whose short
vectors LLL finds.
"""
import sys

M64 = (1 << 64) - 1
P61 = (1 << 61) - 1
GOLDEN = 0x9E3779B97F4A7C15
COEFS = 129


def splitmix64_stream(seed):
    state = seed
    while True:
        state = (state + GOLDEN) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def params_seeded(seed):
    g = splitmix64_stream(seed)
    mul, fin, poly = next(g), next(g), next(g)
    coef = [next(g) for _ in range(COEFS)]
    mul |= 1
    fin |= 1
    poly &= P61
    if poly == P61:
        poly = 0
    return {"mul": mul, "fin": fin, "poly": poly, "coef": coef}


def le32(b, off):
    return int.from_bytes(b[off:off + 4], "little")


HASH_MIX = 0xFF51AFD7ED558CCD  # MurmurHash3 fmix64's first multiplier


def finish(s, p):
    # a fixed bijection (xor-shift, odd product, xor-shift), then
    # multiply-shift by the random odd fin (hash_finish.h)
    x = s ^ (s >> 32)
    x = (x * HASH_MIX) & M64
    x ^= x >> 32
    return (x * p["fin"]) & M64


def word_key(x, ks, p):
    # 4-byte keys: x * mul; 8-byte keys: (hi, lo ^ hi) * mul
    if ks == 8:
        lo, hi = x & 0xFFFFFFFF, x >> 32
        x = hi << 32 | (lo ^ hi)
    return finish((x * p["mul"]) & M64, p)


def word_hash(key, p):
    # Lemire & Kaser, MULTILINEAR-HM: c0 + sum (w_2i + c_2i+1)(w_2i+1 + c_2i+2)
    c, ks = p["coef"], len(key)
    n = ks // 4
    w = [le32(key, 4 * i) for i in range(n)]
    s = c[0]
    i = 0
    while i + 2 <= n:
        s += (w[i] + c[i + 1]) * (w[i + 1] + c[i + 2])
        i += 2
    if i < n:
        s += w[i] * c[i + 1]
    if ks % 4:
        off, r = n * 4, ks - n * 4
        if ks >= 8:
            t = le32(key, ks - 4)
        else:
            t = key[off] | key[off + r // 2] << 8 | key[ks - 1] << 16
        s += t * c[n + 1]
    return finish(s & M64, p)


def nh_sum(key, coef):
    # UMAC's NH over 64-bit lanes: sum ((lo + k_lo) mod 2^32)((hi + k_hi) mod 2^32)
    ks = len(key)
    starts = [off if off + 8 <= ks else ks - 8 for off in range(0, ks, 8)]
    s = 0
    for i, st in enumerate(starts):
        lo, hi, k = le32(key, st), le32(key, st + 4), coef[i]
        s += ((lo + (k & 0xFFFFFFFF)) & 0xFFFFFFFF) * ((hi + (k >> 32)) & 0xFFFFFFFF)
    return s & M64


def nh_hash(key, p):
    return finish(nh_sum(key, p["coef"]), p)


def nh_long(key, p):
    # NH per 1024-byte block (the last block the key's last 1024 bytes), the
    # blocks' sums as 32-bit limbs of a polynomial at p["poly"] mod 2^61 - 1
    ks, acc, off = len(key), 0, 0
    while True:
        at = off if off + 1024 < ks else ks - 1024
        s = nh_sum(key[at:at + 1024], p["coef"])
        acc = (acc * p["poly"] + (s & 0xFFFFFFFF)) % P61
        acc = (acc * p["poly"] + (s >> 32)) % P61
        if at == ks - 1024:
            break
        off += 1024
    return finish(acc, p)


def bpfmap_hash(key, p):
    ks = len(key)
    if ks in (4, 8):
        return word_key(int.from_bytes(key, "little"), ks, p)
    if ks > 1024:
        return nh_long(key, p)
    if ks >= 64:
        return nh_hash(key, p)
    return word_hash(key, p)


def kat():
    four = b"Four score and seven years ago"
    seq = bytes(i & 0xFF for i in range(3000))
    cases = [("four", 1), ("four", 3), ("four", 4), ("four", 6), ("four", 8), ("four", 12),
             ("four", 13), ("four", 16), ("four", 30), ("seq", 24), ("seq", 37), ("seq", 63),
             ("seq", 64), ("seq", 100), ("seq", 256), ("seq", 1024), ("seq", 1025),
             ("seq", 2048), ("seq", 2500)]
    for seed in (0, 0x0123456789ABCDEF):
        p = params_seeded(seed)
        print("seed %#x: mul %#018x fin %#018x poly %#018x coef[0] %#018x coef[128] %#018x"
              % (seed, p["mul"], p["fin"], p["poly"], p["coef"][0], p["coef"][128]))
        for src, ks in cases:
            data = four if src == "four" else seq
            print("  { %#xULL, %s, %4d, 0x%016xULL }," % (seed, src, ks,
                                                        bpfmap_hash(data[:ks], p)))
        # nh on a size the word hash owns, for the out-of-line NH
        print("  nh seq 32: 0x%016x" % nh_hash(seq[:32], p))
        print("  words seq 100: 0x%016x" % word_hash(seq[:100], p))


# ---- the old NH's lane relation (issue 13) ----

def old_coefficients():
    # The word hash's K_i of the old design: splitmix64 from 0x6d756c74696c696e, bit 0 set.
    g = splitmix64_stream(0x6D756C74696C696E)
    return [next(g) | 1 for _ in range(COEFS)]


def lll(basis, delta=0.99):
    # Textbook LLL (Lenstra, Lenstra, Lovasz 1982) with floating-point
    # Gram-Schmidt, recomputed after each swap: small dimensions only.
    b = [list(v) for v in basis]
    n = len(b)

    def dot(u, v):
        return float(sum(x * y for x, y in zip(u, v)))

    def gso():
        bs, mu = [], [[0.0] * n for _ in range(n)]
        for i in range(n):
            v = [float(x) for x in b[i]]
            for j in range(i):
                mu[i][j] = dot(b[i], bs[j]) / dot(bs[j], bs[j])
                v = [x - mu[i][j] * y for x, y in zip(v, bs[j])]
            bs.append(v)
        return bs, mu, [dot(v, v) for v in bs]

    bs, mu, nb = gso()
    k = 1
    while k < n:
        for j in range(k - 1, -1, -1):
            q = round(mu[k][j])
            if q:
                b[k] = [x - q * y for x, y in zip(b[k], b[j])]
                for i in range(j):
                    mu[k][i] -= q * mu[j][i]
                mu[k][j] -= q
        if nb[k] >= (delta - mu[k][k - 1] ** 2) * nb[k - 1]:
            k += 1
        else:
            b[k], b[k - 1] = b[k - 1], b[k]
            bs, mu, nb = gso()
            k = max(k - 1, 1)
    return b


def eta(first_lane=1, lanes=40):
    coef = old_coefficients()
    his = [coef[first_lane + j] >> 32 for j in range(lanes)]
    rows = [[1] * lanes] + [[(h >> bit) & 1 for h in his] for bit in range(32)]
    weight = 1 << 16
    basis = [[1 if i == j else 0 for i in range(lanes)] + [weight * r[j] for r in rows]
             for j in range(lanes)]
    red = lll(basis)
    sols = [v[:lanes] for v in red if all(x == 0 for x in v[lanes:]) and any(v[:lanes])]
    sols.sort(key=lambda v: max(abs(x) for x in v))
    best = sols[0]
    # check: the old NH sum moves by 0 under every s.hi
    for s in (0, 1, 0xDEADBEEF, 0xFFFFFFFF, 0x12345678):
        assert sum(d * (h ^ s) for d, h in zip(best, his)) == 0
    print("/* lanes %d..%d, max |delta| %d */" % (first_lane, first_lane + lanes - 1,
                                                  max(abs(x) for x in best)))
    print("{ " + ", ".join(str(x) for x in best) + " }")


if __name__ == "__main__":
    if sys.argv[1:] == ["kat"]:
        kat()
    elif sys.argv[1:] == ["eta"]:
        eta()
    else:
        sys.exit("usage: hash_reference.py kat|eta")
