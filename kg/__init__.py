"""The ontology: Neo4j store, alias snapshot, normalization, mention detection, linking.

Never imports fastapi or pymilvus.
"""
