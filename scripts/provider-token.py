#!/usr/bin/env python3
"""APNs provider tokens (ES256 JWTs) made and checked with Python's `cryptography` package, to
cross-check PushAPNsTokens against an independent implementation (scripts/cross-check-provider-tokens).

  provider-token.py mint KEY.p8 KEY_ID TEAM_ID IAT      prints a token
  provider-token.py verify KEY.pem TOKEN                exit 0 and prints header and claims when the
                                                        signature verifies (KEY: public or private PEM)
"""
import base64
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def mint(key_file, key_id, team_id, issued_at):
    with open(key_file, "rb") as file:
        key = serialization.load_pem_private_key(file.read(), password=None)
    header = json.dumps({"alg": "ES256", "kid": key_id}, separators=(",", ":")).encode()
    claims = json.dumps({"iss": team_id, "iat": int(issued_at)}, separators=(",", ":")).encode()
    signing_input = b64url(header) + "." + b64url(claims)
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    print(signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big")))


def verify(key_file, token):
    with open(key_file, "rb") as file:
        data = file.read()
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        key = serialization.load_pem_private_key(data, password=None).public_key()
    header, claims, signature = token.split(".")
    raw = unb64url(signature)
    if len(raw) != 64:
        sys.exit("signature is not 64 bytes")
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        key.verify(der, (header + "." + claims).encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        sys.exit("signature does not verify")
    print(unb64url(header).decode())
    print(unb64url(claims).decode())


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "mint":
        mint(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "verify":
        verify(*sys.argv[2:])
    else:
        sys.exit(__doc__)
