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
    "CREATE INDEX referent_entity_parent IF NOT EXISTS FOR (e:Entity) ON (e.kb, e.parent)",
    "CREATE INDEX referent_entity_type IF NOT EXISTS FOR (e:Entity) ON (e.kb, e.type)",
    "CREATE CONSTRAINT referent_audit_key IF NOT EXISTS "
    "FOR (x:AuditEntry) REQUIRE (x.kb, x.seq) IS UNIQUE",
    "CREATE INDEX referent_audit_version IF NOT EXISTS FOR (x:AuditEntry) ON (x.kb, x.version)",
    "CREATE CONSTRAINT referent_clarification_key IF NOT EXISTS "
    "FOR (c:Clarification) REQUIRE (c.kb, c.session, c.turn) IS UNIQUE",
    "CREATE INDEX referent_clarification_asked IF NOT EXISTS "
    "FOR (c:Clarification) ON (c.kb, c.asked_at)",
    "CREATE CONSTRAINT referent_clarify_params IF NOT EXISTS "
    "FOR (p:ClarifyParams) REQUIRE p.kb IS UNIQUE",
    "CREATE CONSTRAINT referent_api_key_id IF NOT EXISTS FOR (k:ApiKey) REQUIRE k.id IS UNIQUE",
    "CREATE CONSTRAINT referent_api_key_hash IF NOT EXISTS "
    "FOR (k:ApiKey) REQUIRE k.hash IS UNIQUE",
)

# A write's deadline, on Neo4j's own clock: read at the start of the transaction, checked
# right before it commits, so a write held up by a frozen server rolls back when it wakes.
SERVER_TIME = "RETURN timestamp() AS now"
BEFORE_DEADLINE = "RETURN timestamp() <= $deadline AS ok"

KB_VERSION = "MATCH (k:KnowledgeBase {id: $kb}) RETURN k.alias_version AS version"

KB_STATE = """
MATCH (k:KnowledgeBase {id: $kb})
RETURN k.alias_version AS version, coalesce(k.uid, '') AS uid, k.normalization AS normalization,
       k.created_at AS created_at
"""

KB_COUNTS = """
MATCH (k:KnowledgeBase {id: $kb})
RETURN COUNT { MATCH (e:Entity {kb: $kb}) } AS entities,
       COUNT { MATCH (a:Alias {kb: $kb}) } AS aliases,
       COUNT { MATCH (t:EntityType {kb: $kb}) } AS types
"""

# Taking the kb node's write lock first serialises every admin write of one kb,
# so a check made inside the transaction (alias clash, parent cycle) still
# holds when it commits.
KB_LOCK = """
MATCH (k:KnowledgeBase {id: $kb})
SET k.last_write_at = datetime()
RETURN k.alias_version AS version, k.normalization AS normalization
"""

KB_CREATE = """
MERGE (k:KnowledgeBase {id: $kb})
ON CREATE SET k.alias_version = 0, k.uid = randomUUID(), k.created_at = datetime(),
              k.normalization = $normalization, k.created = true
ON MATCH SET k.created = false
WITH k, k.created AS created
REMOVE k.created
RETURN created
"""

KB_SET_NORMALIZATION = "MATCH (k:KnowledgeBase {id: $kb}) SET k.normalization = $normalization"

KB_NEXT_AUDIT = """
MATCH (k:KnowledgeBase {id: $kb})
SET k.alias_version = coalesce(k.alias_version, 0) + 1,
    k.audit_seq = coalesce(k.audit_seq, 0) + 1, k.updated_at = datetime()
RETURN k.alias_version AS version, k.audit_seq AS seq
"""

AUDIT_CREATE = """
MATCH (k:KnowledgeBase {id: $kb})
CREATE (x:AuditEntry {kb: $kb, seq: $seq, at: datetime(), who: $who, action: $action,
                      target: $target, before: $before, after: $after, version: $version,
                      entities: $entities})
"""

AUDIT_QUERY = """
MATCH (x:AuditEntry {kb: $kb})
WHERE ($who IS NULL OR x.who = $who)
  AND ($action IS NULL OR x.action = $action OR x.action STARTS WITH $action_prefix)
  AND ($target IS NULL OR x.target = $target OR $target IN x.entities)
  AND ($since IS NULL OR x.at >= datetime($since))
  AND ($until IS NULL OR x.at < datetime($until))
  AND ($before_seq IS NULL OR x.seq < $before_seq)
RETURN x.seq AS seq, toString(x.at) AS at, x.who AS who, x.action AS action, x.target AS target,
       x.before AS before, x.after AS after, x.version AS version
ORDER BY x.seq DESC
LIMIT $limit
"""

KB_LIST = "MATCH (k:KnowledgeBase) RETURN k.id AS kb ORDER BY kb"

KB_LOCK_OR_CREATE = """
MERGE (k:KnowledgeBase {id: $kb})
ON CREATE SET k.alias_version = 0, k.uid = randomUUID(), k.created_at = datetime()
SET k.last_write_at = datetime()
RETURN k.alias_version AS version, k.normalization AS normalization
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
UNWIND $texts AS text
MATCH (a:Alias {kb: $kb, text: text})
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

# Entities in batches of 1,000 rows [id, name, type, description, parent, attributes_json,
# aliases], aliases being [text, key] pairs in their stored order (the name is one of
# them). Few large records cost the driver far less than one record per entity: a
# million aliases load in half the time.
READ_ENTITIES = """
MATCH (e:Entity {kb: $kb})
WITH [e.id, e.name, e.type, e.description, e.parent, e.attributes_json,
      COLLECT { MATCH (a:Alias)-[n:NAMES]->(e) RETURN [a.text, a.norm] ORDER BY n.pos }] AS row
WITH collect(row) AS rows
UNWIND range(0, size(rows) - 1, 1000) AS start
RETURN rows[start..start + 1000] AS batch
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

READ_ENTITY = """
MATCH (e:Entity {kb: $kb, id: $id})
OPTIONAL MATCH (a:Alias {kb: $kb})-[n:NAMES]->(e)
WITH e, a, n ORDER BY n.pos
WITH e, collect(a.text) AS aliases
RETURN e.id AS id, e.name AS name, e.type AS type, e.description AS description,
       e.parent AS parent, e.attributes_json AS attributes_json, aliases
"""

READ_ENTITY_REFERENCES = """
MATCH (e:Entity {kb: $kb, id: $id})
RETURN COLLECT { MATCH (c:Entity {kb: $kb, parent: $id}) RETURN c.id ORDER BY c.id } AS children,
       COLLECT { MATCH (e)-[r:REL]->(b:Entity) RETURN [r.type, b.id] ORDER BY r.type, b.id }
           AS relations_out,
       COLLECT { MATCH (b:Entity)-[r:REL]->(e) RETURN [b.id, r.type] ORDER BY b.id, r.type }
           AS relations_in,
       COLLECT { MATCH (e)-[c:CONFUSABLE]-(b:Entity) RETURN [b.id, coalesce(c.note, '')]
                 ORDER BY b.id } AS confusables
"""

READ_PARENT = "MATCH (e:Entity {kb: $kb, id: $id}) RETURN e.parent AS parent"

READ_EXISTING_IDS = """
UNWIND $ids AS id
MATCH (e:Entity {kb: $kb, id: id})
RETURN e.id AS id
"""

# Entities named by aliases whose key is one of $norms (the clash check).
ALIAS_OWNERS = """
UNWIND $norms AS norm
MATCH (a:Alias {kb: $kb, norm: norm})-[:NAMES]->(e:Entity {kb: $kb})
RETURN DISTINCT norm, e.id AS id, e.name AS name
"""

NEXT_ALIAS_POS = """
MATCH (e:Entity {kb: $kb, id: $id})
OPTIONAL MATCH (:Alias {kb: $kb})-[n:NAMES]->(e)
RETURN coalesce(max(n.pos), -1) + 1 AS pos
"""

UNLINK_ALIAS = """
MATCH (a:Alias {kb: $kb, text: $text})-[n:NAMES]->(e:Entity {kb: $kb, id: $id})
DELETE n
"""

CREATE_ENTITY = """
CREATE (e:Entity {kb: $kb, id: $row.id, name: $row.name, type: $row.type,
                  description: $row.description, parent: $row.parent,
                  attributes_json: $row.attributes_json})
"""

UPDATE_ENTITY = """
MATCH (e:Entity {kb: $kb, id: $row.id})
SET e.name = $row.name, e.type = $row.type, e.description = $row.description,
    e.parent = $row.parent, e.attributes_json = $row.attributes_json
"""

DELETE_ENTITY = "MATCH (e:Entity {kb: $kb, id: $id}) DETACH DELETE e"

CLEAR_PARENT = "MATCH (c:Entity {kb: $kb, parent: $id}) SET c.parent = null"

RELATION_EXISTS = """
MATCH (:Entity {kb: $kb, id: $from})-[r:REL {type: $type}]->(:Entity {kb: $kb, id: $to})
RETURN count(r) > 0 AS found
"""

DELETE_RELATION = """
MATCH (:Entity {kb: $kb, id: $from})-[r:REL {type: $type}]->(:Entity {kb: $kb, id: $to})
DELETE r
"""

READ_CONFUSABLE = """
MATCH (:Entity {kb: $kb, id: $a})-[c:CONFUSABLE]-(:Entity {kb: $kb, id: $b})
RETURN coalesce(c.note, '') AS note
LIMIT 1
"""

DELETE_CONFUSABLE = """
MATCH (:Entity {kb: $kb, id: $a})-[c:CONFUSABLE]-(:Entity {kb: $kb, id: $b})
DELETE c
"""

READ_TYPE = """
MATCH (t:EntityType {kb: $kb, name: $name})
RETURN t.name AS name, t.attributes AS attributes, t.parent AS parent
"""

READ_TYPE_PARENTS = "MATCH (t:EntityType {kb: $kb}) RETURN t.name AS name, t.parent AS parent"

TYPE_REFERENCES = """
RETURN COLLECT { MATCH (e:Entity {kb: $kb, type: $name}) RETURN e.id ORDER BY e.id LIMIT 50 }
           AS entities,
       COUNT { MATCH (e:Entity {kb: $kb, type: $name}) } AS entity_count,
       COLLECT { MATCH (t:EntityType {kb: $kb, parent: $name}) RETURN t.name ORDER BY t.name }
           AS child_types
"""

DELETE_TYPE = "MATCH (t:EntityType {kb: $kb, name: $name}) DELETE t"

READ_ALIAS_TEXTS = "MATCH (a:Alias {kb: $kb}) RETURN a.text AS text, a.norm AS norm"

SET_ALIAS_NORMS = """
UNWIND $rows AS r
MATCH (a:Alias {kb: $kb, text: r.text})
SET a.norm = r.norm
"""

# What changed after a version: the audit entries say which entities each write touched.
AUDIT_SINCE = """
MATCH (x:AuditEntry {kb: $kb})
WHERE x.version > $since
RETURN x.version AS version, x.action AS action, x.entities AS entities
ORDER BY x.version
LIMIT $limit
"""

READ_ENTITIES_BY_IDS = """
UNWIND $ids AS id
MATCH (e:Entity {kb: $kb, id: id})
RETURN e.id AS id, e.name AS name, e.type AS type, e.description AS description,
       e.parent AS parent, e.attributes_json AS attributes_json,
       COLLECT { MATCH (a:Alias)-[n:NAMES]->(e) RETURN [a.text, a.norm] ORDER BY n.pos } AS aliases,
       COLLECT { MATCH (e)-[:CONFUSABLE]-(b:Entity) RETURN DISTINCT b.id } AS confusables
"""

READ_ALIAS_TABLE = """
MATCH (a:Alias {kb: $kb})-[:NAMES]->(e:Entity {kb: $kb})
RETURN a.norm AS norm, a.text AS text, e.id AS id
"""

# Run outside an explicit transaction (CALL ... IN TRANSACTIONS), so that deleting a
# kb of a million aliases does not need a million-node transaction.
DELETE_KB_LABELLED = tuple(
    f"MATCH (n:{label} {{kb: $kb}}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 10000 ROWS"
    for label in ("AuditEntry", "Alias", "Entity", "EntityType", "Clarification", "ClarifyParams"))

DELETE_KB_NODE = "MATCH (k:KnowledgeBase {id: $kb}) DETACH DELETE k"


# -- clarification analytics (kg.clarification_log) ------------------------------------------
# One (:Clarification {kb, session, turn}) per question asked; the answer is set on the same
# node by the next turn of the session. Either write may arrive first (two API instances):
# an answer that finds no question yet leaves a node the question then fills in.

CLARIFICATION_ASKED = """
MATCH (:KnowledgeBase {id: $kb})
MERGE (c:Clarification {kb: $kb, session: $session, turn: $turn})
WITH c, c.asked_at IS NULL AND c.answer IS NOT NULL AS answered_first
SET c += $asked,
    c.answer = CASE WHEN answered_first THEN c.answer END,
    c.chosen = CASE WHEN answered_first THEN c.chosen END,
    c.how = CASE WHEN answered_first THEN c.how END,
    c.answered_at = CASE WHEN answered_first THEN c.answered_at END
"""

CLARIFICATION_ANSWERED = """
MATCH (:KnowledgeBase {id: $kb})
MERGE (c:Clarification {kb: $kb, session: $session, turn: $turn})
WITH c WHERE c.answer IS NULL
SET c.answer = $answer, c.chosen = $chosen, c.how = $how, c.answered_at = $at
"""

CLARIFICATION_COUNTS = """
MATCH (c:Clarification {kb: $kb})
WHERE c.asked_at IS NOT NULL AND ($since IS NULL OR c.asked_at >= $since)
RETURN c.kind AS kind, c.alias AS alias, c.candidates AS candidates,
       coalesce(c.answer, 'open') AS answer, coalesce(c.chosen, []) AS chosen, count(*) AS n,
       collect(DISTINCT c.mention)[..5] AS mentions, collect(DISTINCT c.match) AS matches,
       max(c.asked_at) AS last_asked
"""

CLARIFICATION_RECENT = """
MATCH (c:Clarification {kb: $kb})
WHERE c.asked_at IS NOT NULL AND ($since IS NULL OR c.asked_at >= $since)
RETURN c.asked_at AS asked_at, c.kind AS kind, c.mention AS mention, c.alias AS alias,
       c.match AS match, c.candidates AS candidates, coalesce(c.answer, 'open') AS answer,
       coalesce(c.chosen, []) AS chosen, c.how AS how
ORDER BY c.asked_at DESC
LIMIT $limit
"""

CLARIFICATION_PRUNE = """
MATCH (c:Clarification)
WHERE coalesce(c.asked_at, c.answered_at) < $before
WITH c LIMIT $limit
DETACH DELETE c
RETURN count(*) AS deleted
"""


# -- the clarify-or-resolve decision (dialogue.policy.clarify_model) --------------------------------
# The decisions that asked, with the features and score the turn recorded, and how users
# answered them: the evidence a kb's recalibration is fitted on.
CLARIFICATION_DECISIONS = """
MATCH (c:Clarification {kb: $kb})
WHERE c.asked_at IS NOT NULL AND c.decision IS NOT NULL AND c.answer IS NOT NULL
RETURN c.decision AS decision, c.answer AS answer, coalesce(c.chosen, []) AS chosen
ORDER BY c.asked_at
LIMIT $limit
"""

# One (:ClarifyParams {kb}) per recalibrated kb: its parameter file and the report of the fit.
CLARIFY_PARAMS_SAVE = """
MATCH (:KnowledgeBase {id: $kb})
MERGE (p:ClarifyParams {kb: $kb})
SET p.params = $params, p.report = $report, p.fitted_at = datetime()
RETURN p.kb AS kb
"""

CLARIFY_PARAMS_GET = """
MATCH (p:ClarifyParams {kb: $kb})
RETURN p.params AS params, p.report AS report, p.fitted_at AS fitted_at
"""

CLARIFY_PARAMS_DELETE = """
MATCH (p:ClarifyParams {kb: $kb})
DETACH DELETE p
RETURN count(*) AS deleted
"""


# -- API keys (deployment-wide, not per kb) ------------------------------------------------
# One (:KeyRing {id: 'keys'}) node holds the version every create and revoke bumps; each
# API process reads it about once a second and reloads the keys when it moved. Writes take
# its lock first (MERGE + SET), so the name check below holds when the write commits.

KEYS_LOCK = """
MERGE (r:KeyRing {id: 'keys'})
SET r.version = coalesce(r.version, 0) + 1
RETURN r.version AS version
"""

KEYS_VERSION = "MATCH (r:KeyRing {id: 'keys'}) RETURN r.version AS version"

KEY_ACTIVE_NAME = """
MATCH (k:ApiKey {name: $name}) WHERE k.revoked_at IS NULL RETURN k.id AS id LIMIT 1
"""

_KEY_FIELDS = """
RETURN k.id AS id, k.name AS name, k.hash AS hash, k.scopes_json AS scopes_json,
       toString(k.created_at) AS created_at, k.created_by AS created_by,
       toString(k.revoked_at) AS revoked_at, k.revoked_by AS revoked_by
"""

KEY_CREATE = """
CREATE (k:ApiKey {id: $id, name: $name, hash: $hash, scopes_json: $scopes_json,
                  created_at: datetime(), created_by: $by})
""" + _KEY_FIELDS

KEYS_LIST = """
MATCH (k:ApiKey) WHERE $revoked OR k.revoked_at IS NULL
WITH k ORDER BY k.created_at, k.id
""" + _KEY_FIELDS

KEY_REVOKE = """
MATCH (k:ApiKey {id: $id}) WHERE k.revoked_at IS NULL
SET k.revoked_at = datetime(), k.revoked_by = $by
""" + _KEY_FIELDS
