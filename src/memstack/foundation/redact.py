"""The one redaction rule: credentials never leave the process.

Every error message, log line, banner, diagnosis and HTTP answer that may carry an engine URL, an
API key or a model endpoint's key goes through :func:`redact` (a whole text) or
:func:`redact_url` (one URL). The rule is generic over URL schemes, so ``redis://``,
``rediss+cluster://``, ``postgresql://`` and ``https://`` are treated alike:

* ``scheme://user:password@host`` shows as ``scheme://user:***@host``, whatever the password
  holds: a ``/``, an ``@`` or a space in it (a URL written without percent-encoding) hides up to
  the last ``@`` of the URL (up to the next ``@`` on the line when the password holds a space);
  masking a little too much is the safe error;
* ``scheme://token@host`` (userinfo without a colon: often a token) as ``scheme://***@host``,
  except for engine schemes (``postgresql``, ``postgres``, ``redis``, ``rediss``, their ``+…``
  forms, ``unix``), whose grammar reads it as a user name (``postgresql://app@db/app`` takes
  its password from ``.pgpass`` or ``PGPASSWORD``): it stays, and is never taken for a secret;
* ``name=value`` where the name says secret (``password``, ``sslpassword``, ``api_key``,
  ``key``, ``access_token``, ``client_secret``, ``sig``, ...), in a query string or a keyword
  DSN, as ``name=***``;
* a memstack API key ``msk_<id>_<secret>`` as ``msk_<id>_***``;
* ``Bearer <token>`` and ``Basic <credentials>`` as ``Bearer ***``;
* a provider API key by its well-known prefix (``sk-…``, ``sk-proj-…``, ``sk-ant-…``, ``ghp_…``,
  ``github_pat_…``, ``xoxb-…``, ``hf_…``, ``AIza…``, ``AKIA…``) as the prefix and ``***``;
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

_SCHEME: Final = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://")
_NOT_USER: Final = re.compile(r"[/?#@\s]")
_PORT: Final = re.compile(r"\d{1,5}(?:[/?#]|$)")
_URL_WINDOW: Final = 512
"""Longest userinfo looked for: a password longer than this is not a password."""
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
_PROVIDER_KEY: Final = re.compile(
    r"\b(sk-(?:proj-|ant-(?:api\d\d-)?|live-|test-|svcacct-)?|ghp_|gho_|ghs_|github_pat_|xox[abprs]-|hf_|glpat-|AIza|AKIA)"
    r"[A-Za-z0-9_\-]{12,}"
)
_SECRET_ENV: Final = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)

_registered: set[str] = set()
_lock = threading.Lock()
_env_names: tuple[int, tuple[str, ...]] = (-1, ())


def _new_lock_in_child() -> None:
    # After a fork, in the child: a parent thread that held the lock at the fork does not run here
    # to release it, and every later message would wait for it. The secrets stay: the child's
    # messages must mask them too.
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret: :func:`redact` masks it wherever it appears afterwards.

    Values shorter than :data:`MIN_SECRET_LENGTH` are ignored (see the module docstring).
    """
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value)


def register_url(url: str) -> None:
    """Remember the credentials inside ``url`` (its userinfo and secret query values) as secrets."""
    # A URL alone: its userinfo runs to its last '@', whatever the password holds (spaces too).
    found = _SCHEME.search(url)
    last = url.rfind("@")
    whole = [] if found is None or last < found.end() else [(found.group(), url[found.end() : last])]
    for scheme, info in whole + [(s, i) for s, i, _, _ in _userinfos(url)]:
        user, colon, password = info.partition(":")
        if not colon and _USER_SCHEMES.fullmatch(scheme):
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


def _userinfo_end(text: str, start: int) -> int:
    """Where the userinfo of the URL whose authority starts at ``start`` ends (its ``@``), or -1."""
    stop = min(len(text), start + _URL_WINDOW)
    for mark in ("\n", "://"):
        found = text.find(mark, start, stop)
        stop = stop if found == -1 else found
    token_end = next((i for i in range(start, stop) if text[i].isspace()), stop)
    at = text.rfind("@", start, token_end)
    colon = text.find(":", start, token_end if at == -1 else at)
    user_ok = colon != -1 and _NOT_USER.search(text, start, colon) is None
    if at != -1:
        # With a colon the rest up to the last '@' is a password, '/' or '@' in it or not; without
        # one, only a plain token (no path before the '@') is userinfo: /@user paths are not.
        return at if user_ok or _NOT_USER.search(text, start, at) is None else -1
    if user_ok and _PORT.match(text, colon + 1, token_end) is None:
        # A password holding a space: to the last '@' of the next word that holds one.
        first = text.find("@", token_end, stop)
        word_end = next((i for i in range(first, stop) if text[i].isspace()), stop)
        return first if first == -1 else text.rfind("@", first, word_end)
    return -1


def _userinfos(text: str) -> list[tuple[str, str, int, int]]:
    """Each URL's ``(scheme, userinfo, start, end)`` in ``text`` (the userinfo is text[start:end])."""
    found, at = [], 0
    for match in _SCHEME.finditer(text):
        if match.start() < at:
            continue
        end = _userinfo_end(text, match.end())
        if end != -1:
            found.append((match.group(), text[match.end() : end], match.end(), end))
            at = end
    return found


def _mask_urls(text: str) -> str:
    out, at = [], 0
    for scheme, info, start, end in _userinfos(text):
        user, colon, _ = info.partition(":")
        if colon:
            shown = f"{user}:{MASK}"
        elif _USER_SCHEMES.fullmatch(scheme):
            continue
        else:
            shown = MASK
        out += [text[at:start], shown]
        at = end
    return "".join(out) + text[at:] if out else text


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
    # Exact values first: a structural rule could cut a known password in two and leave a half.
    for secret in _known_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    # Each rule runs only where its mark is: most texts (log lines) have none.
    if "://" in text:
        text = _mask_urls(text)
    if "=" in text:
        text = _mask_pairs(text)
    if "msk_" in text:
        text = _API_KEY.sub(rf"\g<1>{MASK}", text)
    text = _PROVIDER_KEY.sub(rf"\g<1>{MASK}", text)
    folded = text.lower()
    if "bearer" in folded or "basic" in folded:
        text = _SCHEME_TOKEN.sub(rf"\g<1> {MASK}", text)
    return text


class RedactingFormatter(logging.Formatter):
    """A log formatter whose output (message and traceback alike) went through :func:`redact`."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
