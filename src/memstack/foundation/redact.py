"""The one redaction rule: credentials never leave the process.

Every error message, log line, banner, diagnosis and HTTP answer that may carry an engine URL, an
API key or a model endpoint's key goes through :func:`redact` (a whole text) or
:func:`redact_url` (one URL). The rule is generic over URL schemes, so ``redis://``,
``rediss+cluster://``, ``postgresql://`` and ``https://`` are treated alike:

* ``scheme://user:password@host`` shows as ``scheme://user:***@host``;
* ``scheme://token@host`` (userinfo without a colon: often a token) as ``scheme://***@host``,
  except for engine schemes (``postgresql``, ``postgres``, ``redis``, ``rediss``, their ``+…``
  forms, ``unix``), whose grammar reads it as a user name (``postgresql://app@db/app`` takes
  its password from ``.pgpass`` or ``PGPASSWORD``): it stays, and is never taken for a secret;
* ``name=value`` where the name says secret (``password``, ``sslpassword``, ``api_key``,
  ``key``, ``access_token``, ``client_secret``, ``sig``, ...), in a query string or a keyword
  DSN, as ``name=***``;
* a memstack API key ``msk_<id>_<secret>`` as ``msk_<id>_***``;
* ``Bearer <token>`` and ``Basic <credentials>`` as ``Bearer ***``;
* the value of every environment variable whose name says secret (``OPENAI_API_KEY``,
  ``MEMSTACK_CHAT_API_KEY``, ``MEMSTACK_METRICS_TOKEN``, ``MEMSTACK_LOG_KEY``, ...), every
  password of an engine URL opened in this process and every value given to
  :func:`register_secret`, wherever it appears, as ``***``.

Exact values shorter than :data:`MIN_SECRET_LENGTH` are not searched for as free text (masking
every ``ab`` in a message would garble it); the structural rules above still hide them.

>>> redact_url("redis://:hunter2secret@cache.internal:6379/0")
'redis://:***@cache.internal:6379/0'
>>> redact("engine 'postgresql://app:pw@db/app?sslmode=require&password=x' is down")
"engine 'postgresql://app:***@db/app?sslmode=require&password=***' is down"
>>> redact("Authorization: Bearer msk_0123456789ab_s3cr3t-value")
'Authorization: Bearer ***'
"""

from __future__ import annotations

import logging
import os
import re
import threading
from typing import Final
from urllib.parse import unquote

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "RedactingFormatter",
    "redact",
    "redact_url",
    "register_secret",
    "register_url",
]

MASK: Final = "***"
MIN_SECRET_LENGTH: Final = 6
"""Shortest exact secret value searched for in free text."""

# scheme://userinfo@ : the userinfo runs to the last '@' before the path, as urllib reads it.
_USERINFO: Final = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/\s@]*(?:@[^/\s@]*)*)@")
# Engine URL schemes whose userinfo without a colon is a user name (libpq, redis-py), not a token.
_USER_SCHEMES: Final = re.compile(r"(?:postgres|postgresql|redis|rediss|unix)(?:\+[A-Za-z0-9.+-]*)?://", re.I)
_SECRET_NAME: Final = re.compile(
    r"[A-Za-z0-9_.-]*(?:password|passwd|secret|token|credential|credentials)"
    r"|(?:[A-Za-z0-9_.-]*[_.-])?(?:pass|pwd|key|apikey|auth|authorization|sig|signature|sas)",
    re.IGNORECASE,
)
# name=value in a query string or a keyword DSN (libpq: password='a b'); the name must stand alone.
_NAME: Final = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})=")
_VALUE: Final = re.compile(r"'(?:[^'\\]|\\.)*'?|[^\s&;,'\"#)\]}]*")
_API_KEY: Final = re.compile(r"\b(msk_[0-9a-f]{12}_)[A-Za-z0-9_-]+")
_SCHEME_TOKEN: Final = re.compile(r"\b(Bearer|Basic)\s+[^\s'\",;]+", re.IGNORECASE)
_SECRET_ENV: Final = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)

_registered: set[str] = set()
_lock = threading.Lock()
_env_names: tuple[int, tuple[str, ...]] = (-1, ())


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret: :func:`redact` masks it wherever it appears afterwards.

    Values shorter than :data:`MIN_SECRET_LENGTH` are ignored (see the module docstring).
    """
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value)


def register_url(url: str) -> None:
    """Remember the credentials inside ``url`` (its userinfo and secret query values) as secrets."""
    for match in _USERINFO.finditer(url):
        user, colon, password = match.group("info").partition(":")
        if not colon and _USER_SCHEMES.fullmatch(match.group("scheme")):
            continue  # a user name alone: masking it would mask every "postgres" in every text
        for part in (password,) if colon else (user,):
            register_secret(part)
            register_secret(unquote(part))
    for match in _NAME.finditer(url):
        value = _VALUE.match(url, match.end())
        if _SECRET_NAME.fullmatch(match.group(1)) and value is not None:
            register_secret(value.group().strip("'"))
            register_secret(unquote(value.group().strip("'")))


def _secret_env_names() -> tuple[str, ...]:
    """Names of the secret-named environment variables, re-read when a variable comes or goes
    (their values are read on every call, so a changed value is seen at once)."""
    global _env_names
    size = len(os.environ)
    if _env_names[0] != size:
        _env_names = (size, tuple(k for k in os.environ if _SECRET_ENV.search(k)))
    return _env_names[1]


def _known_secrets() -> list[str]:
    found = {v for v in map(os.environ.get, _secret_env_names()) if v and len(v) >= MIN_SECRET_LENGTH}
    with _lock:
        found |= _registered
    # Longest first: a secret that contains another is masked whole.
    return sorted(found, key=len, reverse=True)


def _mask_userinfo(match: re.Match[str]) -> str:
    user, colon, _ = match.group("info").partition(":")
    scheme = match.group("scheme")
    if colon:
        return f"{scheme}{user}:{MASK}@"
    return match.group() if _USER_SCHEMES.fullmatch(scheme) else f"{scheme}{MASK}@"


def _mask_pairs(text: str) -> str:
    """``text`` with the value of every secret-named ``name=value`` masked (other pairs are kept,
    and searched inside: ``url=https://h/?key=…``)."""
    out, at = [], 0
    for match in _NAME.finditer(text):
        if match.start() < at or _SECRET_NAME.fullmatch(match.group(1)) is None:
            continue
        value = _VALUE.match(text, match.end())
        if value is None or value.end() == match.end():
            continue
        out += [text[at : match.end()], MASK]
        at = value.end()
    return "".join(out) + text[at:] if out else text


def redact_url(url: str) -> str:
    """``url`` with its password (or lone userinfo token) and secret query values masked.

    >>> redact_url("postgresql://app:s3cret@db:5432/app?sslmode=require")
    'postgresql://app:***@db:5432/app?sslmode=require'
    >>> redact_url("https://api.example.com/v1?api-key=abc123")
    'https://api.example.com/v1?api-key=***'
    >>> redact_url("sqlite:////var/lib/memstack/memstack.db")
    'sqlite:////var/lib/memstack/memstack.db'
    """
    return redact(url)


def redact(text: str) -> str:
    """``text`` with every credential the module docstring lists replaced by ``***``."""
    if not text:
        return text
    # Each rule runs only where its mark is: most texts (log lines) have none.
    if "://" in text:
        text = _USERINFO.sub(_mask_userinfo, text)
    if "=" in text:
        text = _mask_pairs(text)
    if "msk_" in text:
        text = _API_KEY.sub(rf"\g<1>{MASK}", text)
    folded = text.lower()
    if "bearer" in folded or "basic" in folded:
        text = _SCHEME_TOKEN.sub(rf"\g<1> {MASK}", text)
    for secret in _known_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    return text


class RedactingFormatter(logging.Formatter):
    """A log formatter whose output (message and traceback alike) went through :func:`redact`."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
