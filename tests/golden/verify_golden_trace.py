#!/usr/bin/env python3
"""Re-derives the DSEKP v1 golden trace from docs/PROTOCOL.md alone, with Python's standard library.

This is the "second implementation" check: everything except AES-GCM (not in the standard library;
the C++ test checks the ciphertexts and tags on two independent backends) is recomputed here from
the fixed inputs and compared byte for byte: key schedule, proofs, nonces, AAD and every frame in
both encodings. With a second argument (docs/PROTOCOL.md) it also checks that the golden-trace
table printed in the spec is the committed trace, so the document cannot drift from the tests.
Usage: verify_golden_trace.py tests/vectors/golden_trace_v1.json [docs/PROTOCOL.md]
"""
import base64
import hashlib
import hmac
import json
import sys


def hkdf_extract(salt: bytes, ikm: bytes) -> bytes:
    return hmac.new(salt or bytes(32), ikm, hashlib.sha256).digest()


def hkdf_expand(prk: bytes, info: bytes, length: int) -> bytes:
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def u(value: int, width: int) -> bytes:
    return value.to_bytes(width, "big")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def check_document(trace: dict, doc_path: str) -> list:
    """Rows `| `name` | `value` |` of the spec's golden-trace table must equal the trace."""
    rows = {}
    for line in open(doc_path, encoding="utf-8"):
        parts = line.rstrip("\n").split(" | ")
        if len(parts) == 2 and parts[0].startswith("| `") and parts[1].endswith("` |"):
            rows[parts[0][3:-1]] = parts[1][1:-3]
    problems = [f"{name}: missing from the document" for name in trace if name not in rows]
    problems += [f"{name}: document has {rows[name]}" for name in trace
                 if name in rows and rows[name] != trace[name]]
    return problems


def main(path: str, doc_path: str = "") -> int:
    t = json.load(open(path))["trace"]
    h = bytes.fromhex
    failures = []

    def check(name: str, expected) -> None:
        actual = t[name]
        want = expected.hex() if isinstance(expected, bytes) else expected
        if actual != want:
            failures.append(f"{name}: trace has {actual}, spec gives {want}")

    dev_id = t["dev_id"].encode()
    secret, salt = h(t["dev_secret"]), h(t["edge_salt"])
    sessctr, ts_s = int(t["sessctr"]), int(t["t"])
    dev_nonce, edge_nonce = h(t["dev_nonce"]), h(t["edge_nonce"])
    id_lp = u(len(dev_id), 1) + dev_id

    ikm = secret + dev_nonce + u(sessctr, 2) + u(ts_s, 4)
    check("ikm", ikm)
    prk = hkdf_extract(salt, ikm)
    check("prk", prk)
    check("session_info", b"DSEKP1 session" + id_lp)
    ss = hkdf_expand(prk, b"DSEKP1 session" + id_lp, 32)
    check("ss", ss)
    k_init = hkdf_expand(ss, b"DSEKP1 init", 32)
    k_ack = hkdf_expand(ss, b"DSEKP1 ack", 32)
    check("k_init", k_init)
    check("k_ack", k_ack)

    init_transcript = b"DSEKP1 INIT" + id_lp + u(sessctr, 2) + u(ts_s, 4) + dev_nonce
    check("init_transcript", init_transcript)
    init_proof = hmac.new(k_init, init_transcript, hashlib.sha256).digest()[:16]
    check("init_proof", init_proof)
    check("init_json", '{"v":1,"dev_id":"%s","sessctr":%d,"t":%d,"dev_nonce":"%s","proof":"%s"}'
          % (dev_id.decode(), sessctr, ts_s, b64(dev_nonce), b64(init_proof)))
    check("init_compact", b"\x01" + id_lp + u(sessctr, 2) + u(ts_s, 4) + dev_nonce + init_proof)

    ack_transcript = b"DSEKP1 ACK" + init_proof + edge_nonce + u(0, 1)
    check("ack_transcript", ack_transcript)
    ack_proof = hmac.new(k_ack, ack_transcript, hashlib.sha256).digest()[:16]
    check("ack_proof", ack_proof)
    check("ack_json", '{"v":1,"dev_id":"%s","sessctr":%d,"edge_nonce":"%s","status":0,"proof":"%s"}'
          % (dev_id.decode(), sessctr, b64(edge_nonce), b64(ack_proof)))
    check("ack_compact", b"\x02" + id_lp + u(sessctr, 2) + edge_nonce + u(0, 1) + ack_proof)

    ts = hkdf_extract(edge_nonce, ss)
    check("ts", ts)
    up, down = hkdf_expand(ts, b"DSEKP1 up", 28), hkdf_expand(ts, b"DSEKP1 down", 28)
    check("k_up", up[:16])
    check("iv_up", up[16:])
    check("k_down", down[:16])
    check("iv_down", down[16:])

    for prefix, iv_base, label, type_byte in (("data0", up[16:], b"DSEKP1 DATA", 3),
                                              ("data1", up[16:], b"DSEKP1 DATA", 3),
                                              ("down0", down[16:], b"DSEKP1 DOWN", 4)):
        seq, sendts = int(t[prefix + "_seq"]), int(t[prefix + "_sendts_ms"])
        nonce = bytes(a ^ b for a, b in zip(iv_base, u(0, 4) + u(seq, 8)))
        check(prefix + "_nonce", nonce)
        check(prefix + "_aad", label + id_lp + u(sessctr, 2) + u(seq, 4) + u(sendts, 8))
        ct, tag = h(t[prefix + "_ciphertext"]), h(t[prefix + "_tag"])
        if len(ct) != len(t[prefix + "_plaintext"].encode()):
            failures.append(prefix + ": ciphertext length differs from plaintext length")
        check(prefix + "_json",
              '{"seq":%d,"dev_id":"%s","sessctr_id":%d,"ciphertext":"%s","iv":"%s","tag":"%s",'
              '"sendts_ms":%d}' % (seq, dev_id.decode(), sessctr, b64(ct), b64(nonce), b64(tag), sendts))
        check(prefix + "_compact",
              u(type_byte, 1) + id_lp + u(sessctr, 2) + u(seq, 4) + u(sendts, 8) + ct + tag)

    psk_iv, psk_ct, psk_tag = h(t["psk_iv"]), h(t["psk_ciphertext"]), h(t["psk_tag"])
    sendts0 = int(t["data0_sendts_ms"])
    check("psk_json", '{"seq":0,"dev_id":"%s","ciphertext":"%s","iv":"%s","tag":"%s","sendts_ms":%d}'
          % (dev_id.decode(), b64(psk_ct), b64(psk_iv), b64(psk_tag), sendts0))
    check("psk_compact", b"\x05" + id_lp + u(0, 4) + u(sendts0, 8) + psk_iv + psk_ct + psk_tag)

    rekey_prk = hkdf_extract(salt, secret)
    check("rekey_prk", rekey_prk)
    check("rekey_info", b"DSEKP1 rekey" + id_lp)
    k_rekey = hkdf_expand(rekey_prk, b"DSEKP1 rekey" + id_lp, 32)
    check("k_rekey", k_rekey)
    rekey_seq = int(t["rekey_seq"])
    rekey_transcript = b"DSEKP1 REKEY" + id_lp + u(sessctr, 2) + u(rekey_seq, 4)
    check("rekey_transcript", rekey_transcript)
    rekey_proof = hmac.new(k_rekey, rekey_transcript, hashlib.sha256).digest()[:16]
    check("rekey_proof", rekey_proof)
    check("rekey_json", '{"v":1,"dev_id":"%s","sessctr":%d,"seq":%d,"proof":"%s"}'
          % (dev_id.decode(), sessctr, rekey_seq, b64(rekey_proof)))
    check("rekey_compact", b"\x06" + id_lp + u(sessctr, 2) + u(rekey_seq, 4) + rekey_proof)

    # v1.2: the ratchet (6.6), two steps from DEV_SECRET.
    ratchet_info = b"DSEKP1 ratchet" + id_lp
    check("ratchet_info", ratchet_info)
    secret_1 = hkdf_expand(hkdf_extract(salt, secret), ratchet_info, 32)
    check("dev_secret_1", secret_1)
    check("dev_secret_2", hkdf_expand(hkdf_extract(salt, secret_1), ratchet_info, 32))

    if doc_path:
        failures += check_document(t, doc_path)
    for f in failures:
        print("MISMATCH", f)
    checked = sum(1 for _ in t)
    print(f"golden trace re-derived in Python: {checked} entries, {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
