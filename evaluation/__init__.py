"""Evaluation: parsing the test suites, replaying them through the turn engine and
scoring the results, and refitting the clarify model from replays. A tool, not part of
the server's turn path: it sits above dialogue and is imported only by the CLI, the
benchmarks and the tests."""
