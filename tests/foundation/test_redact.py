"""The one redaction rule (foundation.redact): credentials of every URL scheme, API keys, model keys."""

from __future__ import annotations

import logging
import secrets

import pytest

from _forked import held_by_a_thread, in_child
from _redis_servers import free_port
from memstack.engines import open_engine
from memstack.foundation.errors import EngineUnavailable, InvalidUrl
from memstack.foundation.redact import (
    MASK,
    RedactingFormatter,
    redact,
    redact_url,
    register_secret,
    register_url,
)


def _secret() -> str:
    return "S3cr3t" + secrets.token_hex(8)


@pytest.mark.parametrize(
    "template",
    [
        "redis://:{pw}@cache.internal:6379/0",
        "redis://default:{pw}@cache.internal:6379/0",
        "rediss://user:{pw}@[::1]:6380/2?ssl_cert_reqs=none",
        "redis+cluster://:{pw}@10.0.0.1:7000,10.0.0.2:7000",
        "rediss+cluster://app:{pw}@node-a:7000",
        "postgresql://app:{pw}@db.internal:5432/memstack?sslmode=require",
        "postgres://app:{pw}@db/memstack",
        "mysql+pymysql://root:{pw}@localhost/db",
        "https://{pw}@api.example.com/v1",  # a lone userinfo is a token
        "https://api.example.com/v1/chat?api-key={pw}",
        "https://api.example.com/v1?key={pw}&model=m",
        "postgresql://app@db/memstack?password={pw}",
        "postgresql://db/memstack?sslpassword={pw}&sslmode=verify-full",
        "redis://:p%40ss{pw}@host/0",  # percent-encoded characters in the password
        "redis://:p@ss{pw}@host/0",  # an unencoded '@' in the password: urllib splits at the last one
    ],
)
def test_every_scheme_loses_its_credentials(template: str) -> None:
    pw = _secret()
    url = template.format(pw=pw)
    shown = redact_url(url)
    assert pw not in shown and MASK in shown
    # The rest stays readable: the host is still named.
    assert any(
        host in shown
        for host in (
            "cache.internal",
            "::1",
            "10.0.0.1",
            "node-a",
            "db",
            "api.example.com",
            "localhost",
            "host",
        )
    )
    # Inside free text (an error message, a repr, a log line) the same.
    for text in (f"engine {url!r} is down", f"<RedisEngine {url!r}>", f"({url})", f"url={url} retry"):
        assert pw not in redact(text), text


def test_what_is_not_a_credential_stays() -> None:
    for text in (
        "sqlite:////var/lib/memstack/memstack.db",
        "memory://",
        "redis://cache:6379/0?wait_replicas=1&wait_ms=50",
        "session 's1' has 3 keys; tokens=5, monkey=2",
        "mail bob@example.com about redis://host:1",
    ):
        assert redact(text) == text


def test_user_names_stay_and_passwords_go() -> None:
    assert redact_url("postgresql://app:pw@db/x") == "postgresql://app:***@db/x"
    assert redact_url("redis://:pw@h:1/0") == "redis://:***@h:1/0"
    assert redact_url("https://tok@h/v1") == "https://***@h/v1"


def test_an_engine_url_with_a_user_alone_keeps_it_and_registers_nothing() -> None:
    # libpq and redis-py read userinfo without a colon as a user name (the password comes from
    # .pgpass or PGPASSWORD): it stays, and opening such an engine masks no later "postgres".
    for url in ("postgresql://postgres@127.0.0.1:5432/postgres", "redis+cluster://alice@h:7000"):
        assert redact_url(url) == url
        register_url(url)
    assert redact("postgres and alice stay readable") == "postgres and alice stay readable"
    assert redact_url("postgres://app:pw@db/x") == "postgres://app:***@db/x"


def test_keyword_dsn_and_api_keys_and_bearer_tokens() -> None:
    pw = _secret()
    assert pw not in redact(f"host=db user=app password={pw} dbname=m")
    assert pw not in redact(f"host=db password='{pw} with space' dbname=m")
    token = f"msk_0123456789ab_{secrets.token_urlsafe(32)}"
    shown = redact(f"key {token} refused")
    assert shown == "key msk_0123456789ab_*** refused"
    assert redact(f"Authorization: Bearer {pw}") == "Authorization: Bearer ***"
    assert redact(f"Authorization: Basic {pw}") == "Authorization: Basic ***"


def test_secret_environment_values_are_masked_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    chat, embedder, plain = _secret(), _secret(), _secret()
    monkeypatch.setenv("MEMSTACK_CHAT_API_KEY", chat)
    monkeypatch.setenv("OPENAI_API_KEY", embedder)
    monkeypatch.setenv("MEMSTACK_SOMETHING", plain)  # not a secret's name: left alone
    text = f"upstream said: invalid key {chat} (also {embedder}); setting {plain}"
    shown = redact(text)
    assert chat not in shown and embedder not in shown and plain in shown


def test_registered_secrets_and_short_values() -> None:
    long_one = _secret()
    register_secret(long_one)
    register_secret("ab")  # too short to search for as free text
    assert redact(f"x{long_one}y") == f"x{MASK}y"
    assert redact("a tab") == "a tab"


def test_an_opened_engine_url_password_is_masked_in_any_later_text(tmp_path: object) -> None:
    pw = _secret()
    port = free_port()  # nothing listens: the engine cannot connect
    with pytest.raises(EngineUnavailable) as caught:
        open_engine(f"redis://:{pw}@127.0.0.1:{port}/0")
    assert pw not in str(caught.value)
    assert "127.0.0.1" in str(caught.value)
    # Registered when the engine was constructed: even a bare mention is masked from now on.
    assert redact(f"AUTH {pw}") == f"AUTH {MASK}"


def test_invalid_url_messages_name_the_url_without_its_password() -> None:
    pw = _secret()
    for url in (
        f"redis://:{pw}@host/0?nope=1",
        f"redis://:{pw}@h1:1,h2:2/0",
        f"redis+cluster://:{pw}@h:1/3",
        f"redis://:{pw}@host:99999/0",
        f"nosuch://:{pw}@host/0",
    ):
        with pytest.raises(InvalidUrl) as caught:
            open_engine(url)
        assert pw not in str(caught.value), url
        assert "engine URL" in str(caught.value)


def test_engine_repr_hides_the_password() -> None:
    pw = _secret()
    from memstack.engines.memory import MemoryEngine

    engine = MemoryEngine(f"memory://user:{pw}@x")
    try:
        assert pw not in repr(engine) and MASK in repr(engine)
    finally:
        engine.close()


def test_the_log_formatter_redacts_messages_and_tracebacks() -> None:
    pw = _secret()
    formatter = RedactingFormatter("%(name)s %(message)s")
    try:
        raise RuntimeError(f"cannot reach redis://:{pw}@h/0")
    except RuntimeError:
        import sys

        record = logging.LogRecord(
            "memstack", logging.ERROR, __file__, 1, "at %s", ("redis://:" + pw + "@h/0",), sys.exc_info()
        )
    out = formatter.format(record)
    assert pw not in out and "Traceback" in out and "RuntimeError" in out


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("redis://:pa/ss@host:6379/0", "pa/ss"),
        ("redis://u:p a ss@host:6379 is down", "p a ss"),
        ("postgresql://app:with space@and-at@db/app", "and-at"),
        ("invalid key sk-proj-Abc123Def456Ghi789Jkl0 given", "Abc123Def456"),
        ("tried sk-ant-api03-ZZZZyyyy-xxxx_wwww1234", "ZZZZyyyy"),
        ("token ghp_abcdefghijklmnop0123456789", "abcdefghijklmnop"),
    ],
)
def test_credentials_whatever_characters_they_hold(text: str, hidden: str) -> None:
    assert hidden not in redact(text) and MASK in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "engine 'redis://localhost:6379/0' is down; mail ops@example.com",
        "see https://medium.com/@user and https://h:8080/a then x@y",
        "postgresql://app@db/app",
    ],
)
def test_text_without_credentials_is_kept(text: str) -> None:
    assert redact(text) == text


def test_a_registered_url_password_is_hidden_whole_even_with_at_slash_and_space() -> None:
    register_url("postgresql://app:q@z/w v x@db:5432/app")
    assert "q@z/w v x" not in redact("auth failed for password q@z/w v x")
    assert redact("postgresql://app:q@z/w v x@db:5432/app") == "postgresql://app:***@db:5432/app"


def test_a_forked_child_registers_and_masks_secrets_though_a_parent_thread_held_the_lock() -> None:
    from memstack.foundation import redact as module

    before, after = _secret(), _secret()
    register_secret(before)

    def child() -> bool:
        register_secret(after)
        return redact(f"a {before} b {after}") == f"a {MASK} b {MASK}"  # the parent's secrets too

    with held_by_a_thread(module._lock):
        assert in_child(child, deadline=30)  # stuck on the parent's lock: killed, False
