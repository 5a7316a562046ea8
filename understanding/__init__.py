"""Understanding a turn: mention detection, candidate links and context fit over the
alias snapshot of :mod:`kg`.

Sits between ``kg`` (storage: the ontology, its alias snapshot and refresh) and
``dialogue`` (sessions, resolvers, the turn). Never imports dialogue, retrieval or api.
"""
