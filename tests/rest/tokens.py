"""Signing keys and JWTs for the authentication tests (RS256, made fresh per test run)."""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

AUDIENCE = "pushdown"


@cache
def keypair(name: str) -> tuple[bytes, bytes]:
    """(private PEM, public PEM) of an RSA key, one per ``name``."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


def public_key_file(directory: Path, name: str = "server") -> Path:
    path = directory / f"{name}.pub.pem"
    path.write_bytes(keypair(name)[1])
    return path


def token(
    user: str, *, key: str = "server", audience: str = AUDIENCE, ttl: float = 300, **claims: Any
) -> str:
    now = int(time.time())
    payload = {"sub": user, "aud": audience, "iat": now, "exp": now + int(ttl), **claims}
    return jwt.encode(payload, keypair(key)[0], algorithm="RS256")
