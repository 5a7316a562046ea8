# The small ontology of the kg tests: the same entities are detected and linked here.
from tests.unit.kg.conftest import ONTOLOGY, snapshot  # noqa: F401
