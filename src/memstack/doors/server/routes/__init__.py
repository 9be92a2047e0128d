"""One router per tier; each module exposes ``router`` and is listed in ``app.ROUTERS``."""
