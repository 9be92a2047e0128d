"""The foundation: errors, clock, limits, redaction, time formats, JSON text, closing and the keyspace."""
