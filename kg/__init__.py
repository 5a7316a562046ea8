"""The ontology: Neo4j store, the alias snapshot and its refresh.

Mention detection and linking over the snapshot live in ``understanding``.
Never imports fastapi or pymilvus.
"""
