"""The keyspace: every family of records every tier writes, primary and derived, in one registry.

A :class:`Family` says who owns its records, how their keys are spelled (a pattern with its scope
part), what they are for and what a forget does to them (:data:`~.family.RULES`). Tiers build
their keys from the families (their layout modules); :mod:`memstack.services.lifecycle` forgets and
verifies by them; :func:`family_of` reads any stored key back to its family.

This package sits at the bottom of the house with :mod:`memstack.foundation.errors` and
:mod:`memstack.foundation.limits`, the only modules it imports: engines and tiers build on it.
"""

from __future__ import annotations

from .classify import family_named, family_of
from .families import FAMILIES, STEMS
from .family import KINDS, ROLES, RULES, Family, Stem
from .pattern import Pattern, Tag, no_tag
from .subjects import OBJECTS, SUBJECT_RULE, check_subject, label_of, labelled, member, register, subject_key
from .tenants import DEFAULT_TENANT, TENANT_RULE, split_tenant, tenant_prefix
from .under import KeyUnder
from .windows import window_scope, window_session

__all__ = [
    "DEFAULT_TENANT",
    "FAMILIES",
    "KINDS",
    "OBJECTS",
    "ROLES",
    "RULES",
    "STEMS",
    "SUBJECT_RULE",
    "TENANT_RULE",
    "Family",
    "KeyUnder",
    "Pattern",
    "Stem",
    "Tag",
    "check_subject",
    "family_named",
    "family_of",
    "label_of",
    "labelled",
    "member",
    "no_tag",
    "register",
    "split_tenant",
    "subject_key",
    "tenant_prefix",
    "window_scope",
    "window_session",
]
