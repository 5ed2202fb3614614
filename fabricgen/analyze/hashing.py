"""Modelled ECMP hash functions, vectorised over flows.

Real switch ASIC hashes are proprietary.  These are models of the kind ASICs
use, as SAI exposes them (`SAI_SWITCH_ATTR_ECMP_DEFAULT_HASH_ALGORITHM` CRC /
XOR, a 32-bit `..._HASH_SEED` and a `..._HASH_OFFSET` that rotates the hash
right before the member is picked):

* ``crc16``: CRC-16/CCITT (poly 0x1021, MSB first), register initialised with the seed;
* ``crc32``: CRC-32 (reflected poly 0xEDB88320), register initialised with the seed;
* ``xor``: the key folded into 16 bits by XOR, then XOR the seed.

The member of a group of n next hops is ``rotr(hash, offset) mod n``.  A
switch with QP hashing (``ecmp.qp_hashing``) hashes three more bytes: those at
outer L4 offset 13-15, the BTH destination QP of a RoCEv2 packet (the key's
last three columns, ``overlay.headers`` fills them).  A seed
enters a CRC linearly, so with power-of-two groups a new seed alone only
relabels the members; the offset (other hash bits) is what decorrelates two
tiers, which is why SONiC gives leaves both seed 10 and offset 10
(sonic-buildimage dockers/docker-orchagent/switch.json.j2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

HASHES = ("crc16", "crc32", "xor")
WIDTH = {"crc16": 16, "crc32": 32, "xor": 16}
FIELDS = ("src-ip", "dst-ip", "l4-src-port", "l4-dst-port", "ip-protocol")
ROCE_UDP_PORT = 4791
UDP = 17
SPORTS = ("qp", "connection")  # a NIC's RoCEv2 UDP source port: one per QP, or one per connection (flows.generate)
KEY_BYTES = 13  # the 5-tuple part of a key; a QP-hashing switch also reads the QP_BYTES after it
QP_BYTES = 3

# Seed and offset per tier rank when seeds differ per tier: SONiC's values for ToR/leaf/spine routers
# (switch.json.j2: ToRRouter 0, LeafRouter 10 with offset 10, SpineRouter 25); a third tier gets 50.
TIER_SEEDS = ((10, 10), (25, 0), (50, 5))


def _table(poly: int, width: int, reflected: bool) -> np.ndarray:
    table = np.zeros(256, dtype=np.uint32)
    top = 1 << (width - 1)
    mask = (1 << width) - 1
    for byte in range(256):
        if reflected:
            crc = byte
            for _ in range(8):
                crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        else:
            crc = byte << (width - 8)
            for _ in range(8):
                crc = ((crc << 1) ^ poly) & mask if crc & top else (crc << 1) & mask
        table[byte] = crc
    return table


_CRC16 = _table(0x1021, 16, reflected=False)
_CRC32 = _table(0xEDB88320, 32, reflected=True)


def keys(src_ip: np.ndarray, dst_ip: np.ndarray, sport: np.ndarray, fields: tuple[str, ...],
         dport: np.ndarray | None = None, qp: np.ndarray | None = None) -> np.ndarray:
    """The hash key of every flow: 13 bytes (uint8 [n, 13]), fields not hashed zero; with `qp` (the 24-bit value
    at outer L4 offset 13) 3 bytes more.  `dport` defaults to RoCEv2's UDP port."""
    n = len(src_ip)
    key = np.zeros((n, KEY_BYTES + (QP_BYTES if qp is not None else 0)), dtype=np.uint8)

    def put(col: int, value: np.ndarray, nbytes: int) -> None:
        v = value.astype(np.uint64)
        for i in range(nbytes):
            key[:, col + i] = (v >> np.uint64(8 * (nbytes - 1 - i))) & np.uint64(0xFF)

    if "src-ip" in fields:
        put(0, src_ip, 4)
    if "dst-ip" in fields:
        put(4, dst_ip, 4)
    if "l4-src-port" in fields:
        put(8, sport, 2)
    if "l4-dst-port" in fields:
        put(10, np.full(n, ROCE_UDP_PORT) if dport is None else dport, 2)
    if "ip-protocol" in fields:
        key[:, 12] = UDP
    if qp is not None:
        put(KEY_BYTES, qp, QP_BYTES)
    return key


def hash_keys(kind: str, key: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Hash every row of `key` with its own seed (uint32 array, one per row)."""
    seed = seed.astype(np.uint32)
    if kind == "crc32":
        crc = seed.copy()
        for col in range(key.shape[1]):
            crc = _CRC32[(crc ^ key[:, col]) & 0xFF] ^ (crc >> np.uint32(8))
        return crc
    if kind == "crc16":
        crc = seed & np.uint32(0xFFFF)
        for col in range(key.shape[1]):
            crc = (_CRC16[((crc >> np.uint32(8)) ^ key[:, col]) & 0xFF] ^ (crc << np.uint32(8))) & np.uint32(0xFFFF)
        return crc
    if kind == "xor":
        words = key[:, 0:12].astype(np.uint32).reshape(len(key), 6, 2)
        folded = np.bitwise_xor.reduce((words[:, :, 0] << np.uint32(8)) | words[:, :, 1], axis=1)
        folded ^= key[:, 12].astype(np.uint32) << np.uint32(8)
        if key.shape[1] > KEY_BYTES:  # the QP bytes, folded on as two more 16-bit words
            folded ^= (key[:, 13].astype(np.uint32) << np.uint32(8)) | key[:, 14]
            folded ^= key[:, 15].astype(np.uint32) << np.uint32(8)
        out: np.ndarray = (folded ^ seed) & np.uint32(0xFFFF)
        return out
    raise ValueError(f"unknown hash {kind!r}; use one of {', '.join(HASHES)}")


def rotate_right(value: np.ndarray, offset: np.ndarray, width: int) -> np.ndarray:
    v = value.astype(np.uint64)
    o = (offset.astype(np.uint64) % np.uint64(width))
    mask = np.uint64((1 << width) - 1)
    return (((v >> o) | (v << (np.uint64(width) - o))) & mask).astype(np.uint32)


@dataclass(frozen=True)
class HashModel:
    """Which hash, and the seed and offset of every switch."""

    kind: str
    seeds: np.ndarray  # uint32 per node
    offsets: np.ndarray  # uint8 per node
    qp: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # per node: also hashes the QP bytes

    def member(self, key: np.ndarray, node: np.ndarray, size: np.ndarray) -> np.ndarray:
        """Index of the next hop each flow takes in its group of `size` members at `node`; a QP-hashing switch
        also hashes the key's QP bytes (when the key has them)."""
        h = hash_keys(self.kind, key[:, :KEY_BYTES], self.seeds[node])
        if key.shape[1] > KEY_BYTES and self.qp.size:
            on = self.qp[node]
            if on.any():
                h[on] = hash_keys(self.kind, key[on], self.seeds[node[on]])
        h = rotate_right(h, self.offsets[node], WIDTH[self.kind])
        index: np.ndarray = (h % np.maximum(size, 1).astype(np.uint32)).astype(np.int64)
        return index


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a deterministic stand-in for 'a different value per switch'."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


SEED_SCHEMES = ("plan", "same", "tier", "switch")


def hash_model(kind: str, rank: np.ndarray, seeds: str = "same", base_seed: int = 0,
               planned: tuple[np.ndarray, np.ndarray] | None = None, qp: np.ndarray | None = None) -> HashModel:
    """Seeds `plan` (each switch's seed and rotation as planned: `planned`), `same` (one seed everywhere, the
    SAI default 0), `tier` (per tier) or `switch` (per switch); `qp`: the switches that also hash the QP."""
    if kind not in HASHES:
        raise ValueError(f"unknown hash {kind!r}; use one of {', '.join(HASHES)}")
    n = len(rank)
    if seeds == "plan":
        if planned is None:
            raise ValueError("seeds 'plan' needs the planned seeds and rotations")
        s = planned[0].astype(np.uint64) + np.uint64(base_seed)
        o = planned[1].astype(np.uint64)
    elif seeds == "same":
        s = np.full(n, base_seed, dtype=np.uint64)
        o = np.zeros(n, dtype=np.uint64)
    elif seeds == "tier":
        table = np.array(TIER_SEEDS, dtype=np.uint64)
        r = np.minimum(rank.astype(np.int64), len(TIER_SEEDS) - 1)
        s = table[r, 0] + np.uint64(base_seed)
        o = table[r, 1]
    elif seeds == "switch":
        m = mix(np.arange(n, dtype=np.uint64) + np.uint64(base_seed) * np.uint64(1_000_003))
        s = m & np.uint64(0xFFFFFFFF)
        o = (m >> np.uint64(32)) % np.uint64(WIDTH[kind])
    else:
        raise ValueError(f"unknown seed scheme {seeds!r}; use {', '.join(SEED_SCHEMES)}")
    return HashModel(kind, (s & np.uint64(0xFFFFFFFF)).astype(np.uint32), o.astype(np.uint8),
                     np.zeros(n, dtype=bool) if qp is None else qp.astype(bool))
