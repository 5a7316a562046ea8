from tests.unit.kg.conftest import snapshot  # noqa: F401  (shared fixture)
