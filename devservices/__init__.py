"""Development services: the local Neo4j and Milvus Lite server managers used for
development, demos and tests. Not part of a production deployment; imports only common."""
