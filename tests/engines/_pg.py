"""Helpers of the PostgreSQL engine's own tests that reach the server beside the engine."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg


def admin(url: str, sql: str, params: tuple[object, ...] | None = None) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def port_of(url: str) -> int:
    return int(urlsplit(url).port or 5432)


def via(url: str, port: int) -> str:
    """``url`` with its port replaced (a relay in front of the server)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit(":", 1)[0] if parts.port else parts.netloc
    return parts._replace(netloc=f"{netloc}:{port}").geturl()
