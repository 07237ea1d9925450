"""Who is asking: Gravitino's two authenticators, each switchable in ``[serve]``.

- ``simple``: ``Authorization: Basic base64(user:anything)`` names the user (the
  password is not checked, as in Gravitino); no header at all is ``anonymous``.
- ``oauth``: ``Authorization: Bearer <JWT>``, its signature, expiry and audience
  checked against the configured key, algorithm and audience; the user is the
  ``jwt_user_claim`` claim (``sub``).

A deployment that leaves ``simple`` out refuses Basic and header-less requests (401).
Neither the header nor the token is ever logged or repeated in an error.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from pushdown.app.rest import problems
from pushdown.app.settings.serve import ServeSettings
from pushdown.errors import ConfigError
from pushdown.model.text import has_control

ANONYMOUS = "anonymous"


def load_key(settings: ServeSettings) -> Any:
    """The key that verifies tokens, from its reference; ConfigError when unusable."""
    ref = settings.jwt_key
    if ref is None:
        return None
    if "env" in ref:
        text = os.environ.get(ref["env"])
        if not text:
            raise ConfigError(f"serve.jwt_key: environment variable {ref['env']} is not set")
    else:
        try:
            text = Path(ref["file"]).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"serve.jwt_key: cannot read {ref['file']}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"serve.jwt_key: {ref['file']} is not text (a PEM key or a secret)") from None
    hmac = settings.jwt_algorithm.startswith("HS")
    if hmac:
        check_hmac_key(settings.jwt_algorithm, text.strip())
    algorithm = jwt.get_algorithm_by_name(settings.jwt_algorithm)
    try:
        return algorithm.prepare_key(text.strip() if hmac else text)
    except Exception as exc:  # pyjwt raises several types for a key of the wrong kind
        raise ConfigError(
            f"serve.jwt_key: not a key for {settings.jwt_algorithm} ({type(exc).__name__})"
        ) from None


def check_hmac_key(algorithm: str, secret: str) -> None:
    """RFC 7518 section 3.2: an HMAC key at least as long as the hash (32 bytes for HS256,
    48 for HS384, 64 for HS512); a shorter one is refused at start-up, never used."""
    wanted = int(algorithm[2:]) // 8
    size = len(secret.encode("utf-8"))
    if size < wanted:
        raise ConfigError(
            f"serve.jwt_key: {algorithm} needs a secret of at least {wanted} bytes (RFC 7518), "
            f"this one has {size}; make one with: openssl rand -base64 {wanted}"
        )


@dataclass(frozen=True)
class Authenticator:
    settings: ServeSettings
    key: Any = None

    @classmethod
    def from_settings(cls, settings: ServeSettings) -> Authenticator:
        return cls(settings, load_key(settings) if "oauth" in settings.authenticators else None)

    @property
    def challenge(self) -> str:
        schemes = []
        if "oauth" in self.settings.authenticators:
            schemes.append('Bearer realm="pushdown"')
        if "simple" in self.settings.authenticators:
            schemes.append('Basic realm="pushdown"')
        return ", ".join(schemes)

    def user(self, header: str | None) -> str:
        """The user a request's Authorization header names; raises a 401 Problem."""
        if header is None or not header.strip():
            if "simple" in self.settings.authenticators:
                return ANONYMOUS
            raise self._refuse("authentication required: send a bearer token")
        scheme, _, credentials = header.strip().partition(" ")
        scheme = scheme.lower()
        if scheme == "basic":
            if "simple" not in self.settings.authenticators:
                raise self._refuse(
                    "simple authentication is switched off on this server: send a bearer token"
                )
            return self._basic(credentials.strip())
        if scheme == "bearer":
            if "oauth" not in self.settings.authenticators:
                raise self._refuse("bearer tokens are not accepted by this server (oauth is switched off)")
            return self._bearer(credentials.strip())
        raise self._refuse("unknown authorization scheme: use Basic or Bearer")

    def _refuse(self, message: str) -> problems.Problem:
        return problems.unauthorized(message, self.challenge)

    def _basic(self, credentials: str) -> str:
        try:
            text = base64.b64decode(credentials, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise self._refuse("malformed Basic credentials: expected base64 of user:password") from None
        user = text.split(":", 1)[0].strip()
        if not user:
            return ANONYMOUS
        if has_control(user):
            raise self._refuse("the user name in the Basic credentials holds a control character")
        return user

    def _bearer(self, token: str) -> str:
        s = self.settings
        claim = s.jwt_user_claim
        try:
            claims = jwt.decode(
                token,
                self.key,
                algorithms=[s.jwt_algorithm],
                audience=s.jwt_audience,
                options={"require": ["exp", "aud", claim]},
            )
        except jwt.ExpiredSignatureError:
            raise self._refuse("the token has expired") from None
        except jwt.InvalidAudienceError:
            raise self._refuse(
                f"the token is not for this server (audience is not {s.jwt_audience!r})"
            ) from None
        except jwt.InvalidSignatureError:
            raise self._refuse("the token's signature does not verify against the configured key") from None
        except jwt.MissingRequiredClaimError as exc:
            raise self._refuse(f"the token lacks the {exc.claim!r} claim") from None
        except jwt.InvalidAlgorithmError:
            raise self._refuse(f"the token is not signed with {s.jwt_algorithm}") from None
        except jwt.InvalidTokenError:
            raise self._refuse("malformed or invalid token") from None
        user = claims.get(claim)
        if not isinstance(user, str) or not user.strip() or has_control(user):
            raise self._refuse(f"the token's {claim!r} claim is not a user name")
        return user
