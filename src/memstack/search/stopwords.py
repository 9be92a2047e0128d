"""English stop words of the ``default`` tokeniser.

A short list of function words (articles, pronouns, auxiliaries, prepositions, conjunctions) that
carry no topic of their own. Negations (``no``, ``not``, ``nor``) and words that often carry meaning in
agent memories (``like``, ``first``, ``last``) are kept on purpose: "does not like jazz" must still
match ``not`` and ``like``; for the same reason the stems of contracted negations (``don``, ``isn``,
``doesn`` from "don't", "isn't", "doesn't") are not stop words.
"""

from __future__ import annotations

__all__ = ["ENGLISH_STOP_WORDS"]

_WORDS = """
a an the
i me my myself we us our ours ourselves you your yours yourself yourselves
he him his himself she her hers herself it its itself they them their theirs themselves
this that these those who whom whose which what
am is are was were be been being have has had having do does did doing
will would shall should can could may might must
and but or if because as until while so than too very
of at by for with about against between into through during before after above below
to from up down in out on off over under again further then once
here there when where why how all any both each few more most other some such
only own same just also
s t d ll m o re ve y
"""

ENGLISH_STOP_WORDS: frozenset[str] = frozenset(_WORDS.split())
