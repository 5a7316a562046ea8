"""Every Cypher statement Referent runs, in one place, with ``$parameters`` only.

No statement is ever built by pasting text: ids, names, aliases and kb names
travel as parameters. Relation types from the ontology file are stored as a
property of one relationship type (``REL {type: ...}``) because Cypher cannot
take a relationship type as a parameter.
"""

SCHEMA = (
    "CREATE CONSTRAINT referent_kb_id IF NOT EXISTS "
    "FOR (k:KnowledgeBase) REQUIRE k.id IS UNIQUE",
    "CREATE CONSTRAINT referent_entity_key IF NOT EXISTS "
    "FOR (e:Entity) REQUIRE (e.kb, e.id) IS UNIQUE",
    "CREATE CONSTRAINT referent_alias_key IF NOT EXISTS "
    "FOR (a:Alias) REQUIRE (a.kb, a.text) IS UNIQUE",
    "CREATE CONSTRAINT referent_type_key IF NOT EXISTS "
    "FOR (t:EntityType) REQUIRE (t.kb, t.name) IS UNIQUE",
    "CREATE INDEX referent_alias_norm IF NOT EXISTS FOR (a:Alias) ON (a.kb, a.norm)",
)

KB_VERSION = "MATCH (k:KnowledgeBase {id: $kb}) RETURN k.alias_version AS version"

KB_LIST = "MATCH (k:KnowledgeBase) RETURN k.id AS kb ORDER BY kb"

KB_BUMP_VERSION = """
MERGE (k:KnowledgeBase {id: $kb})
SET k.alias_version = coalesce(k.alias_version, 0) + 1, k.updated_at = datetime()
RETURN k.alias_version AS version
"""

UPSERT_TYPES = """
UNWIND $rows AS r
MERGE (t:EntityType {kb: $kb, name: r.name})
SET t.attributes = r.attributes, t.parent = r.parent
"""

UPSERT_ENTITIES = """
UNWIND $rows AS r
MERGE (e:Entity {kb: $kb, id: r.id})
SET e.name = r.name, e.type = r.type, e.description = r.description,
    e.parent = r.parent, e.attributes_json = r.attributes_json
"""

DETACH_ALIASES = """
MATCH (a:Alias {kb: $kb})-[n:NAMES]->(e:Entity {kb: $kb})
WHERE e.id IN $ids
DELETE n
"""

LINK_ALIASES = """
UNWIND $rows AS r
MERGE (a:Alias {kb: $kb, text: r.text})
ON CREATE SET a.norm = r.norm
WITH a, r
MATCH (e:Entity {kb: $kb, id: r.id})
MERGE (a)-[n:NAMES]->(e)
SET n.pos = r.pos
"""

DELETE_ORPHAN_ALIASES = """
MATCH (a:Alias {kb: $kb})
WHERE NOT (a)-[:NAMES]->(:Entity)
DELETE a
"""

UPSERT_RELATIONS = """
UNWIND $rows AS r
MATCH (a:Entity {kb: $kb, id: r.from}), (b:Entity {kb: $kb, id: r.to})
MERGE (a)-[:REL {type: r.type}]->(b)
"""

UPSERT_CONFUSABLES = """
UNWIND $rows AS r
MATCH (a:Entity {kb: $kb, id: r.a}), (b:Entity {kb: $kb, id: r.b})
MERGE (a)-[c:CONFUSABLE]-(b)
SET c.note = r.note
"""

READ_TYPES = """
MATCH (t:EntityType {kb: $kb})
RETURN t.name AS name, t.attributes AS attributes, t.parent AS parent
"""

READ_ENTITIES = """
MATCH (e:Entity {kb: $kb})
OPTIONAL MATCH (a:Alias {kb: $kb})-[n:NAMES]->(e)
WITH e, a, n ORDER BY n.pos
WITH e, collect(a.text) AS aliases
RETURN e.id AS id, e.name AS name, e.type AS type, e.description AS description,
       e.parent AS parent, e.attributes_json AS attributes_json, aliases
"""

READ_RELATIONS = """
MATCH (a:Entity {kb: $kb})-[r:REL]->(b:Entity {kb: $kb})
RETURN a.id AS from, r.type AS type, b.id AS to
"""

READ_CONFUSABLES = """
MATCH (a:Entity {kb: $kb})-[c:CONFUSABLE]->(b:Entity {kb: $kb})
RETURN a.id AS a, b.id AS b, c.note AS note
"""

READ_ENTITY_PARENTS = """
MATCH (e:Entity {kb: $kb})
RETURN e.id AS id, e.parent AS parent
"""

READ_ALIAS_TABLE = """
MATCH (a:Alias {kb: $kb})-[:NAMES]->(e:Entity {kb: $kb})
RETURN a.norm AS norm, a.text AS text, e.id AS id
"""

DELETE_KB = """
MATCH (n) WHERE n.kb = $kb
DETACH DELETE n
"""

DELETE_KB_NODE = "MATCH (k:KnowledgeBase {id: $kb}) DETACH DELETE k"
