"""Language: text normalization and the cue vocabularies, Chinese and English.

- :mod:`common.language.normalize`: when two strings name the same thing
  (width, case, punctuation, traditional → simplified), with offsets back to
  the original text, and which language a text is in.
- :mod:`common.language.zh`, :mod:`common.language.en`: each language's cue
  words and patterns (pronouns, ordinals, negation, time, ellipsis, switch,
  correction, revisit, both/neither, stop words…) and the words the dialogue
  writes in it, as data. One place per language.
- :mod:`common.language.cues`: those compiled once, for every module that reads
  or writes a user's words.
"""
