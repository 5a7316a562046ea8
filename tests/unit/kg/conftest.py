import pytest

from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology

ONTOLOGY = """
{"kind": "type", "name": "Product", "attributes": ["价格", "申请流程", "price"], "parent": null}
{"kind": "type", "name": "SalesRegion", "attributes": ["销售额", "增长率"], "parent": null}
{"kind": "type", "name": "Insurance", "attributes": ["保障范围", "等待期"], "parent": null}
{"kind": "entity", "id": "prod.a", "name": "A产品线", "type": "Product", "aliases": ["A系列产品"]}
{"kind": "entity", "id": "prod.a.personal", "name": "A产品（个人版）", "type": "Product", "aliases": ["A产品个人版", "A产品"], "description": "面向个人", "parent": "prod.a"}
{"kind": "entity", "id": "prod.a.enterprise", "name": "A产品（企业版）", "type": "Product", "aliases": ["A产品企业版", "A产品"], "description": "面向企业", "parent": "prod.a"}
{"kind": "entity", "id": "region.east", "name": "华东区", "type": "SalesRegion", "aliases": ["华东"]}
{"kind": "entity", "id": "region.south", "name": "华南区", "type": "SalesRegion", "aliases": ["华南"]}
{"kind": "entity", "id": "ins.accident", "name": "意外险", "type": "Insurance", "aliases": ["accident insurance"]}
{"kind": "entity", "id": "ins.accident.plus", "name": "综合意外险", "type": "Insurance"}
{"kind": "entity", "id": "en.ai", "name": "AI", "type": "Product"}
{"kind": "confusable", "a": "ins.accident", "b": "ins.accident.plus", "note": "names overlap"}
"""


@pytest.fixture(scope="session")
def snapshot() -> AliasSnapshot:
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines()))
