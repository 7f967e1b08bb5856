#!/usr/bin/env python3
"""Password hashes made by an implementation independent of Portcullis', for its import tests.

Prints a JSON list of vectors, each an Identity Toolkit UploadAccount request's hash
fields (`hashAlgorithm`, `signerKey`, `saltSeparator`, `rounds`, `memoryCost`,
`cpuMemCost`, `blockSize`, `parallelization`, `dkLen`, `passwordHashOrder`; bytes in
standard base64, as the request carries them) with one user's `password`, `salt` and
`passwordHash`. Passwords and salts are random on every run.

Firebase's modified scrypt is the published algorithm (github.com/firebase/scrypt,
`scryptenc_buf_saltlen`): scrypt(password, salt + separator, N = 2^memoryCost,
r = rounds, p = 1, 64 bytes), whose first 32 bytes key AES-256-CTR (counter block 0)
encrypting the signer key, on hashlib.scrypt and cryptography's AES. Standard scrypt is
hashlib.scrypt, PBKDF2 hashlib.pbkdf2_hmac, HMAC the hmac module, and bcrypt the
`bcrypt` package.
"""

import base64
import hashlib
import hmac
import json
import secrets

import bcrypt
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def b64(data):
    return base64.b64encode(data).decode()


def random_password():
    # Non-ASCII too: every implementation hashes the password's UTF-8 bytes.
    return secrets.choice(["", "pässwörd-", "пароль ", "✓ "]) + secrets.token_urlsafe(secrets.choice([6, 12, 24]))


def firebase_scrypt(password, salt, separator, signer_key, rounds, memory_cost):
    derived = hashlib.scrypt(
        password, salt=salt + separator, n=2**memory_cost, r=rounds, p=1, dklen=64, maxmem=256 * 1024 * 1024)
    encryptor = Cipher(algorithms.AES(derived[:32]), modes.CTR(bytes(16))).encryptor()
    return encryptor.update(signer_key) + encryptor.finalize()


def vector(name, password, salt, password_hash, **config):
    fields = {"name": name, "password": password, "salt": b64(salt), "passwordHash": b64(password_hash)}
    for key, value in config.items():
        fields[key] = b64(value) if isinstance(value, bytes) else value
    return fields


def main():
    vectors = []

    for name, rounds, memory_cost, separator, salt_length in [
        ("SCRYPT at Firebase's own cost", 8, 14, b"\x07", 12),
        ("SCRYPT, cheap", 8, 10, b"\x07", 12),
        ("SCRYPT, one round, no separator", 1, 4, b"", 16),
        ("SCRYPT, empty salt, long separator", 2, 6, b"sep-\x00-\xff", 0),
    ]:
        password, salt, key = random_password(), secrets.token_bytes(salt_length), secrets.token_bytes(64)
        digest = firebase_scrypt(password.encode(), salt, separator, key, rounds, memory_cost)
        vectors.append(vector(
            name, password, salt, digest, hashAlgorithm="SCRYPT", signerKey=key, saltSeparator=separator, rounds=rounds,
            memoryCost=memory_cost))

    for name, n, r, p, dk_len in [
        ("STANDARD_SCRYPT as firebase-admin's test", 1024, 8, 16, 64),
        ("STANDARD_SCRYPT, 16-byte key", 16, 1, 1, 16),
        ("STANDARD_SCRYPT, r = 4, p = 2", 256, 4, 2, 32),
    ]:
        password, salt = random_password(), secrets.token_bytes(16)
        digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=dk_len)
        vectors.append(vector(
            name, password, salt, digest, hashAlgorithm="STANDARD_SCRYPT", cpuMemCost=n, blockSize=r, parallelization=p,
            dkLen=dk_len))

    for name, prefix, cost in [("BCRYPT $2b$", b"2b", 4), ("BCRYPT $2a$", b"2a", 5), ("BCRYPT $2y$", b"2b", 4)]:
        password = random_password()
        digest = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=cost, prefix=prefix))
        if name.endswith("$2y$"):
            # PHP's name for the same algorithm as $2b$: the bcrypt package checks it as such.
            digest = b"$2y$" + digest[4:]
            assert bcrypt.checkpw(password.encode(), digest)
        vectors.append(vector(name, password, b"", digest, hashAlgorithm="BCRYPT"))

    for name, rounds, dk_len in [("PBKDF2_SHA256, 64 bytes", 1000, 64), ("PBKDF2_SHA256, 32 bytes", 1, 32)]:
        password, salt = random_password(), secrets.token_bytes(16)
        digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, rounds, dklen=dk_len)
        vectors.append(vector(name, password, salt, digest, hashAlgorithm="PBKDF2_SHA256", rounds=rounds))

    for name, order in [
        ("HMAC_SHA256, no order (password, salt)", None),
        ("HMAC_SHA256, PASSWORD_AND_SALT", "PASSWORD_AND_SALT"),
        ("HMAC_SHA256, SALT_AND_PASSWORD", "SALT_AND_PASSWORD"),
    ]:
        password, salt, key = random_password(), secrets.token_bytes(8), secrets.token_bytes(32)
        message = salt + password.encode() if order == "SALT_AND_PASSWORD" else password.encode() + salt
        digest = hmac.new(key, message, hashlib.sha256).digest()
        config = {"hashAlgorithm": "HMAC_SHA256", "signerKey": key}
        if order:
            config["passwordHashOrder"] = order
        vectors.append(vector(name, password, salt, digest, **config))

    print(json.dumps(vectors, indent=1))


if __name__ == "__main__":
    main()
