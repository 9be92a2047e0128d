"""Moving data in and out: dumps of the keyspace and adopting untenanted data."""
